"""Library circulation on PostgreSQL: accounts, catalogue, loans, holds, fines (psycopg 3).

Every write runs in one transaction under one process-wide lock: circulation decisions read
several rows (patron, copy, loans, the title's queue) and must never interleave. The hold-ready
email is sent after the transaction commits, still under the lock, so the answer reports
whether the relay accepted it.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import threading
import urllib.error
import urllib.request
from typing import Any

import psycopg
from psycopg.rows import dict_row
from werkzeug.security import check_password_hash, generate_password_hash

HASH_METHOD = "pbkdf2:sha256:120000"
FINE_PER_DAY, FINE_CAP, BLOCK_ABOVE, MAX_RENEWALS = 10, 1000, 500, 2
CATEGORIES = {"adult": {"limit": 5, "days": 21}, "child": {"limit": 2, "days": 14}}
MAIL_TIMEOUT_S = 5

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS staff (
        id serial PRIMARY KEY, username text NOT NULL UNIQUE, password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS patrons (
        id serial PRIMARY KEY, card_number text NOT NULL UNIQUE, name text NOT NULL, email text NOT NULL,
        category text NOT NULL, password_hash text NOT NULL, fines_owed integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS titles (
        id serial PRIMARY KEY, title text NOT NULL, author text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())""",
    """CREATE TABLE IF NOT EXISTS copies (
        id serial PRIMARY KEY, title_id integer NOT NULL REFERENCES titles(id), barcode text NOT NULL UNIQUE,
        status text NOT NULL DEFAULT 'available')""",
    """CREATE TABLE IF NOT EXISTS loans (
        id serial PRIMARY KEY, patron_id integer NOT NULL REFERENCES patrons(id), copy_id integer NOT NULL REFERENCES copies(id),
        checked_out_on date NOT NULL, due_date date NOT NULL, returned_on date, renewals integer NOT NULL DEFAULT 0,
        fine integer NOT NULL DEFAULT 0)""",
    """CREATE TABLE IF NOT EXISTS holds (
        id serial PRIMARY KEY, title_id integer NOT NULL REFERENCES titles(id), patron_id integer NOT NULL REFERENCES patrons(id),
        status text NOT NULL DEFAULT 'waiting', copy_id integer REFERENCES copies(id), notified boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp())""",
    """CREATE TABLE IF NOT EXISTS sessions (
        token text PRIMARY KEY, role text NOT NULL, subject_id integer NOT NULL)""",
)

LOAN_SELECT = """SELECT l.*, c.barcode, c.title_id, p.category FROM loans l
    JOIN copies c ON c.id = l.copy_id JOIN patrons p ON p.id = l.patron_id"""
HOLD_SELECT = """SELECT h.*, c.barcode,
    CASE WHEN h.status = 'waiting' THEN (SELECT count(*) FROM holds q WHERE q.title_id = h.title_id
        AND q.status = 'waiting' AND q.id <= h.id)::int END AS position
    FROM holds h LEFT JOIN copies c ON c.id = h.copy_id"""


class Refused(Exception):
    """A request the current state refuses: HTTP status and error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def hash_password(password: str) -> str:
    return generate_password_hash(password, method=HASH_METHOD)


def iso_day(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def patron_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "card_number": row["card_number"], "name": row["name"], "email": row["email"], "category": row["category"],
            "fines_owed": row["fines_owed"], "blocked": row["fines_owed"] > BLOCK_ABOVE,
            "created_at": row["created_at"].astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")}


def copy_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "barcode": row["barcode"], "title_id": row["title_id"], "status": row["status"]}


def loan_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "patron_id": row["patron_id"], "barcode": row["barcode"], "title_id": row["title_id"],
            "checked_out_on": iso_day(row["checked_out_on"]), "due_date": iso_day(row["due_date"]), "renewals": row["renewals"],
            "returned_on": iso_day(row["returned_on"]), "fine": row["fine"]}


def hold_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "title_id": row["title_id"], "patron_id": row["patron_id"], "status": row["status"],
            "position": row["position"], "barcode": row["barcode"], "notified": row["notified"]}


Conn = psycopg.Connection[dict[str, Any]]


class Library:
    """All state, in PostgreSQL."""

    def __init__(self, url: str, mailer_url: str) -> None:
        self.url, self.mailer_url = url, mailer_url.rstrip("/")
        self.lock = threading.Lock()
        with self.connect() as conn:
            for statement in SCHEMA:
                conn.execute(statement)

    def connect(self) -> Conn:
        return psycopg.connect(self.url, row_factory=dict_row)

    # ------------------------------------------------------------------ accounts

    def bootstrap(self, username: str, password: str) -> None:
        with self.connect() as conn:
            if conn.execute("SELECT 1 FROM staff WHERE username = %s", (username,)).fetchone() is None:
                conn.execute("INSERT INTO staff (username, password_hash) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                             (username, hash_password(password)))

    def login(self, username: str, password: str) -> dict[str, Any] | None:
        with self.connect() as conn:
            staff = conn.execute("SELECT id, password_hash FROM staff WHERE username = %s", (username,)).fetchone()
            patron = None if staff else conn.execute("SELECT id, password_hash FROM patrons WHERE card_number = %s", (username,)).fetchone()
            account, role = (staff, "staff") if staff else (patron, "patron")
            if account is None or not check_password_hash(account["password_hash"], password):
                return None
            token = secrets.token_urlsafe(32)
            conn.execute("INSERT INTO sessions (token, role, subject_id) VALUES (%s, %s, %s)", (token, role, account["id"]))
            return {"token": token, "role": role, "patron_id": account["id"] if role == "patron" else None}

    def caller(self, token: str) -> dict[str, Any] | None:
        with self.connect() as conn:
            return conn.execute("SELECT role, subject_id FROM sessions WHERE token = %s", (token,)).fetchone()

    def create_staff(self, username: str, password: str) -> dict[str, Any]:
        digest = hash_password(password)
        with self.lock, self.connect() as conn:
            if conn.execute("SELECT 1 FROM staff WHERE username = %s", (username,)).fetchone():
                raise Refused(409, "username_taken", "that username is taken")
            row = conn.execute("INSERT INTO staff (username, password_hash) VALUES (%s, %s) RETURNING id, username, created_at",
                               (username, digest)).fetchone()
        return {"id": row["id"], "username": row["username"],
                "created_at": row["created_at"].astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")}

    # ------------------------------------------------------------------ patrons

    def create_patron(self, data: dict[str, Any]) -> dict[str, Any]:
        digest = hash_password(data["password"])
        with self.lock, self.connect() as conn:
            if conn.execute("SELECT 1 FROM patrons WHERE card_number = %s", (data["card_number"],)).fetchone():
                raise Refused(409, "card_number_taken", "that card number is taken")
            row = conn.execute(
                "INSERT INTO patrons (card_number, name, email, category, password_hash) VALUES (%s, %s, %s, %s, %s) RETURNING *",
                (data["card_number"], data["name"], data["email"], data["category"], digest)).fetchone()
        return patron_json(row)

    def patron(self, patron_id: int) -> dict[str, Any] | None:
        with self.connect() as conn:
            row = conn.execute("SELECT * FROM patrons WHERE id = %s", (patron_id,)).fetchone()
        return patron_json(row) if row else None

    def patrons(self, card_number: str | None, email: str | None) -> list[dict[str, Any]]:
        with self.connect() as conn:
            rows = conn.execute("SELECT * FROM patrons WHERE (%(c)s::text IS NULL OR card_number = %(c)s)"
                                " AND (%(e)s::text IS NULL OR email = %(e)s) ORDER BY id", {"c": card_number, "e": email}).fetchall()
        return [patron_json(r) for r in rows]

    def pay(self, patron_id: int, amount: int) -> dict[str, Any]:
        with self.lock, self.connect() as conn:
            owed = conn.execute("SELECT fines_owed FROM patrons WHERE id = %s", (patron_id,)).fetchone()["fines_owed"]
            if amount > owed:
                raise Refused(409, "overpayment", f"the patron owes {owed} cents")
            conn.execute("UPDATE patrons SET fines_owed = fines_owed - %s WHERE id = %s", (amount, patron_id))
        return {"patron_id": patron_id, "amount": amount, "fines_owed": owed - amount}

    # ------------------------------------------------------------------ catalogue

    def create_title(self, title: str, author: str) -> dict[str, Any]:
        with self.connect() as conn:
            row = conn.execute("INSERT INTO titles (title, author) VALUES (%s, %s) RETURNING id, title, author", (title, author)).fetchone()
        return {**row, "copies": []}

    def title(self, title_id: int) -> dict[str, Any] | None:
        with self.connect() as conn:
            row = conn.execute("SELECT id, title, author FROM titles WHERE id = %s", (title_id,)).fetchone()
            if row is None:
                return None
            copies = conn.execute("SELECT * FROM copies WHERE title_id = %s ORDER BY id", (title_id,)).fetchall()
        return {**row, "copies": [copy_json(c) for c in copies]}

    def add_copy(self, title_id: int, barcode: str) -> dict[str, Any]:
        with self.lock, self.connect() as conn:
            if conn.execute("SELECT 1 FROM copies WHERE barcode = %s", (barcode,)).fetchone():
                raise Refused(409, "barcode_taken", "that barcode is taken")
            row = conn.execute("INSERT INTO copies (title_id, barcode) VALUES (%s, %s) RETURNING *", (title_id, barcode)).fetchone()
        return copy_json(row)

    def copy(self, barcode: str) -> dict[str, Any] | None:
        with self.connect() as conn:
            row = conn.execute("SELECT * FROM copies WHERE barcode = %s", (barcode,)).fetchone()
        return copy_json(row) if row else None

    # ------------------------------------------------------------------ loans

    def loan(self, loan_id: int) -> dict[str, Any] | None:
        with self.connect() as conn:
            row = conn.execute(LOAN_SELECT + " WHERE l.id = %s", (loan_id,)).fetchone()
        return loan_json(row) if row else None

    def loans_of(self, patron_id: int) -> list[dict[str, Any]]:
        with self.connect() as conn:
            return [loan_json(r) for r in conn.execute(LOAN_SELECT + " WHERE l.patron_id = %s ORDER BY l.id", (patron_id,)).fetchall()]

    def checkout(self, card_number: str, barcode: str, day: dt.date) -> dict[str, Any]:
        with self.lock, self.connect() as conn:
            patron = conn.execute("SELECT * FROM patrons WHERE card_number = %s", (card_number,)).fetchone()
            copy = conn.execute("SELECT * FROM copies WHERE barcode = %s", (barcode,)).fetchone()
            if patron is None or copy is None:
                raise Refused(404, "not_found", "no patron with that card number" if patron is None else "no copy with that barcode")
            if patron["fines_owed"] > BLOCK_ABOVE:
                raise Refused(409, "patron_blocked", "the patron owes too much in fines")
            if copy["status"] == "on_loan":
                raise Refused(409, "copy_unavailable", "the copy is on loan")
            shelf = conn.execute("SELECT * FROM holds WHERE copy_id = %s AND status = 'ready'", (copy["id"],)).fetchone()
            if shelf is not None and shelf["patron_id"] != patron["id"]:
                raise Refused(409, "copy_on_hold", "the copy is on the hold shelf for another patron")
            rules = CATEGORIES[patron["category"]]
            current = conn.execute("SELECT count(*) AS n FROM loans WHERE patron_id = %s AND returned_on IS NULL", (patron["id"],)).fetchone()["n"]
            if current >= rules["limit"]:
                raise Refused(409, "loan_limit_reached", f"the patron already has {current} loans")
            row = conn.execute("INSERT INTO loans (patron_id, copy_id, checked_out_on, due_date) VALUES (%s, %s, %s, %s) RETURNING id",
                               (patron["id"], copy["id"], day, day + dt.timedelta(days=rules["days"]))).fetchone()
            conn.execute("UPDATE copies SET status = 'on_loan' WHERE id = %s", (copy["id"],))
            if shelf is not None:
                conn.execute("UPDATE holds SET status = 'fulfilled' WHERE id = %s", (shelf["id"],))
            else:
                conn.execute("UPDATE holds SET status = 'fulfilled' WHERE id = (SELECT id FROM holds WHERE patron_id = %s"
                             " AND title_id = %s AND status = 'waiting' ORDER BY id LIMIT 1)", (patron["id"], copy["title_id"]))
            return loan_json(conn.execute(LOAN_SELECT + " WHERE l.id = %s", (row["id"],)).fetchone())

    def renew(self, loan_id: int, day: dt.date) -> dict[str, Any]:
        with self.lock, self.connect() as conn:
            loan = conn.execute(LOAN_SELECT + " WHERE l.id = %s", (loan_id,)).fetchone()
            owed = conn.execute("SELECT fines_owed FROM patrons WHERE id = %s", (loan["patron_id"],)).fetchone()["fines_owed"]
            if loan["returned_on"] is not None:
                raise Refused(409, "loan_returned", "the loan has been returned")
            if owed > BLOCK_ABOVE:
                raise Refused(409, "patron_blocked", "the patron owes too much in fines")
            if loan["renewals"] >= MAX_RENEWALS:
                raise Refused(409, "renewal_limit", "the loan was already renewed twice")
            if day > loan["due_date"]:
                raise Refused(409, "loan_overdue", "an overdue loan cannot be renewed")
            waiting = conn.execute("SELECT 1 FROM holds WHERE title_id = %s AND status = 'waiting' AND patron_id <> %s",
                                   (loan["title_id"], loan["patron_id"])).fetchone()
            if waiting:
                raise Refused(409, "on_hold", "another patron is waiting for this title")
            due = day + dt.timedelta(days=CATEGORIES[loan["category"]]["days"])
            conn.execute("UPDATE loans SET due_date = %s, renewals = renewals + 1 WHERE id = %s", (due, loan_id))
            return loan_json(conn.execute(LOAN_SELECT + " WHERE l.id = %s", (loan_id,)).fetchone())

    def checkin(self, barcode: str, day: dt.date) -> dict[str, Any]:
        with self.lock:
            with self.connect() as conn:
                copy = conn.execute("SELECT * FROM copies WHERE barcode = %s", (barcode,)).fetchone()
                if copy is None:
                    raise Refused(404, "not_found", "no copy with that barcode")
                loan = conn.execute("SELECT * FROM loans WHERE copy_id = %s AND returned_on IS NULL", (copy["id"],)).fetchone()
                if loan is None:
                    raise Refused(409, "not_on_loan", "the copy is not on loan")
                late = max(0, (day - loan["due_date"]).days)
                fine = min(FINE_PER_DAY * late, FINE_CAP)
                conn.execute("UPDATE loans SET returned_on = %s, fine = %s WHERE id = %s", (day, fine, loan["id"]))
                conn.execute("UPDATE patrons SET fines_owed = fines_owed + %s WHERE id = %s", (fine, loan["patron_id"]))
                hold_id = self._hand_over(conn, copy)
            if hold_id is not None:
                self._notify(hold_id)
            with self.connect() as conn:
                return {"loan": loan_json(conn.execute(LOAN_SELECT + " WHERE l.id = %s", (loan["id"],)).fetchone()),
                        "copy": copy_json(conn.execute("SELECT * FROM copies WHERE id = %s", (copy["id"],)).fetchone()),
                        "hold": self._hold(conn, hold_id) if hold_id is not None else None}

    # ------------------------------------------------------------------ holds

    @staticmethod
    def _hold(conn: Conn, hold_id: int) -> dict[str, Any] | None:
        row = conn.execute(HOLD_SELECT + " WHERE h.id = %s", (hold_id,)).fetchone()
        return hold_json(row) if row else None

    def hold(self, hold_id: int) -> dict[str, Any] | None:
        with self.connect() as conn:
            return self._hold(conn, hold_id)

    def holds_of(self, patron_id: int) -> list[dict[str, Any]]:
        with self.connect() as conn:
            return [hold_json(r) for r in conn.execute(HOLD_SELECT + " WHERE h.patron_id = %s ORDER BY h.id", (patron_id,)).fetchall()]

    def queue(self, title_id: int) -> list[dict[str, Any]]:
        with self.connect() as conn:
            rows = conn.execute(HOLD_SELECT + " WHERE h.title_id = %s AND h.status = 'waiting' ORDER BY h.id", (title_id,)).fetchall()
        return [hold_json(r) for r in rows]

    def place_hold(self, title_id: int, patron_id: int) -> dict[str, Any]:
        with self.lock, self.connect() as conn:
            patron = conn.execute("SELECT * FROM patrons WHERE id = %s", (patron_id,)).fetchone()
            title = conn.execute("SELECT id FROM titles WHERE id = %s", (title_id,)).fetchone()
            if patron is None or title is None:
                raise Refused(404, "not_found", "no such patron" if patron is None else "no such title")
            if patron["fines_owed"] > BLOCK_ABOVE:
                raise Refused(409, "patron_blocked", "the patron owes too much in fines")
            if conn.execute("SELECT 1 FROM loans l JOIN copies c ON c.id = l.copy_id WHERE l.patron_id = %s AND c.title_id = %s"
                            " AND l.returned_on IS NULL", (patron_id, title_id)).fetchone():
                raise Refused(409, "already_on_loan", "the patron has this title on loan")
            if conn.execute("SELECT 1 FROM holds WHERE patron_id = %s AND title_id = %s AND status IN ('waiting', 'ready')",
                            (patron_id, title_id)).fetchone():
                raise Refused(409, "already_on_hold", "the patron already holds this title")
            row = conn.execute("INSERT INTO holds (title_id, patron_id) VALUES (%s, %s) RETURNING id", (title_id, patron_id)).fetchone()
            return self._hold(conn, row["id"]) or {}

    def cancel_hold(self, hold_id: int) -> None:
        with self.lock:
            with self.connect() as conn:
                hold = conn.execute("SELECT * FROM holds WHERE id = %s", (hold_id,)).fetchone()
                if hold["status"] not in ("waiting", "ready"):
                    raise Refused(409, "hold_closed", f"the hold is already {hold['status']}")
                conn.execute("UPDATE holds SET status = 'cancelled' WHERE id = %s", (hold_id,))
                handed = None
                if hold["status"] == "ready":
                    copy = conn.execute("SELECT * FROM copies WHERE id = %s", (hold["copy_id"],)).fetchone()
                    handed = self._hand_over(conn, copy)
            if handed is not None:
                self._notify(handed)

    @staticmethod
    def _hand_over(conn: Conn, copy: dict[str, Any]) -> int | None:
        """Put the copy on the shelf for the title's oldest waiting hold (its id), or make it available (None)."""
        first = conn.execute("SELECT id FROM holds WHERE title_id = %s AND status = 'waiting' ORDER BY id LIMIT 1",
                             (copy["title_id"],)).fetchone()
        if first is None:
            conn.execute("UPDATE copies SET status = 'available' WHERE id = %s", (copy["id"],))
            return None
        conn.execute("UPDATE holds SET status = 'ready', copy_id = %s WHERE id = %s", (copy["id"], first["id"]))
        conn.execute("UPDATE copies SET status = 'on_hold_shelf' WHERE id = %s", (copy["id"],))
        return int(first["id"])

    def _notify(self, hold_id: int) -> None:
        """Send the hold-ready email once; mark the hold notified when the relay answers 202."""
        with self.connect() as conn:
            row = conn.execute("SELECT p.email, t.title, c.barcode FROM holds h JOIN patrons p ON p.id = h.patron_id"
                               " JOIN titles t ON t.id = h.title_id JOIN copies c ON c.id = h.copy_id WHERE h.id = %s", (hold_id,)).fetchone()
        message = {"to": row["email"], "subject": f"Hold ready: {row['title']}",
                   "text": f"Your hold is ready: \"{row['title']}\" (copy {row['barcode']}) is waiting for you at the library."}
        request = urllib.request.Request(self.mailer_url + "/messages", data=json.dumps(message).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=MAIL_TIMEOUT_S) as response:
                accepted = response.status == 202
        except (urllib.error.URLError, OSError, ValueError):
            accepted = False
        if accepted:
            with self.connect() as conn:
                conn.execute("UPDATE holds SET notified = true WHERE id = %s", (hold_id,))
