"""Lifecycle and the public view: draft -> published -> closed (spec.md: Lifecycle, Responding, precedence)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]


@pytest.mark.requirement("R7")
@pytest.mark.category("workflow")
def test_a_form_goes_from_draft_to_published_to_closed(api, http):
    built = api.build(publish=False)
    r = api.post(built.owner, f"/api/forms/{built.id}/publish")
    assert r.status_code == 200 and r.json().get("status") == "published", f"publish answers the published form: {api.brief(r)}"
    api.answer(built, api.valid(built))
    r = api.post(built.owner, f"/api/forms/{built.id}/close")
    assert r.status_code == 200 and r.json().get("status") == "closed", f"close answers the closed form: {api.brief(r)}"
    form = api.read(built)
    assert (form["status"], form["response_count"]) == ("closed", 1), f"closed with its response kept: {form}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_publishing_needs_a_question(api, http):
    built = api.build(publish=False, questions=[])
    api.error(api.post(built.owner, f"/api/forms/{built.id}/publish"), 409, "no_questions", "publishing an empty form")
    assert api.read(built)["status"] == "draft", "it stays a draft"
    api.error(http.get(f"/api/public/forms/{built.slug}"), 404, "not_found", "the draft's public view")


TRANSITIONS = [
    ("publish-published", "published", "publish"),
    ("publish-closed", "closed", "publish"),
    ("close-draft", "draft", "close"),
    ("close-closed", "closed", "close"),
]


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
@pytest.mark.parametrize("case,status,action", TRANSITIONS, ids=[t[0] for t in TRANSITIONS])
def test_other_transitions_get_409_and_change_nothing(api, http, case, status, action):
    built = api.build(publish=status != "draft")
    if status == "closed":
        api.close(built)
    api.error(api.post(built.owner, f"/api/forms/{built.id}/{action}"), 409, "invalid_transition", f"{action} a {status} form")
    assert api.read(built)["status"] == status, f"the form stays {status}"


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("close", [False, True], ids=["published", "closed"])
def test_the_public_view_needs_no_token(api, http, close):
    built = api.build()
    if close:
        api.close(built)
    r = http.get(f"/api/public/forms/{built.slug}")
    assert r.status_code == 200, api.brief(r)
    view = r.json()
    want = {"slug": built.slug, "title": built.form["title"], "status": "closed" if close else "published"}
    assert {k: view.get(k) for k in want} == want, f"the public view: {view}"
    questions = view.get("questions") or []
    assert [(q.get("id"), q.get("position"), q.get("type"), q.get("title"), q.get("required")) for q in questions] == [
        (q["id"], q["position"], q["type"], q["title"], q["required"]) for q in built.form["questions"]
    ], f"the questions in order: {questions}"
    assert questions[3].get("options") == ["Bread", "Wine", "Cake", "Soup"] and questions[0].get("max_length") == 20, f"with their settings: {questions}"


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_a_closed_form_refuses_every_submission(api, http):
    built = api.build()
    api.answer(built, api.valid(built))
    api.close(built)
    api.error(api.submit(built, api.valid(built)), 409, "form_closed", "a valid submission to a closed form")
    api.error(api.submit(built, {"Guests": "many"}), 409, "form_closed", "an invalid submission to a closed form (the state comes first)")
    assert len(api.responses(built)) == 1, "nothing was stored"


@pytest.mark.requirement("R8", "R10")
@pytest.mark.category("state")
def test_a_closed_form_at_its_limit_answers_form_closed(api, http):
    built = api.build(response_limit=1)
    api.answer(built, api.valid(built))
    api.close(built)
    api.error(api.submit(built, api.valid(built)), 409, "form_closed", "a closed form at its limit")


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_unknown_slugs_get_404(api, http):
    built = api.build()
    for slug in (built.slug + "x", "x" + built.slug, "nothing-here-123"):
        api.error(http.get(f"/api/public/forms/{slug}"), 404, "not_found", f"GET an unknown slug {slug!r}")
        api.error(http.post(f"/api/public/forms/{slug}/responses", json={"answers": {}}), 404, "not_found", f"POST to an unknown slug {slug!r}")
    assert api.responses(built) == [], "nothing was stored on the real form"
