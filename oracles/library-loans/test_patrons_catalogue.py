"""Patrons, lookups, titles and copies (spec.md: Patrons; Titles and copies)."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R5")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="patrons")
def test_creating_a_patron_answers_the_documented_fields(api, http, staff):
    body = api.patron_body(category="child", name="Matilda Wormwood")
    r = http.post("/patrons", json=body, headers=staff.headers)
    made = api.ok(r, 201, "create a patron")
    expected = {"card_number": body["card_number"], "name": "Matilda Wormwood", "email": body["email"], "category": "child",
                "fines_owed": 0, "blocked": False}
    assert {k: made.get(k) for k in expected} == expected, f"the new patron: {made}"
    assert isinstance(made.get("id"), int) and isinstance(made.get("created_at"), str), f"id and created_at: {made}"


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,value", [
    ("card_number", "1234567"), ("card_number", "123456789012345"), ("card_number", "12345abc9"), ("card_number", 123456789),
    ("name", "   "), ("name", "n" * 101), ("email", "not-an-address"), ("email", "a b@example.org"), ("email", "x@" + "d" * 250 + ".org"),
    ("category", "senior"), ("category", None), ("password", "seven77"), ("password", "p" * 129),
], ids=["card-7-digits", "card-15-digits", "card-letters", "card-number-type", "name-blank", "name-101", "email-no-at", "email-space",
        "email-255", "category-unknown", "category-null", "password-7", "password-129"])
def test_invalid_patron_fields_get_422_naming_the_field(api, http, staff, field, value):
    body = api.patron_body(**{field: value})
    api.invalid(http.post("/patrons", json=body, headers=staff.headers), [field], f"POST /patrons with {field}={value!r}")


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
def test_boundary_lengths_are_accepted(api, http, staff):
    body = api.patron_body(card_number=api.card()[:8], name="n" * 100, password="p" * 8)
    api.ok(http.post("/patrons", json=body, headers=staff.headers), 201, "8-digit card, 100-character name, 8-character password")
    body = api.patron_body(card_number="9" + api.card() + "1", password="p" * 128)
    api.ok(http.post("/patrons", json=body, headers=staff.headers), 201, "14-digit card, 128-character password")


@pytest.mark.requirement("R5", "R20")
@pytest.mark.category("validation")
def test_every_invalid_field_is_listed(api, http, staff):
    r = http.post("/patrons", json={"card_number": "x", "name": "", "email": "nope", "category": "pirate"}, headers=staff.headers)
    api.invalid(r, ["card_number", "name", "email", "category", "password"], "POST /patrons with five invalid or missing fields")


@pytest.mark.requirement("R20")
@pytest.mark.category("validation")
@pytest.mark.parametrize("raw", ['["a list"]', '"text"', "{not json", "null"], ids=["array", "string", "broken", "null"])
def test_a_body_that_is_not_an_object_gets_422_body(api, http, staff, raw):
    r = http.post("/patrons", data=raw, headers={**staff.headers, "Content-Type": "application/json"})
    api.invalid(r, ["body"], f"POST /patrons with the body {raw}")


@pytest.mark.requirement("R5")
@pytest.mark.category("state")
def test_a_taken_card_number_gets_409(api, http, staff):
    first = api.patron()
    r = http.post("/patrons", json=api.patron_body(card_number=first.card_number), headers=staff.headers)
    api.error(r, 409, "card_number_taken", "a second patron with the same card number")
    api.login(first.card_number, first.password)


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
def test_lookup_by_card_number_and_by_email(api, http, staff):
    a, b = api.patron(), api.patron()
    for params, want in (({"card_number": a.card_number}, [a.id]), ({"email": b.email}, [b.id]),
                         ({"card_number": a.card_number, "email": b.email}, []), ({"card_number": b.card_number, "email": b.email}, [b.id])):
        found = api.ok(http.get("/patrons", params=params, headers=staff.headers), 200, f"GET /patrons {params}")["items"]
        assert [p["id"] for p in found] == want, f"GET /patrons {params} keeps exactly the matching patrons {want}: {found}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_patrons_are_listed_oldest_first(api, http, staff):
    shared = f"same.{uuid.uuid4().hex[:8]}@mail.example.org"
    made = [api.patron(address=shared) for _ in range(3)]
    found = api.ok(http.get("/patrons", params={"email": shared}, headers=staff.headers), 200, "GET /patrons by the shared email")["items"]
    assert [p["id"] for p in found] == [p.id for p in made], f"three patrons with one email, oldest first: {found}"
    everyone = [p["id"] for p in api.ok(http.get("/patrons", headers=staff.headers), 200, "GET /patrons")["items"]]
    mine = [i for i in everyone if i in {p.id for p in made}]
    assert mine == [p.id for p in made], "the unfiltered list holds them, oldest first"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_lookups_are_exact_not_prefixes_or_case_folded(api, http, staff):
    patron = api.patron()
    for params in ({"card_number": patron.card_number[:-1]}, {"email": patron.email.upper()}, {"email": patron.email[1:]}):
        found = api.ok(http.get("/patrons", params=params, headers=staff.headers), 200, f"GET /patrons {params}")["items"]
        assert patron.id not in [p["id"] for p in found], f"{params} is not the patron's exact value, yet matched: {found}"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="copies")
def test_titles_and_copies(api, http, staff):
    made = api.ok(http.post("/titles", json={"title": "The Name of the Rose", "author": "Umberto Eco"}, headers=staff.headers), 201, "create a title")
    assert (made.get("title"), made.get("author"), made.get("copies")) == ("The Name of the Rose", "Umberto Eco", []), f"the new title: {made}"
    codes = [api.barcode() for _ in range(3)]
    for code in codes:
        copy = api.add_copy(made["id"], code)
        assert api.doc(copy, ("barcode", "title_id", "status")) == {"barcode": code, "title_id": made["id"], "status": "available"}, f"copy: {copy}"
    title = api.ok(http.get(f"/titles/{made['id']}", headers=staff.headers), 200, "read the title")
    assert [c["barcode"] for c in title["copies"]] == codes, f"copies in the order they were added: {title['copies']}"


@pytest.mark.requirement("R7")
@pytest.mark.category("authorization")
def test_patrons_read_titles_and_copies(api, http):
    patron, title = api.patron(), api.title(copies=1)
    r = http.get(f"/titles/{title.id}", headers=patron.headers)
    assert r.status_code == 200 and r.json().get("title") == title.title, f"a patron reads a title: {r.status_code} {r.text[:200]}"
    r = http.get(f"/copies/{title.barcodes[0]}", headers=patron.headers)
    assert r.status_code == 200 and r.json().get("status") == "available", f"a patron reads a copy: {r.status_code} {r.text[:200]}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_a_taken_barcode_gets_409_even_on_another_title(api, http, staff):
    first, second = api.title(copies=1), api.title(copies=0)
    r = http.post(f"/titles/{second.id}/copies", json={"barcode": first.barcodes[0]}, headers=staff.headers)
    api.error(r, 409, "barcode_taken", "a barcode already used by another title's copy")
    title = api.ok(http.get(f"/titles/{second.id}", headers=staff.headers), 200, "read the second title")
    assert title["copies"] == [], f"nothing was added: {title}"


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
@pytest.mark.parametrize("value", ["abc123", "AB1", "A" * 21, "AB-123", 12345, None], ids=["lower-case", "3-chars", "21-chars", "dash", "number", "null"])
def test_invalid_barcodes_get_422(api, http, staff, value):
    title = api.title(copies=0)
    api.invalid(http.post(f"/titles/{title.id}/copies", json={"barcode": value}, headers=staff.headers), ["barcode"], f"barcode {value!r}")


@pytest.mark.requirement("R7", "R19")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,value", [("title", "  "), ("title", "t" * 201), ("author", ""), ("author", "a" * 101), ("title", 42),
                                         ("title", "Tab\there"), ("author", "Line\nbreak")],
                         ids=["title-blank", "title-201", "author-empty", "author-101", "title-number", "title-tab", "author-newline"])
def test_invalid_titles_get_422(api, http, staff, field, value):
    body = {"title": "A title", "author": "An author", field: value}
    api.invalid(http.post("/titles", json=body, headers=staff.headers), [field], f"POST /titles with {field}={value!r}")


@pytest.mark.requirement("R7", "R20")
@pytest.mark.category("api_surface")
def test_unknown_titles_and_copies_get_404(api, http, staff):
    title = api.title(copies=0)
    missing = title.id + 1_000_000
    api.error(http.get(f"/titles/{missing}", headers=staff.headers), 404, "not_found", "an unknown title")
    api.error(http.post(f"/titles/{missing}/copies", json={"barcode": api.barcode()}, headers=staff.headers), 404, "not_found",
              "a copy for an unknown title")
    api.error(http.get(f"/copies/{api.barcode()}", headers=staff.headers), 404, "not_found", "an unknown barcode")


@pytest.mark.requirement("R7", "R20")
@pytest.mark.category("validation")
def test_an_unknown_title_wins_over_an_invalid_barcode(api, http, staff):
    title = api.title(copies=0)
    r = http.post(f"/titles/{title.id + 1_000_000}/copies", json={"barcode": "bad"}, headers=staff.headers)
    api.error(r, 404, "not_found", "404 for the path id comes before 422 for the body")
