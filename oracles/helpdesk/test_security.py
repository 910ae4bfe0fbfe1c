"""Security items (spec.md: Passwords, Roles, Tickets, Articles, "Limits and hostile input"), each tagged with its CWE."""

from __future__ import annotations

import re

import pytest

from pytest_backendbench.http.secrets import secret_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]

EMAIL_FORM = re.compile(r"[^\s@]+@[^\s@]+\.[^\s@]+")
"""spec.md's email form, ``local@domain.tld`` with no whitespace."""


@pytest.mark.requirement("R8")
@pytest.mark.cwe(639)
def test_a_customer_reaches_no_other_customers_ticket(api, http, db):
    alice, bob, agent = api.customer(), api.customer(), api.agent()
    theirs = api.ticket(bob, title="Bob's secret ticket")
    api.article(agent, theirs, body="Reply to Bob")
    for method, path, body in (("GET", f"/api/tickets/{theirs['id']}", None), ("PATCH", f"/api/tickets/{theirs['id']}", {"title": "Mine now"}),
                               ("GET", f"/api/tickets/{theirs['id']}/articles", None), ("POST", f"/api/tickets/{theirs['id']}/articles", {"body": "Hi Bob"})):
        api.error(api.call(alice, method, path, json=body), 404, "not_found", f"alice: {method} {path}")
    for params in ({}, {"customer_id": bob.id}, {"state": "open"}, {"breached": "false"}):
        assert theirs["id"] not in api.ids(alice, **params), f"bob's ticket in alice's list {params}"
    got = api.get(bob, theirs)
    assert (got["title"], len(api.articles(bob, theirs))) == ("Bob's secret ticket", 2), f"bob's ticket is untouched: {got}"
    assert db.scalar("SELECT count(*) FROM articles WHERE ticket_id = %s AND author_id = %s", (int(theirs["id"]), alice.id)) == 0


@pytest.mark.requirement("R12")
@pytest.mark.cwe(200)
def test_internal_notes_never_reach_the_customer(api, http):
    customer, agent, ticket = api.desk()
    secret = f"INTERNAL-{api.unique('note')}"
    api.article(agent, ticket, body=secret, internal=True)
    api.article(agent, ticket, body="public")
    answers = [api.call(customer, "GET", f"/api/tickets/{ticket['id']}/articles"), api.call(customer, "GET", f"/api/tickets/{ticket['id']}"),
               api.call(customer, "GET", "/api/tickets"), api.call(customer, "GET", "/api/tickets", params={"state": "open"}),
               api.call(customer, "POST", f"/api/tickets/{ticket['id']}/articles", json={"body": "thanks"})]
    leaks = [api.brief(r) for r in answers if secret in r.text]
    assert not leaks, "an internal note reached the customer:\n" + "\n".join(leaks)
    assert all(a["internal"] is False for a in api.articles(customer, ticket)), "customers see only public articles"


@pytest.mark.requirement("R12")
@pytest.mark.cwe(285)
def test_a_customer_cannot_write_an_internal_note(api, http, db):
    customer = api.customer()
    ticket = api.ticket(customer)
    api.error(api.post_article(customer, ticket, body="let me hide this", internal=True), 403, "forbidden", "a customer's internal note")
    api.error(api.post_article(customer, ticket, body=" ", internal=True), 403, "forbidden", "403 comes before 422")
    assert db.scalar("SELECT count(*) FROM articles WHERE ticket_id = %s", (int(ticket["id"]),)) == 1, "nothing was stored"


@pytest.mark.requirement("R4", "R6", "R15")
@pytest.mark.cwe(862)
def test_admin_and_agent_endpoints_refuse_lower_roles(api, http):
    customer, agent = api.customer(), api.agent()
    api.policy("normal", 500, 5000)
    problems = []
    for actor, role, method, path, body in (
        (customer, "customer", "GET", "/api/users", None), (customer, "customer", "POST", "/api/users", {"email": api.fresh_email(), "name": "x", "password": api.PASSWORD, "role": "agent"}),
        (customer, "customer", "GET", "/api/sla", None), (customer, "customer", "PUT", "/api/sla/normal", {"first_response_s": 1, "resolution_s": 1}),
        (customer, "customer", "DELETE", "/api/sla/normal", None), (customer, "customer", "GET", "/api/escalations", None),
        (agent, "agent", "GET", "/api/users", None), (agent, "agent", "PUT", "/api/sla/normal", {"first_response_s": 1, "resolution_s": 1}),
        (agent, "agent", "DELETE", "/api/sla/normal", None),
    ):
        r = api.call(actor, method, path, json=body)
        if r.status_code != 403 or r.json().get("error") != "forbidden":
            problems.append(f"a {role}: {method} {path}: expected 403 forbidden, got {api.brief(r)}")
    assert not problems, "role checks:\n" + "\n".join(problems)
    policies = api.ok(api.call(api.admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert [(p["first_response_s"], p["resolution_s"]) for p in policies if p["priority"] == "normal"] == [(500, 5000)], "the policy is unchanged"


@pytest.mark.requirement("R2", "R4")
@pytest.mark.cwe(915)
def test_registration_cannot_choose_a_role(api, http):
    for role in ("admin", "agent"):
        email = api.fresh_email()
        r = http.post("/api/auth/register", json={"email": email, "name": "Mallory", "password": api.PASSWORD, "role": role, "id": 1})
        made = api.ok(r, 201, f"register with role {role}")
        assert made["role"] == "customer" and made["id"] != 1, f"a registration is a customer whatever the body says: {made}"
        mallory = api.login(email, api.PASSWORD)
        assert mallory.role == "customer"
        api.error(api.call(mallory, "GET", "/api/users"), 403, "forbidden", "the self-made customer listing users")


@pytest.mark.requirement("R7", "R10")
@pytest.mark.cwe(915)
def test_customers_cannot_set_server_owned_ticket_fields(api, http):
    customer, other, agent = api.customer(), api.customer(), api.agent()
    api.policy("low", 600, 6000)
    forged = {"title": "Forged", "body": "b", "priority": "low", "state": "closed", "assignee_id": agent.id, "customer_id": other.id,
              "first_response_at": "2000-01-01T00:00:00Z", "first_response_due_at": "2100-01-01T00:00:00Z", "id": 1}
    r = api.call(customer, "POST", "/api/tickets", json=forged)
    if r.status_code == 422:  # refusing fields the contract does not define is allowed; then nothing is stored
        assert api.tickets(customer)["total"] == 0, "a refused ticket was stored"
    else:
        made = api.ok(r, 201, "a ticket with server-owned fields")
        assert (made["state"], made["assignee_id"], made["customer_id"], made["first_response_at"]) == ("new", None, customer.id, None), f"{made}"
        assert abs(api.seconds_between(made["created_at"], made["first_response_due_at"]) - 600) <= 1, f"the due time is the service's: {made}"
        api.error(api.patch(customer, made, state="open"), 403, "forbidden", "the customer setting the state afterwards")
        r = api.patch(customer, made, title="Renamed", customer_id=other.id, first_response_due_at="2100-01-01T00:00:00Z")
        assert r.status_code in (200, 422), f"undefined PATCH fields are ignored (or refused): {api.brief(r)}"
        got = api.get(agent, made)
        assert got["customer_id"] == customer.id and abs(api.seconds_between(got["created_at"], got["first_response_due_at"]) - 600) <= 1, f"{got}"
    assert api.tickets(other)["total"] == 0, "nothing landed with the other customer"


@pytest.mark.requirement("R5", "R16")
@pytest.mark.cwe(916)
def test_passwords_are_stored_as_salted_slow_hashes(api, http, db):
    password = "Same pass phrase 9"
    emails = [api.fresh_email(), api.fresh_email()]
    for email in emails:
        api.ok(http.post("/api/auth/register", json={"email": email, "name": "Twin", "password": password}), 201, "register")
    agent_email = api.fresh_email()
    api.ok(api.call(api.admin, "POST", "/api/users", json={"email": agent_email, "name": "A", "password": password, "role": "agent"}), 201, "create")
    rows = db.query("SELECT email, password_hash FROM users WHERE email IN (%s, %s, %s)", (*emails, agent_email))
    stored = [str(r["password_hash"]) for r in rows]
    assert len(stored) == 3, f"three user rows: {rows}"
    assert len(set(stored)) == 3, f"salted: users with the same password have different stored values: {stored}"
    problems = [f"{value[:60]!r}: {line}" for value in stored for line in secret_findings({"v": value}, [password]) if "shaped like" not in line]
    assert not problems, "the stored value is not the password nor an unsalted digest of it:\n" + "\n".join(problems)
    whole = db.query("SELECT * FROM users WHERE email IN (%s, %s, %s)", (*emails, agent_email))
    plain = [k for row in whole for k, v in row.items() if isinstance(v, str) and password in v]
    assert not plain, f"no column holds the password: {plain}"
    for email in emails:
        api.login(email, password)


@pytest.mark.requirement("R5")
@pytest.mark.cwe(200)
def test_no_answer_carries_a_password_or_its_hash(api, http):
    password = "Unique-" + api.unique("pw")
    email = api.fresh_email()
    answers = [http.post("/api/auth/register", json={"email": email, "name": "Pat", "password": password})]
    answers.append(http.post("/api/auth/login", json={"email": email, "password": password}))
    token = answers[-1].json()["token"]
    answers.append(http.get("/api/me", headers={"Authorization": f"Bearer {token}"}))
    answers.append(api.call(api.admin, "GET", "/api/users", params={"email": email}))
    answers.append(api.call(api.admin, "POST", "/api/users", json={"email": api.fresh_email(), "name": "Q", "password": password, "role": "agent"}))
    answers.append(http.post("/api/auth/register", json={"email": email, "name": "Pat", "password": password}))
    found = [line for r in answers for line in secret_findings(r.json() if r.content else None, [password], user_object=True)]
    assert not found, "an answer carries the password or something made of it:\n" + "\n".join(found)


@pytest.mark.requirement("R7", "R12", "R17")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim(api, http, db, checks):
    customer, agent = api.customer(name="Robert'); DROP TABLE users;--"), api.agent()
    made = []
    for text in checks.injection_texts:
        ticket = api.ticket(customer, title=text, body=text)
        api.article(agent, ticket, body=text, internal=True)
        made.append((ticket, text))
    for ticket, text in made:
        assert api.get(customer, ticket)["title"] == text, f"a title is stored verbatim: {text!r}"
        assert [a["body"] for a in api.articles(agent, ticket)] == [text, text], f"bodies verbatim: {text!r}"
        assert db.scalar("SELECT title FROM tickets WHERE id = %s", (int(ticket["id"]),)) == text
    assert api.tickets(customer)["total"] == len(made), "every ticket, nothing more"
    me = api.ok(api.call(customer, "GET", "/api/me"), 200, "GET /api/me")
    assert me["name"] == "Robert'); DROP TABLE users;--"


@pytest.mark.requirement("R4", "R17")
@pytest.mark.cwe(943)
def test_the_email_filter_matches_only_the_literal_address(api, http):
    customer = api.customer()
    local, domain = customer.email.split("@")
    for pattern in (f"{local[:-1]}_@{domain}", f"{local[:4]}%@{domain}", "%", "*", f"{local}@%", "' OR '1'='1"):
        r = api.call(api.admin, "GET", "/api/users", params={"email": pattern})
        if r.status_code == 422 and not EMAIL_FORM.fullmatch(pattern):
            # not of the form local@domain.tld: "a value outside its documented form ... gets 422" is a reading too
            api.assert_no_problems([api.validation_problem(r, ["email"], f"users with email {pattern!r}")], "the email filter")
            continue
        items = api.ok(r, 200, f"users with email {pattern!r}")["items"]
        assert items == [], f"the email filter {pattern!r} matches no user literally, got {[u.get('email') for u in items][:5]}"


@pytest.mark.requirement("R17")
@pytest.mark.cwe(400)
def test_oversized_and_deeply_nested_bodies_are_refused(api, http, service, checks):
    customer, agent = api.customer(), api.agent()
    problems = checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/tickets", customer.headers, {"title": "Big", "body": "b"}, "body")
    ticket = api.ticket(customer)
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", f"/api/tickets/{ticket['id']}/articles", agent.headers, {"body": "x"}, "body")
    problems += checks.hostile_body_problems(service, http.timeout_s, "POST", "/api/auth/register", {},
                                             {"email": api.fresh_email(), "name": "n", "password": api.PASSWORD}, "name")
    assert not problems, "limits on request bodies:\n" + "\n".join(problems)
    assert api.tickets(customer)["total"] == 1 and len(api.articles(agent, ticket)) == 1, "refused bodies changed nothing"


@pytest.mark.requirement("R8", "R17")
@pytest.mark.cwe(22)
def test_hostile_ids_in_paths_get_404(api, http, service, checks):
    agent = api.agent()
    problems = checks.traversal_problems(service, http.timeout_s, "/api/tickets/", agent.headers, extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/tickets/", agent.headers, "/articles", extra_ids=checks.task_ids)
    problems += checks.traversal_problems(service, http.timeout_s, "/api/tickets/", agent.headers, method="PATCH", body={"state": "closed"},
                                          extra_ids=checks.task_ids)
    assert not problems, "ids that name nothing or climb out of their path:\n" + "\n".join(problems)
    assert http.get("/health").status_code == 200


@pytest.mark.requirement("R3")
@pytest.mark.cwe(287)
def test_a_token_is_bound_to_its_user(api, http):
    alice, bob = api.customer(), api.customer()
    ticket = api.ticket(alice)
    assert api.ok(api.call(bob, "GET", "/api/me"), 200, "bob's /api/me")["id"] == bob.id
    api.error(http.get(f"/api/tickets/{ticket['id']}", headers={"Authorization": f"Bearer {alice.token}x"}), 401, "unauthorized", "a token with a suffix")
    api.error(http.get(f"/api/tickets/{ticket['id']}", headers={"Authorization": f"Bearer {alice.token[:-2]}"}), 401, "unauthorized", "a truncated token")
