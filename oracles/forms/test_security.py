"""Security items (spec.md: Accounts, Forms, Responding, Results, The page, "Limits and hostile input"), each tagged with its CWE."""

from __future__ import annotations

import hashlib
import re

import pytest
import requests

from pytest_backendbench.http.secrets import account_findings, secret_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]

FOREIGN_PATHS = [
    ("GET", ""), ("DELETE", ""), ("POST", "/questions"), ("DELETE", "/questions/{qid}"), ("POST", "/publish"), ("POST", "/close"),
    ("GET", "/responses"), ("GET", "/summary"), ("GET", "/export.csv"),
]


@pytest.mark.requirement("R5", "R11", "R12")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("method,path", FOREIGN_PATHS, ids=[f"{m} {p or '/'}" for m, p in FOREIGN_PATHS])
def test_another_owners_form_answers_404(api, http, method, path, request):
    victim = api.build(publish="publish" not in path)
    api.answer(victim, api.valid(victim)) if "publish" not in path else None
    intruder = api.owner()
    url = f"/api/forms/{victim.id}" + path.format(qid=victim.qids["Guests"])
    body = {"type": "short_text", "title": "Injected"} if path == "/questions" else None
    r = http.request(method, url, json=body, headers=intruder.headers)
    api.error(r, 404, "not_found", f"{method} {url} by another owner")
    assert "Ada" not in r.text, f"the answer leaks the victim's responses: {r.text[:200]}"
    form = api.read(victim)
    assert (form["status"], len(form["questions"])) == (victim.form["status"], 4), f"the victim's form is unchanged: {form}"
    assert len(api.responses(victim)) == (0 if "publish" in path else 1), "the victim's responses are unchanged"
    assert victim.id not in [f.get("id") for f in api.ok(api.get(intruder, "/api/forms"), 200, "list")["items"]], "not in the intruder's list"


@pytest.mark.requirement("R8")
@pytest.mark.cwe(284)
def test_a_draft_form_cannot_be_read_or_answered_publicly(api, http, db):
    built = api.build(publish=False)
    api.error(http.get(f"/api/public/forms/{built.slug}"), 404, "not_found", "the public view of a draft")
    for answers in ({built.qids[k]: v for k, v in api.valid(built).items()}, {}):
        api.error(http.post(f"/api/public/forms/{built.slug}/responses", json={"answers": answers}), 404, "not_found", "answering a draft")
    api.error(api.submit(built, api.valid(built), raw=False), 404, "not_found", "answering a draft with a token is no different")
    assert db.scalar("SELECT count(*) FROM responses WHERE form_id = %s", (built.id,)) == 0, "no response row for the draft"
    assert api.read(built)["response_count"] == 0


@pytest.mark.requirement("R2", "R4", "R13")
@pytest.mark.cwe(916)
def test_passwords_are_stored_as_salted_slow_hashes(api, http, db):
    password = "Same pass phrase " + api.unique("pw").split()[1]
    emails = [api.fresh_email(), api.fresh_email()]
    for email in emails:
        api.ok(api.register(email, password), 201, "register")
    rows = db.query("SELECT email, password_hash FROM owners WHERE email IN (%s, %s)", tuple(emails))
    stored = [str(r["password_hash"]) for r in rows]
    assert len(stored) == 2 and all(stored), f"two owner rows with a password_hash: {rows}"
    assert stored[0] != stored[1], f"salted: owners with the same password have different stored values: {stored}"
    problems = [f"{value[:60]!r}: {line}" for value in stored for line in secret_findings({"v": value}, [password]) if "shaped like" not in line]
    assert not problems, "the stored value is not the password nor an unsalted digest of it:\n" + "\n".join(problems)
    for value in stored:
        for name in ("md5", "sha1", "sha256", "sha512"):
            assert hashlib.new(name, password.encode()).hexdigest() not in value.lower(), f"an unsalted {name} digest is stored"
        declared = re.search(r"pbkdf2[^$:]*[$:](?:[a-z0-9]+[$:])?(\d+)[$:]", value, re.IGNORECASE)
        if declared:
            assert int(declared.group(1)) >= 100_000, f"PBKDF2 needs at least 100,000 iterations: {value[:40]}..."
    whole = db.query("SELECT * FROM owners WHERE email IN (%s, %s)", tuple(emails))
    plain = [k for row in whole for k, v in row.items() if isinstance(v, str) and password in v]
    assert not plain, f"no column holds the password: {plain}"
    for email in emails:
        api.ok(api.login(email, password), 200, "the owner logs in with the password")


@pytest.mark.requirement("R2", "R3", "R4")
@pytest.mark.cwe(200)
def test_account_answers_carry_no_password_or_hash(api, http, db):
    email = api.fresh_email()
    password = "Unique-" + api.unique("pw").split()[1]
    found = account_findings(http, {"email": email, "password": password}, {"email": email, "password": password},
                             me_path="/api/me", users_path="/api/users", token_path="/api/auth/token")
    assert not found, "account answers:\n" + "\n".join(found)
    stored = str(db.scalar("SELECT password_hash FROM owners WHERE email = %s", (email,)))
    token = api.ok(api.login(email, password), 200, "log in")["token"]
    headers = {"Authorization": f"Bearer {token}"}
    form = api.ok(http.post("/api/forms", json={"title": "Mine"}, headers=headers), 201, "create a form")
    parts = [p for p in re.split(r"[$:]", stored) if len(p) >= 16]
    for r in (http.get("/api/me", headers=headers), http.get("/api/forms", headers=headers), http.get(f"/api/forms/{form['id']}", headers=headers)):
        assert password not in r.text and stored not in r.text, f"{r.request.method} {r.request.path_url} answers the password or its hash"
        assert not any(p in r.text for p in parts), f"{r.request.method} {r.request.path_url} answers part of the stored hash"


@pytest.mark.requirement("R8")
@pytest.mark.cwe(200)
def test_the_public_view_carries_nothing_about_the_owner(api, http):
    built = api.build()
    r = http.get(f"/api/public/forms/{built.slug}")
    assert r.status_code == 200, api.brief(r)
    assert built.owner.email not in r.text, f"the public view shows the owner's email: {r.text[:300]}"
    view = r.json()
    assert not [k for k in view if "owner" in k.lower()], f"the public view has owner fields: {sorted(view)}"


@pytest.mark.requirement("R14")
@pytest.mark.cwe(79)
def test_the_served_page_does_not_embed_hostile_text_as_markup(api, http, service):
    hostile = "<script>alert('t')</script><img src=x onerror=alert(1)>"
    built = api.build(questions=[{"type": "single_choice", "title": hostile, "options": [hostile, "Fine"]}], title=hostile)
    with requests.Session() as session:  # the page is not part of the API contract
        session.trust_env = False
        r = session.get(f"{service.base_url}/f/{built.slug}", timeout=http.timeout_s)
    assert r.status_code == 200, f"GET /f/<slug> of a published form: {r.status_code}"
    assert "<script>alert('t')</script>" not in r.text and "<img src=x onerror" not in r.text, (
        "the page embeds the form's text as HTML (stored XSS); it must be escaped or rendered as text"
    )


@pytest.mark.requirement("R12")
@pytest.mark.cwe(1236)
def test_the_export_defuses_formulas(api, http):
    questions = [{"type": "short_text", "title": "=HYPERLINK(\"http://x\")"}, {"type": "single_choice", "title": "Pick", "options": ["@SUM(1)", "+1", "ok"]},
                 {"type": "multiple_choice", "title": "Many", "options": ["-2+3", "b"]}, {"type": "number", "title": "N", "min": -10}]
    built = api.build(questions=questions)
    api.answer(built, {"=HYPERLINK(\"http://x\")": "=1+1", "Pick": "@SUM(1)", "Many": ["-2+3", "b"], "N": -3})
    api.answer(built, {"=HYPERLINK(\"http://x\")": "+cmd|' /C calc'!A0", "Pick": "+1", "N": 4})
    records = api.export(built)
    assert records[0][2:] == ["'=HYPERLINK(\"http://x\")", "Pick", "Many", "N"], f"a title starting with = gets a leading quote: {records[0]}"
    assert records[1][2:5] == ["'=1+1", "'@SUM(1)", "'-2+3; b"], f"text answers and options starting with = + - @ get a leading quote: {records[1]}"
    assert records[2][2:4] == ["'+cmd|' /C calc'!A0", "'+1"], f"{records[2]}"
    assert float(records[1][5]) == -3 and float(records[2][5]) == 4, f"number answers are written as numbers, never prefixed: {records[1]} {records[2]}"


@pytest.mark.requirement("R5", "R8", "R15")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_touches_nothing_else(api, http, db, checks):
    bystander = api.build()
    api.answer(bystander, api.valid(bystander))
    owner = api.owner()
    for text in checks.injection_texts:
        built = api.build(owner, questions=[{"type": "short_text", "title": text, "max_length": 100}], title=f"{text} form")
        api.answer(built, {text: text})
        assert api.read(built)["title"] == f"{text} form", "a title is stored verbatim"
        answers = api.responses(built)
        assert [a["answers"].get(built.qids[text]) for a in answers] == [text], f"an answer is stored verbatim: {answers}"
        assert api.export(built)[1][2] == text, "and exported verbatim"
    api.error(api.login("' OR '1'='1", "' OR '1'='1"), 401, "invalid_credentials", "SQL in a login")
    assert len(api.responses(bystander)) == 1 and db.scalar("SELECT count(*) FROM forms WHERE id = %s", (bystander.id,)) == 1, "another form was not touched"


@pytest.mark.requirement("R15")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, db, checks):
    owner = api.owner()
    built = api.build(owner, questions=[{"type": "short_text", "title": "Q", "max_length": 5000}])
    title = api.unique("Hostile")
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/forms", owner.headers, {"title": title}, "title")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/users", {}, {"email": api.fresh_email(), "password": "x" * 12}, "password")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/api/public/forms/{built.slug}/responses", {}, {"answers": {}}, "answers")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert db.scalar("SELECT count(*) FROM forms WHERE title = %s", (title,)) == 0, "a refused form body stored a form"
    assert api.responses(built) == [], "a refused response body stored a response"


@pytest.mark.requirement("R9", "R15")
@pytest.mark.cwe(400)
def test_answers_beyond_max_length_are_refused(api, http):
    built = api.build(questions=[{"type": "short_text", "title": "Q", "max_length": 5000}])
    problem = api.validation_problem(api.submit(built, {"Q": "x" * 5001}), [built.qids["Q"]], "an answer of 5001 characters")
    assert problem is None, problem
    problem = api.validation_problem(api.submit(built, {"Q": "y" * 200_000}), [built.qids["Q"]], "an answer of 200,000 characters")
    assert problem is None, problem
    assert api.responses(built) == [], "nothing was stored"


@pytest.mark.requirement("R5", "R8", "R15")
@pytest.mark.cwe(22)
def test_hostile_ids_and_slugs_in_paths_get_404(api, http, service, checks):
    owner = api.owner()
    built = api.build(owner)
    problems = checks.traversal_problems(service, http.timeout_s, "/api/forms/", owner.headers, extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/forms/", owner.headers, "/responses", extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, f"/api/forms/{built.id}/questions/", owner.headers, method="DELETE", extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/public/forms/", {}, extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/public/forms/", {}, "/responses", method="POST", body={"answers": {}}, extra_ids=checks.task_ids)
    assert not problems, "ids and slugs that name nothing or climb out of their path:\n" + "\n".join(problems)
    assert len(api.read(built)["questions"]) == 4 and api.responses(built) == [], "nothing changed"


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_malformed_and_tampered_tokens_get_401(api, http, checks):
    owner = api.owner()
    problems = checks.token_problems(http, "GET", "/api/forms", owner.token)
    problems += checks.token_problems(http, "POST", "/api/forms", owner.token, body={"title": "Forged"})
    assert not problems, "\n".join(problems)
    assert api.ok(api.get(owner, "/api/forms"), 200, "list")["items"] == [], "no form was created with a bad token"


@pytest.mark.requirement("R5", "R7")
@pytest.mark.cwe(915)
def test_server_owned_form_fields_cannot_be_assigned(api, http):
    owner, other = api.owner(), api.owner()
    title = api.unique("Assigned")
    body = {"title": title, "status": "published", "response_count": 99, "slug": "chosen-by-me-123", "owner_id": other.id, "id": 1}
    r = api.post(owner, "/api/forms", body)
    if r.status_code == 422:  # refusing fields the contract does not define is allowed; then nothing is stored
        assert api.ok(api.get(owner, "/api/forms"), 200, "list")["items"] == [], "a refused form was stored"
        return
    assert r.status_code == 201, f"a form with server-owned fields: expected 201 (fields ignored) or 422, got {api.brief(r)}"
    form = r.json()
    assert (form.get("status"), form.get("response_count")) == ("draft", 0), f"status and response_count are the service's: {form}"
    assert [f.get("id") for f in api.ok(api.get(owner, "/api/forms"), 200, "list")["items"]] == [form["id"]], "the form is the caller's"
    assert api.ok(api.get(other, "/api/forms"), 200, "list")["items"] == [], "not the other owner's"
    api.error(http.get(f"/api/public/forms/{form['slug']}"), 404, "not_found", "the form is a draft, not answerable")
