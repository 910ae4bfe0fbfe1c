"""Security rules of spec.md, one rule and one path at a time (REVIEW.md "Security rules").

Every answer any item of this task receives is also checked, by conftest.py's
http_response_checks, for a password or a hash of it ("No response ever contains a password").
"""

from __future__ import annotations

import uuid

import pytest

from pytest_backendbench.http.hostile import hostile_findings

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security")]


@pytest.mark.requirement("R18")
@pytest.mark.cwe(200)
def test_no_answer_carries_a_password(api, http, checks):
    body = api.patron_body()
    answers = [http.post("/patrons", json=body, headers=api.staff.headers)]
    answers.append(http.post("/auth/token", json={"username": body["card_number"], "password": body["password"]}))
    patron_id = answers[0].json()["id"]
    answers.append(http.get(f"/patrons/{patron_id}", headers=api.staff.headers))
    answers.append(http.get("/patrons", params={"card_number": body["card_number"]}, headers=api.staff.headers))
    answers.append(http.post("/patrons", json=body, headers=api.staff.headers))  # 409
    answers.append(http.post("/auth/token", json={"username": body["card_number"], "password": body["password"] + "!"}))  # 401
    leaks = [f"{r.request.method} {r.request.path_url} ({r.status_code}): {leak}" for r in answers for leak in checks.password_leaks(r.text, body["password"])]
    assert not leaks, "answers reveal the password or something derived from it:\n" + "\n".join(leaks)


@pytest.mark.requirement("R18")
@pytest.mark.cwe(916)
@pytest.mark.db_effect("INSERT", table="patrons")
def test_patron_passwords_are_stored_as_salted_slow_hashes(api, db):
    password = "same-" + uuid.uuid4().hex
    a, b = api.patron(password=password), api.patron(password=password)
    rows = db.query("SELECT id, password_hash FROM patrons WHERE id IN (%s, %s) ORDER BY id", (a.id, b.id))
    assert len(rows) == 2, f"both patrons are rows of patrons: {rows}"
    problems = [api.hash_problem(r["password_hash"], password) for r in rows]
    assert not any(problems), "\n".join(p for p in problems if p)
    assert rows[0]["password_hash"] != rows[1]["password_hash"], "two patrons with the same password have different stored values (a salt)"
    columns = db.query("SELECT * FROM patrons WHERE id = %s", (a.id,))[0]
    assert password not in {str(v) for v in columns.values()}, "the password itself is stored in no column"


@pytest.mark.requirement("R2", "R18")
@pytest.mark.cwe(916)
def test_staff_passwords_are_stored_as_salted_slow_hashes(api, http, db):
    password = "same-" + uuid.uuid4().hex
    names = ["lib." + uuid.uuid4().hex[:10] for _ in range(2)]
    for name in names:
        api.ok(http.post("/staff", json={"username": name, "password": password}, headers=api.staff.headers), 201, "create a librarian")
    rows = db.query("SELECT username, password_hash FROM staff WHERE username IN (%s, %s, %s)", (*names, api.admin_username))
    stored = {r["username"]: r["password_hash"] for r in rows}
    assert set(stored) == {*names, api.admin_username}, f"the librarians, the bootstrap one included, are rows of staff: {sorted(stored)}"
    problems = [api.hash_problem(stored[n], password) for n in names] + [api.hash_problem(stored[api.admin_username], api.admin_password)]
    assert not any(problems), "\n".join(p for p in problems if p)
    assert stored[names[0]] != stored[names[1]], "two librarians with the same password have different stored values"


OTHERS = ["/patrons/{patron}", "/patrons/{patron}/loans", "/patrons/{patron}/holds", "/loans/{loan}", "/holds/{hold}"]


@pytest.mark.requirement("R4")
@pytest.mark.cwe(639)
@pytest.mark.parametrize("path", OTHERS)
def test_a_patron_cannot_read_another_patrons_data(api, http, path):
    owner, intruder, title, other = api.patron(), api.patron(), api.title(), api.title()
    loan = api.checkout(owner, title.barcodes[0])
    hold = api.hold(owner, other)
    url = path.format(patron=owner.id, loan=loan["id"], hold=hold["id"])
    api.error(http.get(url, headers=intruder.headers), 404, "not_found", f"another patron's GET {url}")
    assert http.get(url, headers=owner.headers).status_code == 200, f"the owner reads GET {url}"


@pytest.mark.requirement("R4", "R17")
@pytest.mark.cwe(639)
def test_a_patron_cannot_cancel_another_patrons_hold(api, http):
    owner, intruder, title = api.patron(), api.patron(), api.title()
    hold = api.hold(owner, title)
    api.error(http.delete(f"/holds/{hold['id']}", headers=intruder.headers), 404, "not_found", "cancelling another patron's hold")
    assert api.get_hold(hold)["status"] == "waiting", "the hold is untouched"


@pytest.mark.requirement("R4", "R13")
@pytest.mark.cwe(639)
def test_a_patron_cannot_place_a_hold_for_another_patron(api, http):
    victim, intruder, title = api.patron(), api.patron(), api.title()
    r = http.post("/holds", json={"title_id": title.id, "patron_id": victim.id}, headers=intruder.headers)
    api.error(r, 403, "forbidden", "a hold in another patron's name")
    assert api.queue(title) == [], "no hold was placed"


@pytest.mark.requirement("R3", "R12")
@pytest.mark.cwe(285)
def test_a_patron_cannot_waive_their_own_fines(api, http):
    patron = api.patron()
    api.fine(patron, 700)
    api.error(http.post(f"/patrons/{patron.id}/payments", json={"amount": 700}, headers=patron.headers), 403, "forbidden", "a patron paying themself")
    assert api.owed(patron) == 700


@pytest.mark.requirement("R3")
@pytest.mark.cwe(862)
def test_a_patron_cannot_create_a_librarian(api, http):
    patron, username = api.patron(), "lib." + uuid.uuid4().hex[:10]
    api.error(http.post("/staff", json={"username": username, "password": "escalated!"}, headers=patron.headers), 403, "forbidden", "POST /staff")
    r = http.post("/auth/token", json={"username": username, "password": "escalated!"})
    api.error(r, 401, "unauthorized", "the refused librarian does not exist")


@pytest.mark.requirement("R3", "R11")
@pytest.mark.cwe(285)
def test_a_patron_cannot_check_out_or_return(api, http):
    patron, title = api.patron(), api.title()
    r = http.post("/checkouts", json={"card_number": patron.card_number, "barcode": title.barcodes[0], "date": api.d0}, headers=patron.headers)
    api.error(r, 403, "forbidden", "a patron lending to themself")
    api.checkout(patron, title.barcodes[0], "2030-03-01")
    r = http.post("/returns", json={"barcode": title.barcodes[0], "date": "2030-09-01"}, headers=patron.headers)
    api.error(r, 403, "forbidden", "a patron returning without the desk")
    assert api.status(title.barcodes[0]) == "on_loan" and api.owed(patron) == 0


@pytest.mark.requirement("R2")
@pytest.mark.cwe(287)
def test_malformed_tokens_get_401(api, checks):
    patron = api.patron()
    problems = checks.token_problems(api.http, "GET", f"/patrons/{patron.id}", patron.token)
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R6", "R21")
@pytest.mark.cwe(89)
@pytest.mark.parametrize("param", ["card_number", "email"])
def test_lookups_match_only_literal_text(api, http, param, checks):
    api.patron()
    found = []
    for value in (*checks.injection_texts, "%", "_%", "' OR 1=1--", "%@%"):
        items = api.ok(http.get("/patrons", params={param: value}, headers=api.staff.headers), 200, f"GET /patrons?{param}={value}")["items"]
        if items:
            found.append(f"{param}={value!r} matched {len(items)} patrons")
    assert not found, "no patron has these values, so the lookups answer []:\n" + "\n".join(found)


@pytest.mark.requirement("R2", "R21")
@pytest.mark.cwe(89)
def test_login_is_not_fooled_by_sql(api, http):
    patron = api.patron()
    for username, password in (("' OR '1'='1", "' OR '1'='1"), (patron.card_number + "' --", "x"), (patron.card_number, "' OR '1'='1")):
        api.error(http.post("/auth/token", json={"username": username, "password": password}), 401, "unauthorized", f"login as {username!r}")


@pytest.mark.requirement("R5", "R7", "R21")
@pytest.mark.cwe(89)
def test_hostile_text_is_stored_verbatim(api, http):
    staff = api.staff.headers
    found = hostile_findings(lambda b: http.post("/patrons", json=b, headers=staff), api.patron_body(), fields=["name"],
                             prepare=lambda b: {**b, "card_number": api.card()}, verbatim=["name"], accepted=[201])
    found += hostile_findings(lambda b: http.post("/titles", json=b, headers=staff), {"title": "T", "author": "A"},
                              verbatim=["title", "author"], accepted=[201])
    assert not found, "\n".join(found)


@pytest.mark.requirement("R19")
@pytest.mark.cwe(93)
@pytest.mark.parametrize("field,value", [("name", "Eve\r\nBcc: all@example.org"), ("name", "Eve\nSubject: spam"),
                                         ("email", "eve@example.org\r\nBcc: all@example.org"), ("email", "eve@example.org\nCc: x@example.org")],
                         ids=["name-crlf", "name-lf", "email-crlf", "email-lf"])
def test_line_breaks_cannot_reach_mail_headers_through_patrons(api, http, field, value):
    body = api.patron_body(**{field: value})
    api.invalid(http.post("/patrons", json=body, headers=api.staff.headers), [field], f"a patron {field} with a line break")
    found = api.ok(http.get("/patrons", params={"card_number": body["card_number"]}, headers=api.staff.headers), 200, "look the card up")["items"]
    assert found == [], f"the patron was not created: {found}"


@pytest.mark.requirement("R15", "R19")
@pytest.mark.cwe(93)
def test_a_title_with_a_line_break_never_reaches_the_subject(api, http):
    r = http.post("/titles", json={"title": "Dune\r\nBcc: all@example.org", "author": "Frank Herbert"}, headers=api.staff.headers)
    api.invalid(r, ["title"], "a title with CR LF")
    owner, waiter = api.patron(), api.patron()
    title = api.title(name="Dune Bcc: all@example.org")
    api.checkout(owner, title.barcodes[0], "2030-03-01")
    api.hold(waiter, title)
    api.checkin(title.barcodes[0], "2030-03-02")
    sent = api.mail_to(waiter.email)
    assert [m["json"]["subject"] for m in sent] == ["Hold ready: Dune Bcc: all@example.org"], f"one subject, on one line: {sent}"


@pytest.mark.requirement("R21")
@pytest.mark.cwe(400)
@pytest.mark.parametrize("path,field", [("/patrons", "name"), ("/checkouts", "barcode"), ("/titles", "title")])
def test_oversized_and_deep_bodies_are_refused(api, service, checks, path, field):
    patron, title = api.patron(), api.title()
    body = {"/patrons": api.patron_body(), "/checkouts": {"card_number": patron.card_number, "barcode": title.barcodes[0], "date": api.d0},
            "/titles": {"title": "T", "author": "A"}}[path]
    problems = checks.hostile_body_problems(service, 60, "POST", path, api.staff.headers, body, field)
    assert not problems, "\n".join(problems)
    assert api.status(title.barcodes[0]) == "available", "no refused request lent the copy"


@pytest.mark.requirement("R21")
@pytest.mark.cwe(22)
@pytest.mark.parametrize("prefix,suffix", [("/patrons/", ""), ("/patrons/", "/loans"), ("/loans/", ""), ("/holds/", ""), ("/titles/", ""),
                                           ("/copies/", "")])
def test_hostile_path_ids_get_404(api, service, checks, prefix, suffix):
    problems = checks.traversal_problems(service, 30, prefix, api.staff.headers, suffix, extra_ids=checks.task_ids)
    assert not problems, "\n".join(problems)
