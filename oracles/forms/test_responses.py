"""Submitting responses: answer validation per question, 422 naming question ids, the response limit (spec.md: Responding)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R8", "R11")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="responses")
@pytest.mark.ab_check("AB-03")
def test_a_valid_submission_is_stored_as_sent(api, http):
    built = api.build()
    sent = {"Your name": "Ada", "Guests": 2.5, "Main course": "Salad", "Extras": ["Cake", "Bread"]}
    r = api.submit(built, sent)
    assert r.status_code == 201, api.brief(r)
    made = r.json()
    assert isinstance(made.get("id"), int) and isinstance(made.get("created_at"), str), f"answers id and created_at: {made}"
    listed = api.responses(built)
    assert [x.get("id") for x in listed] == [made["id"]], f"the response is listed: {listed}"
    answers = listed[0].get("answers") or {}
    assert {k: answers.get(built.qids[k]) for k in sent} == sent, f"answers keyed by question id (strings), as submitted: {answers}"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_optional_questions_may_be_left_out(api, http):
    built = api.build()
    api.answer(built, {"Your name": "Bo", "Main course": "Fish"})
    api.answer(built, {"Your name": "Cy", "Main course": "Fish", "Guests": None, "Extras": []})
    items = api.responses(built)
    assert len(items) == 2, f"both stored: {items}"
    for item in items:
        answers = item.get("answers") or {}
        assert answers.get(built.qids["Guests"]) is None, f"an unanswered question is absent or null: {answers}"


INVALID_ANSWERS = [
    ("required-text-missing", {"Your name": ...}, ["Your name"]),
    ("required-text-null", {"Your name": None}, ["Your name"]),
    ("required-text-blank", {"Your name": "   "}, ["Your name"]),
    ("text-too-long", {"Your name": "x" * 21}, ["Your name"]),
    ("text-number", {"Your name": 42}, ["Your name"]),
    ("number-below-min", {"Guests": -1}, ["Guests"]),
    ("number-above-max", {"Guests": 5.01}, ["Guests"]),
    ("number-string", {"Guests": "3"}, ["Guests"]),
    ("number-boolean", {"Guests": True}, ["Guests"]),
    ("single-not-an-option", {"Main course": "Soup"}, ["Main course"]),
    ("single-case", {"Main course": "pasta"}, ["Main course"]),
    ("single-list", {"Main course": ["Pasta"]}, ["Main course"]),
    ("required-single-missing", {"Main course": ...}, ["Main course"]),
    ("multi-too-many", {"Extras": ["Bread", "Wine", "Cake"]}, ["Extras"]),
    ("multi-unknown-option", {"Extras": ["Bread", "Beer"]}, ["Extras"]),
    ("multi-duplicate", {"Extras": ["Bread", "Bread"]}, ["Extras"]),
    ("multi-string", {"Extras": "Bread"}, ["Extras"]),
]


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case,change,offending", INVALID_ANSWERS, ids=[c[0] for c in INVALID_ANSWERS])
def test_invalid_answers_get_422_naming_the_question(api, http, case, change, offending):
    built = api.build()
    answers = {k: v for k, v in api.valid(built, change).items() if v is not ...}
    problem = api.validation_problem(api.submit(built, answers), [built.qids[t] for t in offending], f"a submission with {case}")
    assert problem is None, problem
    assert api.responses(built) == [], "an invalid submission stores nothing"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case,change", [("text-at-max-length", {"Your name": "\u00e9" * 20}), ("number-at-min", {"Guests": 0}),
                                         ("number-at-max", {"Guests": 5}), ("multi-two", {"Extras": ["Soup", "Wine"]})],
                         ids=["text-at-max-length", "number-at-min", "number-at-max", "multi-two"])
def test_answers_at_the_bounds_are_accepted(api, http, case, change):
    built = api.build()
    api.answer(built, api.valid(built, change))


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_every_offending_question_is_listed(api, http):
    built = api.build()
    r = api.submit(built, {"Guests": 99, "Main course": "Soup", "Extras": []})
    problem = api.validation_problem(r, [built.qids["Your name"], built.qids["Guests"], built.qids["Main course"]], "three offending answers")
    assert problem is None, problem


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_a_key_that_is_not_a_question_of_the_form_is_invalid(api, http):
    built, other = api.build(), api.build()
    foreign = other.qids["Guests"]
    answers = {**{built.qids[k]: v for k, v in api.valid(built).items()}, foreign: 1}
    problem = api.validation_problem(api.submit(built, answers, raw=True), [foreign], "an answer keyed by another form's question id")
    assert problem is None, problem
    assert api.responses(built) == [] and api.responses(other) == [], "nothing stored on either form"


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
@pytest.mark.parametrize("body,field", [({}, "answers"), ({"answers": []}, "answers"), ({"answers": "x"}, "answers"), ([], "body")],
                         ids=["no-answers", "answers-list", "answers-string", "body-list"])
def test_a_submission_without_an_answers_object_gets_422(api, http, body, field):
    built = api.build(questions=[{"type": "number", "title": "Guests"}])
    problem = api.validation_problem(http.post(f"/api/public/forms/{built.slug}/responses", json=body), [field], f"the body {body!r}")
    assert problem is None, problem


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_the_response_limit_stops_collection(api, http):
    built = api.build(response_limit=2)
    api.answer(built, api.valid(built))
    api.answer(built, api.valid(built))
    api.error(api.submit(built, api.valid(built)), 409, "response_limit_reached", "a third response to a form limited to 2")
    form = api.read(built)
    assert (form["status"], form["response_count"]) == ("published", 2), f"the form stays published with 2 responses: {form}"


@pytest.mark.requirement("R10", "R9")
@pytest.mark.category("validation")
def test_an_invalid_submission_to_a_full_form_gets_422(api, http):
    built = api.build(response_limit=1)
    api.answer(built, api.valid(built))
    problem = api.validation_problem(api.submit(built, api.valid(built, {"Guests": 6})), [built.qids["Guests"]], "an invalid submission at the limit")
    assert problem is None, problem


@pytest.mark.requirement("R8", "R11")
@pytest.mark.category("state")
def test_response_count_follows_the_responses(api, http):
    built = api.build()
    for name in ("A", "B", "C"):
        api.answer(built, api.valid(built, {"Your name": name}))
    api.submit(built, {"Guests": 1})  # refused: required answers missing
    assert api.read(built)["response_count"] == 3, "three accepted submissions"
    listed = [f for f in api.ok(api.get(built.owner, "/api/forms"), 200, "list")["items"] if f.get("id") == built.id]
    assert listed and listed[0].get("response_count") == 3, f"the list says so too: {listed}"
    names = [r["answers"][built.qids["Your name"]] for r in api.responses(built)]
    assert names == ["A", "B", "C"], f"responses in submission order: {names}"
