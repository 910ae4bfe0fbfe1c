"""Security items (spec.md: Passwords, Access, API conventions "Limits and hostile input"), each tagged with its CWE."""

from __future__ import annotations

import hashlib
import re

import pytest

from pytest_backendbench.http.secrets import PASSWORD_EDGES, long_password, secret_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R3")
@pytest.mark.cwe(639)
def test_another_projects_bills_and_members_are_unknown_by_id(api, http):
    mine, theirs = api.project(), api.project()
    me = api.member(mine, "Me")
    them, other = api.member(theirs, "Them"), api.member(theirs, "Other")
    bill = api.bill(theirs, them, [them, other], amount=600, description="Their dinner")
    for method, rest, body in (("GET", f"/bills/{bill['id']}", None), ("PUT", f"/bills/{bill['id']}", api.bill_body(me, [me])),
                               ("DELETE", f"/bills/{bill['id']}", None), ("PATCH", f"/members/{them['id']}", {"name": "Renamed"}),
                               ("PATCH", f"/members/{other['id']}", {"active": False})):
        r = http.request(method, mine.path(rest), json=body, headers=mine.auth)
        api.error(r, 404, "not_found", f"{method} {mine.path(rest)}: an id of another project under my slug")
    assert api.doc(api.get_bill(theirs, bill), ("payer_id", "amount_cents", "description")) == {"payer_id": them["id"], "amount_cents": 600, "description": "Their dinner"}
    assert sorted((m["name"], m["active"]) for m in api.members(theirs)) == [("Other", True), ("Them", True)], "their members are untouched"
    assert api.bills(mine) == [], "nothing landed in my project"


@pytest.mark.requirement("R3", "R5")
@pytest.mark.cwe(639)
def test_another_projects_members_cannot_pay_or_owe_my_bills(api, http):
    mine, theirs = api.project(), api.project()
    me, them = api.member(mine, "Me"), api.member(theirs, "Them")
    for body, fields in ((api.bill_body(them, [me]), ["payer_id"]), (api.bill_body(me, [me, them]), ["owers"])):
        problem = api.validation_problem(api.post_bill(mine, body), fields, f"a bill naming another project's member {body}")
        assert problem is None, problem
    bill = api.bill(mine, me, [me])
    problem = api.validation_problem(api.put_bill(mine, bill, api.bill_body(me, [them])), ["owers"], "replacing with another project's ower")
    assert problem is None, problem
    assert api.balances(theirs) == {them["id"]: 0}, "their member's balance did not move"


@pytest.mark.requirement("R3")
@pytest.mark.cwe(285)
def test_another_projects_token_cannot_write(api, http):
    mine, theirs = api.project(), api.project()
    them = api.member(theirs, "Them")
    bill = api.bill(theirs, them, [them])
    attempts = (("POST", "/members", {"name": "Mole"}), ("POST", "/bills", api.bill_body(them, [them])),
                ("PUT", f"/bills/{bill['id']}", api.bill_body(them, [them], amount=1)), ("DELETE", f"/bills/{bill['id']}", None),
                ("PATCH", f"/members/{them['id']}", {"weight": 9}))
    for method, rest, body in attempts:
        api.error(http.request(method, theirs.path(rest), json=body, headers=mine.auth), 403, "forbidden", f"{method} {theirs.path(rest)} with my token")
    assert [(m["name"], m["weight"]) for m in api.members(theirs)] == [("Them", 1)]
    assert [(b["id"], b["amount_cents"]) for b in api.bills(theirs)] == [(bill["id"], bill["amount_cents"])]


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_near_miss_passwords_get_401(api, http):
    password = long_password()
    project = api.project(password=password)
    problems = []
    for label, edit in PASSWORD_EDGES.items():
        wrong = edit(password)
        r = api.post_token(project.slug, wrong)
        if r.status_code != 401:
            problems.append(f"{label}: expected 401, got {api.brief(r)}")
    assert not problems, "passwords that are not the project's:\n" + "\n".join(problems)
    assert api.post_token(project.slug, password).status_code == 200, "the right one still works"


@pytest.mark.requirement("R10")
@pytest.mark.cwe(916)
def test_passwords_are_stored_as_salted_slow_hashes(api, http, db):
    password = api.fresh_password() + "-Shared"
    one, two = api.project(password=password), api.project(password=password)
    stored = {p.slug: db.scalar("SELECT password_hash FROM projects WHERE slug = %s", (p.slug,)) for p in (one, two)}
    values = list(stored.values())
    assert all(isinstance(v, str) and v for v in values), f"password_hash holds a value: {stored}"
    assert values[0] != values[1], f"two projects with the same password store different values (a salt per project): {values}"
    for value in values:
        assert password not in value, "the password itself is stored"
        found = secret_findings({"password_hash": value}, [password])
        plain = [f for f in found if "digest" in f or "itself" in f or "base64" in f]
        assert not plain, f"an unsalted form of the password is stored: {plain}"
        for name in ("md5", "sha1", "sha256", "sha512"):
            assert hashlib.new(name, password.encode()).hexdigest() not in value.lower(), f"an unsalted {name} digest is stored"
        declared = re.search(r"pbkdf2[^$:]*[$:](?:[a-z0-9]+[$:])?(\d+)[$:]", value, re.IGNORECASE)
        if declared:
            assert int(declared.group(1)) >= 100_000, f"PBKDF2 needs at least 100,000 iterations: {value[:40]}..."


@pytest.mark.requirement("R10")
@pytest.mark.cwe(200)
def test_no_answer_carries_the_password_or_its_stored_hash(api, http, db):
    project = api.project()
    stored = db.scalar("SELECT password_hash FROM projects WHERE slug = %s", (project.slug,))
    a = api.member(project, "Lea")
    bill = api.bill(project, a, [a])
    answers = [api.create_project(slug=project.slug, password=project.password), api.post_token(project.slug, project.password),
               api.post_token(project.slug, project.password + "x"), api.get(project), api.get(project, "/members"),
               api.get(project, "/bills"), api.get(project, f"/bills/{bill['id']}"), api.get(project, "/balances"),
               api.get(project, "/settlements"), api.patch_member(project, a, name="Leah")]
    for r in answers:
        text = r.text
        assert project.password not in text, f"{r.request.method} {r.request.path_url} answers the password"
        assert str(stored) not in text, f"{r.request.method} {r.request.path_url} answers the stored hash"
        parts = [p for p in re.split(r"[$:]", str(stored)) if len(p) >= 16]
        assert not any(p in text for p in parts), f"{r.request.method} {r.request.path_url} answers part of the stored hash (salt or digest)"


@pytest.mark.requirement("R10")
@pytest.mark.cwe(330)
def test_tokens_are_random_and_not_made_of_the_password(api, http):
    project = api.project()
    tokens = [api.token(project.slug, project.password) for _ in range(5)] + [project.token]
    assert len(set(tokens)) == len(tokens), "every call issues a new token"
    for token in tokens:
        assert len(token) >= 16, f"at least 128 bits of randomness need at least 16 characters: {token!r}"
        assert project.password not in token, f"a token is not made of the password: {token!r}"
        for name in ("md5", "sha1", "sha256"):
            assert hashlib.new(name, project.password.encode()).hexdigest() not in token, f"a token is not a {name} digest of the password"


@pytest.mark.requirement("R5", "R12")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim_and_touches_nothing_else(api, http, db, checks):
    bystander = api.project()
    kept = api.member(bystander, "Bystander")
    project = api.project(name="Robert'); DROP TABLE projects;--")
    payer = api.member(project, "Payer")
    made = []
    for index, text in enumerate(checks.injection_texts):
        member = api.member(project, f"{text} {index}")
        bill = api.bill(project, payer, [member], amount=100 + index, description=text)
        made.append((member, bill, text, index))
    members = {m["id"]: m["name"] for m in api.members(project)}
    for member, bill, text, index in made:
        assert members.get(member["id"]) == f"{text} {index}", f"a name is stored verbatim: {members.get(member['id'])!r}"
        assert api.get_bill(project, bill)["description"] == text, f"a description is stored verbatim: {text!r}"
        assert db.scalar("SELECT description FROM bills WHERE id = %s", (bill["id"],)) == text
    assert api.get(project).json().get("name") == "Robert'); DROP TABLE projects;--"
    assert [m["id"] for m in api.members(bystander)] == [kept["id"]], "another project was not touched"


@pytest.mark.requirement("R3", "R12")
@pytest.mark.cwe(89)
@pytest.mark.parametrize("slug", ["x' OR '1'='1", "%25", "_", "*", "p-%25"], ids=["sql", "percent", "underscore", "star", "dash-percent"])
def test_hostile_slugs_match_no_project(api, http, slug):
    project = api.project()
    api.error(api.post_token(slug, project.password), 401, "unauthorized", f"a token for the slug {slug!r}")
    r = http.get(f"/api/projects/{slug}/members", headers=project.auth)
    api.error(r, 403, "forbidden", f"a valid token under the slug {slug!r}")


@pytest.mark.requirement("R11", "R12")
@pytest.mark.cwe(79)
def test_markup_in_names_comes_back_as_json_text(api, http):
    project = api.project(name="<script>alert('p')</script>")
    a = api.member(project, "<img src=x onerror=alert(1)>")
    bill = api.bill(project, a, [a], description="</li><script>alert(2)</script>")
    for rest, needle in (("", "<script>alert('p')</script>"), ("/members", "<img src=x onerror=alert(1)>"),
                         (f"/bills/{bill['id']}", "</li><script>alert(2)</script>"), ("/balances", "<img src=x onerror=alert(1)>")):
        r = api.get(project, rest)
        media = (r.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        assert media == "application/json", f"GET {project.path(rest)} is JSON, never HTML: {media!r}"
        assert needle in str(r.json()), f"the markup is answered as the text it is: {r.text[:200]}"


@pytest.mark.requirement("R12")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, db, checks):
    project = api.project()
    a = api.member(project, "Limit")
    slug = api.fresh_slug("huge")
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/projects", {}, {"slug": slug, "name": "Big", "password": api.fresh_password()}, "name")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", project.path("/token"), {}, {"password": project.password}, "password")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", project.path("/members"), project.auth, {"name": "Deep"}, "name")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", project.path("/bills"), project.auth, api.bill_body(a, [a]), "description")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert db.scalar("SELECT count(*) FROM projects WHERE slug = %s", (slug,)) == 0, "a refused project body stored a project"
    assert [m["name"] for m in api.members(project)] == ["Limit"] and api.bills(project) == [], "refused bodies stored nothing"


@pytest.mark.requirement("R2", "R4", "R5")
@pytest.mark.cwe(915)
def test_server_owned_fields_cannot_be_assigned(api, http):
    other = api.project()
    slug, password = api.fresh_slug(), api.fresh_password()
    r = http.post("/api/projects", json={"slug": slug, "name": "Mine", "password": password, "password_hash": "plain", "created_at": "2000-01-01T00:00:00Z"})
    assert r.status_code == 201, f"undefined fields are ignored: {api.brief(r)}"
    assert not str(r.json().get("created_at", "")).startswith("2000"), f"created_at is the service's: {r.text[:200]}"
    assert api.post_token(slug, password).status_code == 200 and api.post_token(slug, "plain").status_code == 401, "the password, not a sent hash, opens it"
    project = api.project()
    r = api.post_member(project, name="Kit", active=False, id=1, project_slug=other.slug)
    assert r.status_code == 201 and r.json().get("active") is True, f"a new member is active whatever is sent: {api.brief(r)}"
    member = r.json()
    assert api.members(other) == [] and [m["id"] for m in api.members(project)] == [member["id"]], "the member is in the path's project"
    body = {**api.bill_body(member, [member], amount=900), "shares": [{"member_id": member["id"], "share_cents": 1}], "id": 1}
    r = api.post_bill(project, body)
    assert r.status_code == 201 and r.json().get("shares") == [{"member_id": member["id"], "share_cents": 900}], f"shares are the service's: {api.brief(r)}"


@pytest.mark.requirement("R5", "R12")
@pytest.mark.cwe(22)
def test_hostile_ids_in_paths_get_404(api, http, service, checks):
    project = api.project()
    a = api.member(project, "Path")
    problems = []
    for method, prefix, body in (("GET", "/bills/", None), ("PUT", "/bills/", api.bill_body(a, [a])), ("DELETE", "/bills/", None),
                                 ("PATCH", "/members/", {"name": "Moved"})):
        problems += checks.traversal_problems(service, http.timeout_s, project.path(prefix), project.auth, method=method, body=body, extra_ids=checks.task_ids)
    assert not problems, "ids that name nothing or climb out of their path:\n" + "\n".join(problems)
    assert [m["name"] for m in api.members(project)] == ["Path"] and api.bills(project) == [], "nothing changed"
