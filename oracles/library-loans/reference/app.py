"""Library loans: a Flask JSON API over library.Library (PostgreSQL, hold-ready emails via the mailer).

Each handler checks in the spec's precedence: 401, 403 (staff only), 404 for the path id, 422
for the body, then what the body names (404) and the state (409, raised by library.Refused).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from typing import Any, Callable

from flask import Flask, Response, jsonify, request
from library import CATEGORIES, Library, Refused

MAX_ID = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
EMAIL = re.compile(r"^[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")
USERNAME = re.compile(r"^[a-z][a-z0-9_.-]{2,31}$")
CARD = re.compile(r"^[0-9]{8,14}$")
BARCODE = re.compile(r"^[A-Z0-9]{4,20}$")
DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
ID = re.compile(r"^[0-9]{1,10}$")


class Answer(Exception):
    """An error answer raised from a helper."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def invalid(fields: list[str]) -> Answer:
    return Answer(422, "validation_error", "invalid: " + ", ".join(fields), fields)


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def body() -> dict[str, Any]:
    """The JSON object sent, or a 422 naming ``body`` (too large, too deep, not JSON, not an object)."""
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise Answer(413, "payload_too_large", "the body is larger than 1 MiB")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise invalid(["body"]) from None
    if nesting_depth(data) > MAX_BODY_DEPTH or not isinstance(data, dict):
        raise invalid(["body"])
    return data


def text(value: Any, limit: int) -> bool:
    """A non-blank string of at most ``limit`` characters without control characters."""
    return isinstance(value, str) and value.strip() != "" and len(value) <= limit and not CONTROL.search(value)


def matches(pattern: re.Pattern[str], value: Any) -> bool:
    return isinstance(value, str) and pattern.match(value) is not None


def day(value: Any) -> dt.date | None:
    if not matches(DAY, value):
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


def integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def path_id(raw: str) -> int:
    if not ID.match(raw) or int(raw) > MAX_ID:
        raise Answer(404, "not_found", "no such resource")
    return int(raw)


def create_app() -> Flask:
    library = Library(os.environ["DATABASE_URL"], os.environ.get("MAILER_URL", "http://127.0.0.1:9300"))
    library.bootstrap(os.environ["LIBRARY_ADMIN_USERNAME"], os.environ["LIBRARY_ADMIN_PASSWORD"])
    app = Flask(__name__)

    @app.errorhandler(Answer)
    def answer(err: Answer) -> Any:
        payload: dict[str, Any] = {"error": err.code, "message": err.message}
        if err.fields is not None:
            payload["fields"] = err.fields
        return jsonify(payload), err.status

    @app.errorhandler(Refused)
    def refused(err: Refused) -> Any:
        return jsonify({"error": err.code, "message": err.message}), err.status

    @app.errorhandler(404)
    def not_found(_err: Any) -> Any:
        return jsonify({"error": "not_found", "message": "no such resource"}), 404

    @app.errorhandler(405)
    def method_not_allowed(_err: Any) -> Any:
        return jsonify({"error": "method_not_allowed", "message": "this path does not take that method"}), 405

    @app.errorhandler(413)
    def too_large(_err: Any) -> Any:
        return jsonify({"error": "payload_too_large", "message": "the body is larger than 1 MiB"}), 413

    @app.errorhandler(500)
    def internal_error(_err: Any) -> Any:
        return jsonify({"error": "internal_error", "message": "unexpected failure"}), 500

    def caller(staff_only: bool = False) -> dict[str, Any]:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        who = library.caller(token) if scheme == "Bearer" and token and " " not in token else None
        if who is None:
            raise Answer(401, "unauthorized", "a valid bearer token is required")
        if staff_only and who["role"] != "staff":
            raise Answer(403, "forbidden", "only staff may do this")
        return dict(who)

    def own_patron(who: dict[str, Any], raw: str) -> int:
        """The path's patron id when the caller may see that patron (404 otherwise)."""
        patron_id = path_id(raw)
        if (who["role"] == "patron" and who["subject_id"] != patron_id) or library.patron(patron_id) is None:
            raise Answer(404, "not_found", "no such patron")
        return patron_id

    def visible(who: dict[str, Any], row: dict[str, Any] | None, what: str) -> dict[str, Any]:
        if row is None or (who["role"] == "patron" and row["patron_id"] != who["subject_id"]):
            raise Answer(404, "not_found", f"no such {what}")
        return row

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.post("/auth/token")
    def login() -> Any:
        data = body()
        fields = [f for f in ("username", "password") if not isinstance(data.get(f), str)]
        if fields:
            raise invalid(fields)
        token = library.login(data["username"], data["password"])
        if token is None:
            raise Answer(401, "unauthorized", "wrong username or password")
        return jsonify(token)

    @app.post("/staff")
    def create_staff() -> Any:
        caller(staff_only=True)
        data = body()
        fields = [] if matches(USERNAME, data.get("username")) else ["username"]
        password = data.get("password")
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            fields.append("password")
        if fields:
            raise invalid(fields)
        return jsonify(library.create_staff(data["username"], password)), 201

    @app.post("/patrons")
    def create_patron() -> Any:
        caller(staff_only=True)
        data = body()
        fields = [] if matches(CARD, data.get("card_number")) else ["card_number"]
        if not text(data.get("name"), 100):
            fields.append("name")
        email = data.get("email")
        if not matches(EMAIL, email) or len(email) > 254:
            fields.append("email")
        if data.get("category") not in CATEGORIES:
            fields.append("category")
        password = data.get("password")
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            fields.append("password")
        if fields:
            raise invalid(fields)
        return jsonify(library.create_patron(data)), 201

    @app.get("/patrons")
    def list_patrons() -> Any:
        caller(staff_only=True)
        return jsonify({"items": library.patrons(request.args.get("card_number"), request.args.get("email"))})

    @app.get("/patrons/<raw>")
    def get_patron(raw: str) -> Any:
        return jsonify(library.patron(own_patron(caller(), raw)))

    @app.get("/patrons/<raw>/loans")
    def patron_loans(raw: str) -> Any:
        return jsonify({"items": library.loans_of(own_patron(caller(), raw))})

    @app.get("/patrons/<raw>/holds")
    def patron_holds(raw: str) -> Any:
        return jsonify({"items": library.holds_of(own_patron(caller(), raw))})

    @app.post("/patrons/<raw>/payments")
    def pay(raw: str) -> Any:
        patron_id = own_patron(caller(staff_only=True), raw)
        amount = body().get("amount")
        if not integer(amount) or amount < 1:
            raise invalid(["amount"])
        return jsonify(library.pay(patron_id, amount)), 201

    @app.post("/titles")
    def create_title() -> Any:
        caller(staff_only=True)
        data = body()
        fields = [f for f, limit in (("title", 200), ("author", 100)) if not text(data.get(f), limit)]
        if fields:
            raise invalid(fields)
        return jsonify(library.create_title(data["title"], data["author"])), 201

    def known_title(raw: str) -> int:
        title_id = path_id(raw)
        if library.title(title_id) is None:
            raise Answer(404, "not_found", "no such title")
        return title_id

    @app.get("/titles/<raw>")
    def get_title(raw: str) -> Any:
        caller()
        return jsonify(library.title(known_title(raw)))

    @app.post("/titles/<raw>/copies")
    def add_copy(raw: str) -> Any:
        caller(staff_only=True)
        title_id = known_title(raw)
        barcode = body().get("barcode")
        if not matches(BARCODE, barcode):
            raise invalid(["barcode"])
        return jsonify(library.add_copy(title_id, barcode)), 201

    @app.get("/titles/<raw>/holds")
    def title_holds(raw: str) -> Any:
        caller(staff_only=True)
        return jsonify({"items": library.queue(known_title(raw))})

    @app.get("/copies/<raw>")
    def get_copy(raw: str) -> Any:
        caller()
        found = library.copy(raw) if BARCODE.match(raw) else None
        if found is None:
            raise Answer(404, "not_found", "no such copy")
        return jsonify(found)

    def circulation_body(names: tuple[str, ...]) -> tuple[dict[str, Any], dt.date]:
        data = body()
        checks: dict[str, Callable[[Any], bool]] = {"card_number": lambda v: matches(CARD, v), "barcode": lambda v: matches(BARCODE, v),
                                                    "date": lambda v: day(v) is not None}
        fields = [n for n in names if not checks[n](data.get(n))]
        if fields:
            raise invalid(fields)
        return data, day(data["date"]) or dt.date.min

    @app.post("/checkouts")
    def checkout() -> Any:
        caller(staff_only=True)
        data, when = circulation_body(("card_number", "barcode", "date"))
        return jsonify(library.checkout(data["card_number"], data["barcode"], when)), 201

    @app.post("/returns")
    def checkin() -> Any:
        caller(staff_only=True)
        data, when = circulation_body(("barcode", "date"))
        return jsonify(library.checkin(data["barcode"], when))

    @app.get("/loans/<raw>")
    def get_loan(raw: str) -> Any:
        who = caller()
        return jsonify(visible(who, library.loan(path_id(raw)), "loan"))

    @app.post("/loans/<raw>/renew")
    def renew(raw: str) -> Any:
        who = caller()
        loan = visible(who, library.loan(path_id(raw)), "loan")
        _, when = circulation_body(("date",))
        return jsonify(library.renew(loan["id"], when))

    @app.post("/holds")
    def place_hold() -> Any:
        who = caller()
        data = body()
        patron_id = data.get("patron_id")
        if who["role"] == "patron" and integer(patron_id) and patron_id != who["subject_id"]:
            raise Answer(403, "forbidden", "patrons place holds for themselves only")
        fields = [] if integer(data.get("title_id")) else ["title_id"]
        if who["role"] == "patron" and patron_id is None:
            patron_id = who["subject_id"]
        elif not integer(patron_id):
            fields.append("patron_id")
        if fields:
            raise invalid(fields)
        if data["title_id"] > MAX_ID or patron_id > MAX_ID or data["title_id"] < 0 or patron_id < 0:
            raise Answer(404, "not_found", "no such title or patron")
        return jsonify(library.place_hold(data["title_id"], patron_id)), 201

    @app.get("/holds/<raw>")
    def get_hold(raw: str) -> Any:
        who = caller()
        return jsonify(visible(who, library.hold(path_id(raw)), "hold"))

    @app.delete("/holds/<raw>")
    def cancel_hold(raw: str) -> Any:
        who = caller()
        hold = visible(who, library.hold(path_id(raw)), "hold")
        library.cancel_hold(hold["id"])
        return Response(status=204)

    return app


if __name__ == "__main__":
    create_app().run(host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")), threaded=True)
