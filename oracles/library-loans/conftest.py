"""Shared setup for the library-loans oracle: staff, patrons, titles with copies, the mailer mock.

Every item builds its own world: fresh card numbers, barcodes and email addresses, its own
titles. What the service sent to the mailer is filtered by the item's own recipient address, so
items never depend on each other, on what the shared service already holds, or on the order of
other items' mail (the mock is never reset: items may run at the same time).

All circulation dates are explicit (spec.md: every circulation request carries its `date`), so
no verdict depends on the clock. The bootstrap librarian's credentials are the ones the task
gives the service (task.yaml, env); every item logs in afresh (tokens may or may not survive a
restart: the spec does not say).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from pytest_backendbench.http.accounts import AccountsApi, Bearer, leak_checks_fixture, task_checks_fixture
from pytest_backendbench.http.api import brief
from pytest_backendbench.http.checks import table_ids

TASK_ENV = yaml.safe_load((Path(__file__).resolve().parents[2] / "benchmarks" / "library-loans" / "task.yaml").read_text(encoding="utf-8"))["env"]
ADMIN_USERNAME, ADMIN_PASSWORD = str(TASK_ENV["LIBRARY_ADMIN_USERNAME"]), str(TASK_ENV["LIBRARY_ADMIN_PASSWORD"])
D0 = "2030-03-01"
PATRON_KEYS = ("id", "card_number", "name", "email", "category", "fines_owed", "blocked", "created_at")
LOAN_KEYS = ("id", "patron_id", "barcode", "title_id", "checked_out_on", "due_date", "renewals", "returned_on", "fine")
HOLD_KEYS = ("id", "title_id", "patron_id", "status", "position", "barcode", "notified")
COPY_KEYS = ("id", "barcode", "title_id", "status")


def day(start: str, offset: int) -> str:
    """``start`` plus ``offset`` days, YYYY-MM-DD."""
    return (dt.date.fromisoformat(start) + dt.timedelta(days=offset)).isoformat()


def card() -> str:
    """A fresh 12-digit card number."""
    return "".join(random.choice("0123456789") for _ in range(11)) + "7"


def barcode() -> str:
    """A fresh barcode (upper-case letters and digits)."""
    return "B" + uuid.uuid4().hex[:11].upper()


def email(domain: str = "mail.example.org") -> str:
    """A fresh address in ``domain`` (fail.example: the mailer answers 503)."""
    return f"p{uuid.uuid4().hex[:12]}@{domain}"


@dataclass
class Caller(Bearer):
    """Someone who sends requests: a librarian or a patron with a token."""

    id: int | None
    token: str
    card_number: str = ""
    email: str = ""
    password: str = ""
    category: str = "adult"


@dataclass
class Title:
    """A title and the barcodes of its copies, in the order they were added."""

    id: int
    title: str
    barcodes: list[str]


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    admin_username, admin_password, d0 = ADMIN_USERNAME, ADMIN_PASSWORD, D0
    errors_carry_message = True
    day = staticmethod(day)
    card = staticmethod(card)
    barcode = staticmethod(barcode)
    email = staticmethod(email)

    def __init__(self, http: requests.Session, staff: Caller, mailer: Any) -> None:
        super().__init__(http)
        self.staff = staff  # type: ignore[assignment]
        self.mailer = mailer

    def invalid(self, response: requests.Response, fields: list[str] | None, what: str) -> None:
        """Assert a 422 validation_error listing exactly ``fields`` (any order)."""
        __tracebackhide__ = True
        problem = self.validation_problem(response, fields, what)
        assert problem is None, problem

    # ---------------------------------------------------------------- accounts

    def patron_body(self, **fields: Any) -> dict[str, Any]:
        return {"card_number": card(), "name": "Pat " + uuid.uuid4().hex[:6], "email": email(), "category": "adult",
                "password": "pw-" + uuid.uuid4().hex, **fields}

    def patron(self, category: str = "adult", address: str | None = None, **fields: Any) -> Caller:
        """A new patron, logged in."""
        body = self.patron_body(category=category, email=address or email(), **fields)
        made = self.ok(self.http.post("/patrons", json=body, headers=self.staff.headers), 201, "create a patron")
        token = self.login(body["card_number"], body["password"])["token"]
        return Caller(int(made["id"]), str(token), body["card_number"], body["email"], body["password"], category)

    def get_patron(self, patron: Caller) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/patrons/{patron.id}", headers=self.staff.headers), 200, "read the patron"))

    def owed(self, patron: Caller) -> int:
        return int(self.get_patron(patron)["fines_owed"])

    # ---------------------------------------------------------------- catalogue

    def title(self, copies: int = 1, name: str | None = None) -> Title:
        """A new title with ``copies`` copies."""
        text = name or "Book " + uuid.uuid4().hex[:8]
        made = self.ok(self.http.post("/titles", json={"title": text, "author": "A. Author"}, headers=self.staff.headers), 201, "create a title")
        codes = [self.add_copy(int(made["id"]))["barcode"] for _ in range(copies)]
        return Title(int(made["id"]), text, codes)

    def add_copy(self, title_id: int, code: str | None = None) -> dict[str, Any]:
        return dict(self.ok(self.http.post(f"/titles/{title_id}/copies", json={"barcode": code or barcode()}, headers=self.staff.headers),
                            201, "add a copy"))

    def copy(self, code: str) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/copies/{code}", headers=self.staff.headers), 200, f"read copy {code}"))

    def status(self, code: str) -> str:
        return str(self.copy(code)["status"])

    # ---------------------------------------------------------------- circulation

    def try_checkout(self, patron: Caller, code: str, date: str = D0) -> requests.Response:
        return self.http.post("/checkouts", json={"card_number": patron.card_number, "barcode": code, "date": date}, headers=self.staff.headers)

    def checkout(self, patron: Caller, code: str, date: str = D0) -> dict[str, Any]:
        return dict(self.ok(self.try_checkout(patron, code, date), 201, f"check {code} out on {date}"))

    def try_return(self, code: str, date: str = D0) -> requests.Response:
        return self.http.post("/returns", json={"barcode": code, "date": date}, headers=self.staff.headers)

    def checkin(self, code: str, date: str = D0) -> dict[str, Any]:
        return dict(self.ok(self.try_return(code, date), 200, f"return {code} on {date}"))

    def try_renew(self, loan: dict[str, Any], date: str, who: Caller | None = None) -> requests.Response:
        return self.http.post(f"/loans/{loan['id']}/renew", json={"date": date}, headers=(who or self.staff).headers)

    def renew(self, loan: dict[str, Any], date: str, who: Caller | None = None) -> dict[str, Any]:
        return dict(self.ok(self.try_renew(loan, date, who), 200, f"renew on {date}"))

    def loan(self, loan: dict[str, Any]) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/loans/{loan['id']}", headers=self.staff.headers), 200, "read the loan"))

    def fine(self, patron: Caller, cents: int) -> None:
        """Make the patron owe ``cents`` (at most 1000) by returning a copy cents/10 days late."""
        title = self.title()
        self.checkout(patron, title.barcodes[0], D0)
        self.checkin(title.barcodes[0], day(D0, (21 if patron.category == "adult" else 14) + cents // 10))

    # ---------------------------------------------------------------- holds

    def try_hold(self, patron: Caller, title: Title | int, who: Caller | None = None) -> requests.Response:
        title_id = title if isinstance(title, int) else title.id
        return self.http.post("/holds", json={"title_id": title_id, "patron_id": patron.id}, headers=(who or self.staff).headers)

    def hold(self, patron: Caller, title: Title) -> dict[str, Any]:
        return dict(self.ok(self.try_hold(patron, title), 201, "place a hold"))

    def waiting(self) -> tuple[Caller, Caller, Title, dict[str, Any], dict[str, Any]]:
        """A new title whose first copy one new patron checked out on 2030-03-01 and another new
        patron holds: (owner, waiter, title, the owner's loan, the waiter's hold)."""
        owner, waiter, title = self.patron(), self.patron(), self.title()
        loan = self.checkout(owner, title.barcodes[0], "2030-03-01")
        return owner, waiter, title, loan, self.hold(waiter, title)

    def get_hold(self, hold: dict[str, Any]) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/holds/{hold['id']}", headers=self.staff.headers), 200, "read the hold"))

    def queue(self, title: Title) -> list[dict[str, Any]]:
        return list(self.ok(self.http.get(f"/titles/{title.id}/holds", headers=self.staff.headers), 200, "read the queue")["items"])

    def cancel(self, hold: dict[str, Any], who: Caller | None = None) -> None:
        self.ok(self.http.delete(f"/holds/{hold['id']}", headers=(who or self.staff).headers), 204, "cancel the hold")

    # ---------------------------------------------------------------- the mailer

    def mail_to(self, address: str) -> list[dict[str, Any]]:
        """Every POST /messages the service sent to ``address``, oldest first (with the mock's answer status)."""
        return [
            r for r in self.mailer.requests()
            if r.get("method") == "POST" and r.get("path") == "/messages" and isinstance(r.get("json"), dict) and r["json"].get("to") == address
        ]


def doc(value: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """``value`` reduced to the documented ``keys`` (answers may carry more)."""
    return {k: value.get(k) for k in keys}


SLOW_HASH = re.compile(
    r"^(\$2[aby]?\$\d{2}\$.{53}"  # bcrypt
    r"|\$argon2(id|i|d)\$.+"  # argon2 (PHC)
    r"|\$scrypt\$.+|scrypt:\d+:\d+:\d+\$.+\$.+|\$7\$.+"  # scrypt (PHC, Werkzeug, crypt)
    r"|\$pbkdf2-sha(1|256|512)\$(?P<passlib>\d+)\$.+"  # passlib
    r"|pbkdf2:sha(1|256|512):(?P<werkzeug>\d+)\$.+\$.+"  # Werkzeug
    r"|pbkdf2_sha(1|256|512)\$(?P<django>\d+)\$.+\$.+)$",  # Django
    re.DOTALL,
)


def hash_problem(stored: Any, password: str) -> str | None:
    """Why ``stored`` is not a salted slow hash of ``password`` in a form the spec lists, or None."""
    if not isinstance(stored, str) or not stored:
        return f"password_hash holds {stored!r}, not a hash string"
    if password in stored:
        return "password_hash contains the password itself"
    found = SLOW_HASH.match(stored)
    if found is None:
        return f"password_hash {stored[:40]!r}... is not bcrypt, argon2, scrypt or PBKDF2 in a form spec.md lists"
    rounds = next((int(v) for v in (found.group("passlib"), found.group("werkzeug"), found.group("django")) if v), None)
    if rounds is not None and rounds < 100_000:
        return f"password_hash uses PBKDF2 with {rounds} iterations; spec.md asks for at least 100,000"
    return None


Api.doc = staticmethod(doc)  # type: ignore[attr-defined]
Api.hash_problem = staticmethod(hash_problem)  # type: ignore[attr-defined]


@pytest.fixture
def staff(http: requests.Session) -> Caller:
    """The bootstrap librarian, freshly logged in."""
    response = http.post("/auth/token", json={"username": ADMIN_USERNAME, "password": ADMIN_PASSWORD})
    if response.status_code != 200:
        pytest.fail(f"setup step 'log in as the bootstrap librarian from task.yaml' expected 200: {brief(response)}", pytrace=False)
    return Caller(None, str(response.json()["token"]))


@pytest.fixture
def mailer(mocks: dict[str, Any]) -> Any:
    """The mail relay mock."""
    return mocks["mailer"]


@pytest.fixture
def api(http: requests.Session, staff: Caller, mailer: Any) -> Api:
    """Setup and inspection helpers bound to the service under test."""
    return Api(http, staff, mailer)


http_response_checks = leak_checks_fixture()


checks = task_checks_fixture(task_ids=table_ids("loans"))
