"""Third-round consistency: restarts, concurrent edits and whole editing sessions (spec.md:
Running, Pages, Revisions and history, Moving)."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


def parallel(base_url: str, method: str, path: str, bodies: list[dict], headers: dict[str, str], timeout_s: float, checks) -> list[requests.Response]:
    """Send every body at once, each on its own connection; a lost request fails the item."""

    def send(body: dict) -> requests.Response | str:
        try:
            with requests.Session() as session:
                session.trust_env = False
                return session.request(method, base_url + path, json=body, headers=headers, timeout=timeout_s)
        except requests.RequestException as err:
            return f"{method} {path} got no answer within {timeout_s:.0f} s ({type(err).__name__})"

    results = checks.concurrently(send, bodies, timeout_s)
    lost = [r for r in results if isinstance(r, str)]
    if lost:
        pytest.fail(f"{len(lost)} of {len(bodies)} concurrent requests were lost:\n" + "\n".join(lost[:5]), pytrace=False)
    return [r for r in results if not isinstance(r, str)]


@pytest.mark.requirement("R17")
@pytest.mark.category("state")
def test_users_pages_revisions_and_redirects_survive_a_restart(api, http, service, checks, editor):
    page = api.page(editor, title="Durable", body="v1")
    api.edit(page, editor, body="v2", summary="second")
    new = api.slug("durable")
    api.ok(api.move(page, new, editor), 200, "move")
    api.ok(api.protect(new), 200, "protect")
    checks.restart(service, http)
    api._admin = None
    editor = api.relogin(editor)
    now = api.get_page(new, editor)
    assert (now["id"], now["title"], now["body"], now["revision"], now["protected"]) == (page["id"], "Durable", "v2", 2, True), f"the page after a restart: {now}"
    assert api.get_page(page["slug"], editor).get("redirected_from") == page["slug"], "the redirect survived"
    assert [(i["number"], i["summary"], i["author"]) for i in api.history(new, editor)["items"]] == [(2, "second", editor.username), (1, "", editor.username)]


@pytest.mark.requirement("R8")
@pytest.mark.category("state")
def test_concurrent_edits_on_one_base_make_one_revision(api, http, service, checks, editor):
    page = api.page(editor, body="start")
    bodies = [{"body": f"racer {i}", "base_revision": 1} for i in range(6)]
    answers = parallel(service.base_url, "PUT", f"/pages/{page['slug']}", bodies, editor.headers, http.timeout_s, checks)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200] + [409] * 5, f"one edit wins, five get edit_conflict: {statuses}"
    winner = next(r.json() for r in answers if r.status_code == 200)
    assert all(r.json().get("error") == "edit_conflict" and r.json().get("current_revision") == 2 for r in answers if r.status_code == 409)
    now = api.get_page(page)
    assert (now["revision"], now["body"]) == (2, winner["body"]) and api.numbers(page) == [2, 1], f"exactly one new revision: {now}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_concurrent_creates_at_one_slug_make_one_page(api, http, service, checks, editor):
    slug = api.slug("race")
    bodies = [{"slug": slug, "title": f"Racer {i}", "body": str(i)} for i in range(6)]
    answers = parallel(service.base_url, "POST", "/pages", bodies, editor.headers, http.timeout_s, checks)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [201] + [409] * 5, f"one page, five slug_taken: {statuses}"
    assert api.numbers(slug) == [1]


@pytest.mark.requirement("R7", "R8", "R9", "R10", "R11")
@pytest.mark.category("workflow")
def test_two_editors_resolve_a_conflict_and_revert(api, http, editor):
    alice, bob = editor, api.user("editor")
    page = api.page(alice, title="Guide", body="intro\nstep one\nstep two", summary="draft")
    api.ok(api.put(page, bob, body="intro\nstep one\nstep two\nstep three", base_revision=1, summary="add step"), 200, "bob saves first")
    api.error(api.put(page, alice, body="intro\nstep 1\nstep two", base_revision=1), 409, "edit_conflict", "alice's stale edit")
    base = api.get_page(page, alice)["revision"]
    api.ok(api.put(page, alice, body="intro\nstep 1\nstep two\nstep three", base_revision=base, summary="merge"), 200, "alice re-bases")
    history = api.history(page)["items"]
    assert [(i["number"], i["author"], i["summary"]) for i in history] == [(3, alice.username, "merge"), (2, bob.username, "add step"), (1, alice.username, "draft")]
    d = api.ok(api.diff(page, 1, 3), 200, "diff 1 -> 3")
    assert (d["removed"], d["added"], d["unchanged"]) == (1, 2, 2), f"diff 1 -> 3: {d}"
    api.ok(api.revert(page, bob, revision=2), 200, "bob reverts to his revision")
    assert api.get_page(page)["body"] == "intro\nstep one\nstep two\nstep three" and api.numbers(page) == [4, 3, 2, 1]
    assert api.ok(api.diff(page, 2, 4), 200, "diff 2 -> 4")["unchanged"] == 4


@pytest.mark.requirement("R12", "R13", "R14")
@pytest.mark.category("workflow")
def test_page_lifecycle_from_creation_to_deletion(api, http, editor, reader):
    page = api.page(editor, title="Lifecycle")
    api.edit(page, editor)
    api.ok(api.protect(page), 200, "protect")
    api.error(api.move(page, api.slug(), editor), 403, "forbidden", "moving a protected page as an editor")
    new = api.slug("final")
    api.ok(api.move(page, new, api.admin), 200, "the admin moves it")
    assert api.get_page(page["slug"], reader)["slug"] == new
    api.ok(api.delete(new), 204, "delete")
    api.error(api.call("GET", f"/pages/{page['slug']}", reader), 404, "not_found", "the redirect went with the page")
    api.error(api.call("GET", f"/pages/{new}", reader), 404, "not_found", "the page is gone")
    again = api.page(editor, slug=page["slug"])
    assert again["revision"] == 1 and again.get("redirected_from") is None


@pytest.mark.requirement("R17", "R2")
@pytest.mark.category("state")
def test_restart_keeps_one_bootstrap_admin(api, http, service, db, checks):
    username = api.admin.username
    checks.restart(service, http)
    api._admin = None
    assert api.admin.username == username, "the bootstrap administrator logs in after a restart"
    assert db.scalar("SELECT count(*) FROM users WHERE username = %s", (username,)) == 1, "the restart did not create the administrator twice"


@pytest.mark.requirement("R13")
@pytest.mark.category("state")
def test_concurrent_moves_to_one_slug_move_one_page(api, http, service, checks, editor):
    pages = [api.page(editor) for _ in range(4)]
    target = api.slug("contested")

    def move(page):
        with requests.Session() as session:
            session.trust_env = False
            return session.post(f"{service.base_url}/pages/{page['slug']}/move", json={"new_slug": target}, headers=editor.headers, timeout=http.timeout_s)

    answers = checks.concurrently(move, pages, http.timeout_s)
    statuses = sorted(r.status_code for r in answers)
    assert statuses == [200, 409, 409, 409], f"one move wins, three get slug_taken: {statuses}"
    winner = next(p for p, r in zip(pages, answers) if r.status_code == 200)
    assert api.get_page(target)["id"] == winner["id"] and api.get_page(target).get("redirected_from") is None
    for page in pages:
        if page is not winner:
            assert api.get_page(page["slug"]).get("redirected_from") is None, "a losing page kept its slug"


@pytest.mark.requirement("R7", "R11", "R17")
@pytest.mark.category("side_effects")
def test_edits_reverts_and_null_edits_keep_numbers_dense(api, http, db, editor):
    page = api.page(editor, body="a")
    api.edit(page, editor, body="b")
    api.put(page, editor, body="b", base_revision=2)  # null edit
    api.ok(api.revert(page, editor, revision=1), 200, "revert to 1")
    api.ok(api.revert(page, editor, revision=3), 200, "revert to the current content")
    api.put(page, editor, body="c", base_revision=1)  # conflict
    api.edit(page, editor, body="c")
    numbers = [r["number"] for r in db.query("SELECT number FROM revisions WHERE page_id = %s ORDER BY number", (page["id"],))]
    assert numbers == [1, 2, 3, 4] and api.numbers(page) == [4, 3, 2, 1], f"revisions 1..4 without gaps: rows {numbers}"
