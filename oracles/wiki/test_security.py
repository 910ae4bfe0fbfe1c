"""Security items derived from spec.md (Database: passwords; Conventions: Limits and hostile input;
roles; fields the contract does not define), each tagged with its CWE."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from pytest_backendbench.http.hostile import HOSTILE_VALUES, hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R18", "R17")
@pytest.mark.cwe(916, 256)
@pytest.mark.db_effect("INSERT", table="users")
def test_stored_passwords_are_salted_slow_hashes(api, http, db):
    password = "same-Pass-" + uuid.uuid4().hex[:8]
    first, second = api.user("reader", password), api.user("editor", password)
    rows = db.query("SELECT id, username, password_hash FROM users WHERE id IN (%s, %s) ORDER BY id", (first.id, second.id))
    assert [r["username"] for r in rows] == [first.username, second.username], f"both users are rows of users: {rows}"
    stored = [str(r["password_hash"]) for r in rows]
    assert stored[0] != stored[1], f"two users with the same password have different stored values (a salt per user): {stored}"
    raw = password.encode()
    for value in stored:
        assert password not in value and password.lower() not in value.lower(), f"the stored value contains the password: {value!r}"
        for name in ("md5", "sha1", "sha256", "sha512"):
            assert hashlib.new(name, raw).hexdigest() not in value.lower(), f"the stored value is an unsalted {name} digest: {value!r}"
        assert len(value) >= 20, f"a salted slow hash carries its salt and digest: {value!r}"


@pytest.mark.requirement("R18")
@pytest.mark.cwe(916)
def test_bootstrap_admin_password_is_hashed_too(api, http, db, admin):
    value = str(db.scalar("SELECT password_hash FROM users WHERE username = %s", (admin.username,)))
    assert admin.password not in value and hashlib.sha256(admin.password.encode()).hexdigest() not in value.lower(), f"the bootstrap password is stored hashed: {value!r}"
    assert db.scalar("SELECT role FROM users WHERE username = %s", (admin.username,)) == "admin"


@pytest.mark.requirement("R4", "R18")
@pytest.mark.cwe(200)
def test_no_answer_carries_a_password_or_its_hash(api, http, admin, checks):
    from pytest_backendbench.http.secrets import long_password, response_secret_findings

    password = long_password()
    username = f"leak_{uuid.uuid4().hex[:8]}"
    answers = [http.post("/users", json={"username": username, "password": password, "role": "editor"}, headers=admin.headers)]
    answers.append(http.post("/auth/login", json={"username": username, "password": password}))
    token = answers[-1].json().get("token", "")
    answers += [http.get("/me", headers={"Authorization": f"Bearer {token}"}), http.get("/users", headers=admin.headers)]
    page = api.ok(http.post("/pages", json={"slug": api.slug(), "title": "T", "body": "b"}, headers={"Authorization": f"Bearer {token}"}), 201, "create as the new user")
    answers += [api.call("GET", f"/pages/{page['slug']}/revisions"), api.call("GET", f"/pages/{page['slug']}/revisions/1")]
    found = [line for r in answers for line in response_secret_findings(r, [password], user_object=True)]
    found += [f"{r.request.method} {r.request.path_url}: {why}" for r in answers for why in checks.password_leaks(r.text, password)]
    assert not found, "answers reveal the password or something derived from it:\n" + "\n".join(found)


@pytest.mark.requirement("R2", "R18")
@pytest.mark.cwe(287)
def test_password_edges_do_not_log_in(api, http):
    from pytest_backendbench.http.secrets import PASSWORD_EDGES, long_password

    password = long_password()
    user = api.user("reader", password)
    problems = []
    for name, wrong in PASSWORD_EDGES.items():
        r = http.post("/auth/login", json={"username": user.username, "password": wrong(password)})
        if r.status_code != 401:
            problems.append(f"{name}: expected 401, got {api.brief(r)}")
    assert not problems, "near-miss passwords logged in:\n" + "\n".join(problems)
    api.login(user.username, password)


@pytest.mark.requirement("R5", "R12")
@pytest.mark.cwe(285)
def test_editor_cannot_escalate_through_protection_or_deletion(api, http, editor):
    page = api.page(editor)
    api.error(api.protect(page, True, by=editor), 403, "forbidden", "an editor protecting their own page")
    api.ok(api.protect(page, True), 200, "the admin protects it")
    api.error(api.protect(page, False, by=editor), 403, "forbidden", "an editor unprotecting it")
    api.error(api.delete(page, by=editor), 403, "forbidden", "an editor deleting it")
    api.error(api.put(page, editor, body="defaced", base_revision=1), 403, "forbidden", "an editor editing it")
    assert api.get_page(page)["protected"] is True and api.numbers(page) == [1]


@pytest.mark.requirement("R4", "R5")
@pytest.mark.cwe(862)
@pytest.mark.parametrize("role", ["reader", "editor"])
def test_non_admins_cannot_create_accounts_or_list_users(api, http, db, role):
    user = api.user(role)
    username = f"esc_{uuid.uuid4().hex[:8]}"
    api.error(http.post("/users", json={"username": username, "password": "password12", "role": "admin"}, headers=user.headers), 403, "forbidden", f"a {role} creating an admin")
    api.error(http.get("/users", headers=user.headers), 403, "forbidden", f"a {role} listing users")
    assert db.scalar("SELECT count(*) FROM users WHERE username = %s", (username,)) == 0, "no row was written"


@pytest.mark.requirement("R4", "R6", "R7")
@pytest.mark.cwe(915)
def test_server_owned_fields_cannot_be_assigned(api, http, db, editor):
    page = api.page(editor)
    r = api.put(page, editor, body="new", base_revision=1, protected=True, revision=77, author=api.admin.username, slug=api.slug("hijack"), id=1)
    assert r.status_code == 200, f"extra fields in an edit are ignored: {api.brief(r)}"
    got = r.json()
    assert (got["slug"], got["protected"], got["revision"], got["id"]) == (page["slug"], False, 2, page["id"]), f"slug, protection, number and id keep their values: {got}"
    assert api.revision(page, 2)["author"] == editor.username, "the author is the caller"
    username = f"mass_{uuid.uuid4().hex[:8]}"
    made = api.ok(http.post("/users", json={"username": username, "password": "password12", "role": "reader", "id": 1, "created_at": "2000-01-01T00:00:00Z"},
                            headers=api.admin.headers), 201, "create a user with extra fields")
    assert made["id"] != 1 and not str(made["created_at"]).startswith("2000"), f"id and created_at are the service's: {made}"
    assert db.scalar("SELECT role FROM users WHERE id = %s", (api.admin.id,)) == "admin"


@pytest.mark.requirement("R15", "R19")
@pytest.mark.cwe(89)
def test_search_matches_wildcards_and_quotes_literally(api, http):
    word = api.tag()
    plain = api.page(title=f"{word} plain title")
    percent = api.page(title=f"{word} 100% sure")
    under = api.page(title=f"{word} snake_case")
    quote = api.page(title=f"{word} O'Brien")
    back = api.page(title=f"{word} back\\slash")
    for q, expect in (("%", [percent]), ("_", [under]), ("'", [quote]), ("\\", [back]), (f"{word}%", []), ("0% s", [percent]),
                      ("' OR '1'='1", []), ("*", []), (f"{word}_", []), ("%_%", [])):
        found = [i for i in api.found(q) if i in {p["id"] for p in (plain, percent, under, quote, back)}]
        assert found == [p["id"] for p in expect], f"q={q!r} matches only as the literal text it is: found {found}"


@pytest.mark.requirement("R6", "R19")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim(api, http, db, editor, checks):
    bystander = api.page(editor, body="untouched")
    made = []
    for text in checks.injection_texts:
        page = api.page(editor, title=f"{text} {api.tag()}", body=f"{text}\n{text}", summary=text)
        made.append((page, text))
    for page, text in made:
        got = api.get_page(page)
        assert got["body"] == f"{text}\n{text}" and got["title"] == page["title"], f"stored verbatim: {got}"
        assert api.revision(page, 1)["summary"] == text
        assert db.scalar("SELECT body FROM revisions WHERE page_id = %s AND number = 1", (page["id"],)) == f"{text}\n{text}"
    api.unchanged(bystander, "hostile pages")


@pytest.mark.requirement("R6", "R7", "R19")
@pytest.mark.cwe(116)
def test_every_string_field_takes_hostile_text(api, http, editor):
    page = api.page(editor)
    found = hostile_findings(lambda body: http.post("/pages", json={**body, "slug": api.slug()}, headers=editor.headers),
                             {"title": "t", "body": "b", "summary": "s"}, verbatim=["title", "body"], accepted=[201])
    state = {"base": 1}

    def edit(body):
        r = api.put(page, editor, **body, base_revision=state["base"])
        if r.status_code == 200:
            state["base"] = r.json().get("revision", state["base"])
        return r

    found += hostile_findings(edit, {"body": "b", "title": "t"}, verbatim=["title", "body"], accepted=[200],
                              prepare=lambda body: {**body, "body": body["body"] + api.tag()})
    assert not found, "text is stored and answered exactly as sent:\n" + "\n".join(found)
    assert len(HOSTILE_VALUES) * 2 <= api.get_page(page)["revision"], "each hostile edit made a revision"


@pytest.mark.requirement("R19", "R6")
@pytest.mark.cwe(22)
def test_hostile_slugs_in_paths_get_404(api, http, service, reader, editor, checks):
    api.page(editor)
    problems = checks.traversal_problems(service, http.timeout_s, "/pages/", reader.headers, extra_ids=checks.hostile_slugs)
    problems += checks.traversal_problems(service, http.timeout_s, "/pages/", reader.headers, "/revisions", extra_ids=checks.hostile_slugs)
    problems += checks.traversal_problems(service, http.timeout_s, "/pages/", editor.headers, method="PUT", body={"body": "x", "base_revision": 1},
                                          extra_ids=checks.hostile_slugs)
    assert not problems, "slugs that name no page:\n" + "\n".join(problems)


@pytest.mark.requirement("R19")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, db, editor, checks):
    slug = api.slug("hostile")
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/pages", editor.headers, {"slug": slug, "title": "t", "body": "b"}, "body")
    page = api.page(editor)
    problems += checks.hostile_body_problems(service, http.timeout_s, "PUT", f"/pages/{page['slug']}", editor.headers, {"body": "x", "base_revision": 1}, "body")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert db.scalar("SELECT count(*) FROM pages WHERE slug = %s", (slug,)) == 0, "a refused page body stored a page"
    api.unchanged(page, "refused edit bodies")


@pytest.mark.requirement("R19", "R10")
@pytest.mark.cwe(400)
def test_diff_of_bodies_at_the_limits_answers_in_time(api, http, editor):
    import time

    old = "\n".join(f"line {i:05d} {'a' * 8}" for i in range(1000))
    new = "\n".join(f"line {i:05d} {'b' * 8}" if i % 3 else f"line {i:05d} {'a' * 8}" for i in range(999, -1, -1))
    assert len(old) <= 20_000 and len(new) <= 20_000
    page = api.page(editor, body=old)
    api.edit(page, editor, body=new)
    started = time.monotonic()
    r = api.diff(page, 1, 2)
    took = time.monotonic() - started
    assert r.status_code == 200 and took <= 10, f"a diff of two 1,000-line bodies within 10 s: {r.status_code} after {took:.1f} s"
    body = r.json()
    assert body["added"] + body["unchanged"] == 1000 and body["removed"] + body["unchanged"] == 1000 and body["unchanged"] >= 1, f"consistent counts: {body}"
