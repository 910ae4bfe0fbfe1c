"""Refusals that change nothing, guards condition by condition, and question ids in a body (issue 35).

spec.md, API conventions: "the rejected request changes nothing"; Responding: "An invalid
submission gets 422 ... Nothing is stored"; Questions: "An invalid setting gets 422 naming it";
Lifecycle: publishing needs "a draft with at least one question"; Responding: "A key that is not
the id of one of the form's questions is invalid". Every body with several fields is sent with
one field bad at a time (each position, the others valid), then read back from outside and
from the statement log (nothing written).
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, unchanged

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("validation")]

# spec.md Questions: "min > max names min or max (either or both), min_selections > max_selections names either or both"
CROSSED = {"min": {"max"}, "max": {"min"}, "min_selections": {"max_selections"}, "max_selections": {"min_selections"}}

FORM_CASES = one_invalid_field(
    {"title": "Team lunch", "response_limit": 10},
    {"title": ["", "   ", "x" * 201, 7], "response_limit": [0, 100001, 2.5, "10", True]},
)

QUESTION_CASES = [
    *one_invalid_field({"type": "short_text", "title": "Name", "required": True, "max_length": 20},
                       {"type": "essay", "title": ["", "x" * 501], "required": ["yes", 1], "max_length": [0, 5001, 2.5, "20"]}),
    *one_invalid_field({"type": "number", "title": "Guests", "required": False, "min": 0, "max": 5},
                       {"title": " ", "required": "no", "min": ["low", True, 6], "max": ["high", -1]}),
    *one_invalid_field({"type": "single_choice", "title": "Course", "required": True, "options": ["Fish", "Pasta"]},
                       {"title": "", "required": 0, "options": [["Fish"], ["Fish", "Fish"], ["Fish", " "], "Fish"]}),
    *one_invalid_field({"type": "multiple_choice", "title": "Extras", "required": False, "options": ["Bread", "Wine", "Cake", "Soup"],
                        "min_selections": 1, "max_selections": 2},
                       {"title": "", "required": "true", "options": [["Bread"], ["Bread", "Bread", "Wine"]],
                        "min_selections": [-1, 3, "1"], "max_selections": [5, 1.5, 0]}),
]

ANSWER_CASES = one_invalid_field(
    {"Your name": "Ada", "Guests": 2, "Main course": "Pasta", "Extras": ["Bread"]},
    {"Your name": ["x" * 21, 42], "Guests": [6, "3"], "Main course": ["Pizza"], "Extras": [["Bread", "Wine", "Cake"], "Bread"]},
)


def named(fields: set[str], field: str, body: dict[str, Any]) -> str | None:
    """Why ``fields`` does not name the one bad ``field`` of ``body``, as spec.md allows it to be named.

    A bound crossed with its partner (``min`` 6 over ``max`` 5) may be named by either or both;
    with invalid options, the selection bounds (compared with their count) may be named beside them.
    """
    value, crossed = body[field], False
    if field in CROSSED and isinstance(value, int) and not isinstance(value, bool):
        partner = body[next(iter(CROSSED[field]))]
        crossed = value > partner if field.startswith("min") else value < partner
    allowed = {field} | (CROSSED[field] if crossed else set())
    if field == "options" and body.get("type") == "multiple_choice":
        allowed |= {"min_selections", "max_selections"}
    if not fields or not fields <= allowed or (not crossed and field not in fields):
        return f"the 422 names {sorted(fields)}; expected {field!r}" + (f" (may also name {sorted(allowed - {field})})" if allowed != {field} else "")
    return None


@pytest.mark.requirement("R5", "R15")
@pytest.mark.parametrize("field,body", FORM_CASES)
def test_a_refused_form_is_not_created(api, http, db, field, body):
    owner = api.owner()
    api.ok(api.create_form(owner), 201, "a first form")
    forms = lambda: api.ok(api.get(owner, "/api/forms"), 200, "list the forms")
    with unchanged(forms, f"POST /api/forms with only {field} invalid"), db.writes_during(f"POST /api/forms with {field}={body[field]!r}") as writes:
        problem = named(api.fields_of(api.post(owner, "/api/forms", body), f"only {field} invalid"), field, body)
    assert problem is None, problem
    writes.assert_none()


@pytest.mark.requirement("R6", "R15")
@pytest.mark.parametrize("field,body", QUESTION_CASES)
def test_a_refused_question_is_not_added(api, http, db, field, body):
    built = api.build(questions=[{"type": "short_text", "title": "First"}], publish=False)
    with unchanged(lambda: api.read(built), f"a {body['type']} question with only {field} invalid"), \
            db.writes_during(f"POST .../questions with {field}={body[field]!r}") as writes:
        problem = named(api.fields_of(api.add_question(built.owner, built.id, **body), f"only {field} invalid"), field, body)
    assert problem is None, problem
    writes.assert_none()


@pytest.mark.requirement("R2")
@pytest.mark.parametrize("field,body", one_invalid_field({"email": "", "password": "correct horse battery"},
                                                         {"email": ["not-an-email", "a b@example.org", "x" * 250 + "@e.org"],
                                                          "password": ["short", "x" * 129, 12345678]}))
def test_a_refused_registration_takes_no_email(api, http, db, field, body):
    body = {**body, "email": body["email"] or api.fresh_email()}
    count = lambda: db.scalar("SELECT count(*) FROM owners WHERE lower(email) = lower(%s)", (str(body["email"]),))
    with unchanged(count, f"a registration with only {field} invalid"), db.writes_during(f"POST /api/users with {field} invalid") as writes:
        problem = named(api.fields_of(http.post("/api/users", json=body), f"only {field} invalid"), field, body)
    assert problem is None, problem
    writes.assert_none()
    if field != "email":
        api.ok(api.register(body["email"]), 201, "the same email registers afterwards with a valid password")


@pytest.mark.requirement("R9")
@pytest.mark.parametrize("title,answers", ANSWER_CASES)
def test_a_refused_submission_stores_no_answer(api, http, db, title, answers):
    built = api.build()
    api.answer(built, api.valid(built))
    seen = lambda: (api.responses(built), api.summary(built), api.read(built)["response_count"])
    with unchanged(seen, f"a submission with only {title!r} invalid"), db.writes_during(f"a submission with {title!r} invalid") as writes:
        problem = api.validation_problem(api.submit(built, answers), [built.qids[title]], f"only the answer to {title!r} invalid")
    assert problem is None, problem
    writes.assert_none()


def foreign_question(api: Any, built: Any, where: str) -> str:
    """A question id that is not one of ``built``'s: another owner's, the same owner's other form's, or a deleted one."""
    if where == "other-owner":
        return str(api.build().qids["Guests"])
    if where == "same-owner-other-form":
        return str(api.build(owner=built.owner).qids["Guests"])
    draft = api.build(owner=built.owner, questions=[{"type": "number", "title": "Gone"}, {"type": "number", "title": "Kept"}], publish=False)
    api.ok(api.delete(built.owner, f"/api/forms/{draft.id}/questions/{draft.qids['Gone']}"), 204, "delete a question")
    return draft.qids["Gone"]


@pytest.mark.requirement("R9")
@pytest.mark.parametrize("where", ["other-owner", "same-owner-other-form", "deleted"])
def test_an_answer_keyed_by_a_question_of_elsewhere_is_refused(api, http, db, where):
    built = api.build()
    foreign = foreign_question(api, built, where)
    answers = {**{built.qids[k]: v for k, v in api.valid(built).items()}, foreign: 1}
    with unchanged(lambda: api.responses(built), f"an answer keyed by a question id of {where}"), \
            db.writes_during(f"a submission keyed by a question id of {where}") as writes:
        problem = api.validation_problem(api.submit(built, answers, raw=True), [foreign], f"an answer keyed by a question id of {where}")
    assert problem is None, problem
    writes.assert_none()


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_a_draft_whose_questions_were_deleted_cannot_be_published(api, http, db):
    built = api.build(questions=[{"type": "short_text", "title": "Only"}], publish=False)
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Only']}"), 204, "delete the only question")
    with unchanged(lambda: api.read(built), "publishing a draft whose question was deleted"), db.writes_during("publish without questions") as writes:
        api.error(api.post(built.owner, f"/api/forms/{built.id}/publish"), 409, "no_questions", "a draft that had a question, now deleted")
    writes.assert_none()
