"""Questions: types, settings and their defaults, validation, positions, draft-only edits (spec.md: Questions)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

DEFAULTS = [
    ("short_text", {}, {"max_length": 500}),
    ("number", {}, {"min": None, "max": None}),
    ("single_choice", {"options": ["Yes", "No"]}, {"options": ["Yes", "No"]}),
    ("multiple_choice", {"options": ["A", "B", "C"]}, {"options": ["A", "B", "C"], "min_selections": 0, "max_selections": 3}),
]


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="questions")
@pytest.mark.parametrize("qtype,settings,expected", DEFAULTS, ids=[d[0] for d in DEFAULTS])
def test_a_question_answers_its_settings_with_defaults(api, http, qtype, settings, expected):
    built = api.build(publish=False, questions=[])
    r = api.add_question(built.owner, built.id, type=qtype, title="How?", **settings)
    assert r.status_code == 201, api.brief(r)
    question = r.json()
    want = {"type": qtype, "title": "How?", "required": False, "position": 1, **expected}
    assert {k: question.get(k, "<absent>") for k in want} == want, f"the question with its type's settings and defaults: {question}"
    assert isinstance(question.get("id"), int) and not isinstance(question.get("id"), bool), f"ids are integers: {question}"


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_given_settings_are_kept(api, http):
    built = api.build(publish=False, questions=[])
    made = [
        api.ok(api.add_question(built.owner, built.id, type="short_text", title="T", required=True, max_length=5000), 201, "text"),
        api.ok(api.add_question(built.owner, built.id, type="number", title="N", min=-2.5, max=2.5), 201, "number"),
        api.ok(api.add_question(built.owner, built.id, type="multiple_choice", title="M", options=["x", "y"], min_selections=2, max_selections=2), 201, "multi"),
    ]
    assert (made[0]["required"], made[0]["max_length"]) == (True, 5000), f"{made[0]}"
    assert (made[1]["min"], made[1]["max"]) == (-2.5, 2.5), f"{made[1]}"
    assert (made[2]["min_selections"], made[2]["max_selections"]) == (2, 2), f"{made[2]}"
    assert [q["position"] for q in made] == [1, 2, 3], f"appended at the end: {made}"


INVALID_QUESTIONS = [
    ("type-unknown", {"type": "essay"}, ["type"]),
    ("type-missing", {"type": ...}, ["type"]),
    ("title-blank", {"title": "  "}, ["title"]),
    ("title-501", {"title": "q" * 501}, ["title"]),
    ("required-string", {"required": "yes"}, ["required"]),
    ("max-length-0", {"max_length": 0}, ["max_length"]),
    ("max-length-5001", {"max_length": 5001}, ["max_length"]),
    ("max-length-fraction", {"max_length": 10.5}, ["max_length"]),
    ("number-min-string", {"type": "number", "min": "1"}, ["min"]),
    ("number-max-boolean", {"type": "number", "max": True}, ["max"]),
    ("options-missing", {"type": "single_choice"}, ["options"]),
    ("options-one", {"type": "single_choice", "options": ["Only"]}, ["options"]),
    ("options-21", {"type": "single_choice", "options": [f"o{i}" for i in range(21)]}, ["options"]),
    ("options-duplicate", {"type": "multiple_choice", "options": ["A", "B", "A"]}, ["options"]),
    ("options-blank", {"type": "single_choice", "options": ["A", " "]}, ["options"]),
    ("options-101", {"type": "single_choice", "options": ["A", "b" * 101]}, ["options"]),
    ("options-number", {"type": "single_choice", "options": ["A", 2]}, ["options"]),
    ("min-selections-negative", {"type": "multiple_choice", "options": ["A", "B"], "min_selections": -1}, ["min_selections"]),
    ("max-selections-above-options", {"type": "multiple_choice", "options": ["A", "B"], "max_selections": 3}, ["max_selections"]),
    ("min-selections-above-options", {"type": "multiple_choice", "options": ["A", "B"], "min_selections": 3, "max_selections": 2}, ["min_selections"]),
]


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case,change,fields", INVALID_QUESTIONS, ids=[c[0] for c in INVALID_QUESTIONS])
def test_invalid_questions_get_422_naming_the_setting(api, http, case, change, fields):
    built = api.build(publish=False, questions=[])
    body = {k: v for k, v in {"type": "short_text", "title": "Q", **change}.items() if v is not ...}
    # a setting whose validity depends on another invalid one may be named too
    also = ("max_selections",) if "min_selections" in fields else ("min_selections",) if "max_selections" in fields else ()
    problem = api.validation_problem(api.add_question(built.owner, built.id, **body), fields, f"a question with {case}", also=also)
    assert problem is None, problem
    assert api.read(built)["questions"] == [], "a refused question is not stored"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
@pytest.mark.parametrize("qtype,change", [("number", {"min": 5, "max": 4}), ("multiple_choice", {"options": ["A", "B", "C"], "min_selections": 3, "max_selections": 1})],
                         ids=["min-above-max", "min-selections-above-max"])
def test_crossed_bounds_get_422_naming_either(api, http, qtype, change):
    built = api.build(publish=False, questions=[])
    r = api.add_question(built.owner, built.id, type=qtype, title="Q", **change)
    pair = ["min", "max"] if qtype == "number" else ["min_selections", "max_selections"]
    fields = api.fields_of(r, f"{qtype} with crossed bounds")
    assert fields and fields <= set(pair), f"crossed bounds name {pair[0]} or {pair[1]} (either or both), got {sorted(fields)}"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_equal_bounds_are_accepted(api, http):
    built = api.build(publish=False, questions=[])
    api.ok(api.add_question(built.owner, built.id, type="number", title="N", min=3, max=3), 201, "min = max")
    api.ok(api.add_question(built.owner, built.id, type="multiple_choice", title="M", options=["A", "B"], min_selections=1, max_selections=1), 201, "min = max selections")


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="questions")
def test_deleting_a_question_renumbers_the_rest(api, http):
    built = api.build(publish=False)
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Guests']}"), 204, "delete the second question")
    questions = api.read(built)["questions"]
    assert [(q["title"], q["position"]) for q in questions] == [("Your name", 1), ("Main course", 2), ("Extras", 3)], f"renumbered 1..n: {questions}"
    made = api.ok(api.add_question(built.owner, built.id, type="number", title="Later"), 201, "append")
    assert made["position"] == 4, f"a new question goes to the end: {made}"
    api.error(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Guests']}"), 404, "not_found", "deleting it again")


@pytest.mark.requirement("R6", "R5")
@pytest.mark.category("authorization")
def test_a_question_is_reachable_only_under_its_own_form(api, http):
    first = api.build(publish=False)
    second = api.build(first.owner, publish=False)
    r = api.delete(first.owner, f"/api/forms/{second.id}/questions/{first.qids['Guests']}")
    api.error(r, 404, "not_found", "a question id under another form of the same owner")
    assert len(api.read(first)["questions"]) == 4 and len(api.read(second)["questions"]) == 4, "no question was deleted"


@pytest.mark.requirement("R6", "R7")
@pytest.mark.category("state")
@pytest.mark.parametrize("close", [False, True], ids=["published", "closed"])
def test_questions_change_only_in_a_draft(api, http, close):
    built = api.build()
    if close:
        api.close(built)
    api.error(api.add_question(built.owner, built.id, type="short_text", title="Late"), 409, "form_not_draft", "adding to a non-draft form")
    api.error(api.add_question(built.owner, built.id, type="essay", title=""), 409, "form_not_draft", "an invalid question for a non-draft form (the state comes first)")
    api.error(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Guests']}"), 409, "form_not_draft", "deleting from a non-draft form")
    assert [q["title"] for q in api.read(built)["questions"]] == ["Your name", "Guests", "Main course", "Extras"], "the questions are unchanged"
