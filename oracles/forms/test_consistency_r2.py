"""Consistency under restarts and concurrency (spec.md: Running, Database, Responding)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r2")]


@pytest.mark.requirement("R13", "R5", "R11")
@pytest.mark.category("state")
def test_everything_survives_a_restart(api, http, service, checks):
    built = api.build(response_limit=3)
    made = api.answer(built, api.valid(built, {"Your name": "Before restart"}))
    summary = api.summary(built)
    checks.restart(service, http)
    owner = built.owner
    owner.token = api.ok(api.login(owner.email), 200, "log in again (tokens may be lost by a restart)")["token"]
    form = api.read(built)
    assert (form["status"], form["slug"], form["response_count"], len(form["questions"])) == ("published", built.slug, 1, 4), f"the form after a restart: {form}"
    assert [r["id"] for r in api.responses(built)] == [made["id"]], "the response after a restart"
    assert api.summary(built) == summary, "the same summary after a restart"
    api.answer(built, api.valid(built))
    api.answer(built, api.valid(built))
    api.error(api.submit(built, api.valid(built)), 409, "response_limit_reached", "the limit counts the responses from before the restart")


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_concurrent_submissions_never_pass_the_limit(api, http, service, checks):
    built = api.build(questions=[{"type": "number", "title": "N"}], response_limit=3)
    bodies = [{"answers": {built.qids["N"]: i}} for i in range(10)]
    answers = checks.parallel_posts(service.base_url, f"/api/public/forms/{built.slug}/responses", bodies, http.timeout_s)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] * 3 + [409] * 7, f"exactly 3 of 10 concurrent submissions are accepted: {statuses}"
    assert len(api.responses(built)) == 3 and api.read(built)["response_count"] == 3, "three responses stored"


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_concurrent_registrations_of_one_email_make_one_owner(api, http, service, checks, db):
    email = api.fresh_email()
    bodies = [{"email": email if i % 2 else email.upper(), "password": f"password-{i}"} for i in range(6)]
    answers = checks.parallel_posts(service.base_url, "/api/users", bodies, http.timeout_s)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] + [409] * 5, f"one registration wins, the others get 409 email_taken: {statuses}"
    assert db.scalar("SELECT count(*) FROM owners WHERE lower(email) = %s", (email,)) == 1, "one owner row"


@pytest.mark.requirement("R11", "R12", "R9")
@pytest.mark.category("workflow")
def test_summary_export_and_list_agree(api, http):
    built = api.build()
    rows = [api.valid(built, {"Your name": n, "Guests": g, "Main course": c, "Extras": e})
            for n, g, c, e in (("A", 0, "Fish", ["Wine"]), ("B", 5, "Salad", ["Wine", "Soup"]), ("C", 3, "Salad", ["Cake"]))]
    made = [api.answer(built, row) for row in rows]
    api.submit(built, api.valid(built, {"Extras": ["Wine", "Soup", "Cake"]}))  # refused: too many selections
    listed, summary, records = api.responses(built), api.summary(built), api.export(built)
    assert [r["id"] for r in listed] == [m["id"] for m in made] == [int(r[0]) for r in records[1:]], "the same responses, in the same order"
    assert summary["response_count"] == 3 and summary["questions"][3]["counts"] == {"Bread": 0, "Wine": 2, "Cake": 1, "Soup": 1}, f"{summary}"
    assert abs(summary["questions"][1]["mean"] - 8 / 3) < 1e-6, f"mean of 0, 5, 3: {summary['questions'][1]}"
    assert [r[5] for r in records[1:]] == ["Wine", "Wine; Soup", "Cake"], f"{records}"


@pytest.mark.requirement("R6", "R8", "R9")
@pytest.mark.category("workflow")
def test_a_deleted_draft_question_is_not_asked(api, http):
    built = api.build(publish=False)
    api.ok(api.delete(built.owner, f"/api/forms/{built.id}/questions/{built.qids['Your name']}"), 204, "delete the required text question")
    api.ok(api.post(built.owner, f"/api/forms/{built.id}/publish"), 200, "publish")
    view = api.ok(http.get(f"/api/public/forms/{built.slug}"), 200, "public view")
    assert [q["title"] for q in view["questions"]] == ["Guests", "Main course", "Extras"], f"{view}"
    api.answer(built, {"Main course": "Fish"})
    problem = api.validation_problem(api.submit(built, {"Main course": "Fish", "Your name": "Z"}), [built.qids["Your name"]], "an answer to the deleted question")
    assert problem is None, problem
