"""Forms: a Flask JSON API plus the respondent's page, state in PostgreSQL."""

from __future__ import annotations

import json
import os
import secrets
import threading
from pathlib import Path
from typing import Any

import rules
from flask import Flask, Response, jsonify, request, send_from_directory
from store import Closed, LimitReached, PgStore, Taken, migrate

MAX_ID = 2**31 - 1
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
STATIC = Path(__file__).parent / "static"


def error(status: int, code: str, message: str, fields: list[str] | None = None) -> tuple[Response, int]:
    body: dict[str, Any] = {"error": code, "message": message}
    if fields is not None:
        body["fields"] = fields
    return jsonify(body), status


def invalid(fields: list[str]) -> tuple[Response, int]:
    return error(422, "validation_error", f"invalid: {', '.join(fields)}", fields)


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def owner_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "email": row["email"], "created_at": rules.iso(row["created_at"])}


def form_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "title": row["title"], "slug": row["slug"], "status": row["status"], "response_limit": row["response_limit"],
        "response_count": row["response_count"], "questions": [rules.question_json(q) for q in row["questions"]],
        "created_at": rules.iso(row["created_at"]),
    }


def create_app() -> Flask:
    url = os.environ["DATABASE_URL"]
    migrate(url)
    store = PgStore(url)
    tokens: dict[str, int] = {}
    tokens_lock = threading.Lock()
    app = Flask(__name__, static_folder=None)

    def body() -> tuple[dict[str, Any] | None, bool]:
        """The JSON object sent (or None) and whether the body was too large."""
        raw = request.get_data(cache=True)
        if len(raw) > MAX_BODY_BYTES:
            return None, True
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            return None, False
        if nesting_depth(data) > MAX_BODY_DEPTH:
            return None, False
        return (data if isinstance(data, dict) else None), False

    def refused_body(too_large: bool) -> tuple[Response, int]:
        if too_large:
            return error(413, "payload_too_large", "the body is larger than 1 MiB")
        return error(422, "validation_error", "the body must be a JSON object", ["body"])

    def caller() -> int | None:
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        with tokens_lock:
            return tokens.get(token.strip())

    def own_form(form_id: int) -> tuple[dict[str, Any] | None, Any]:
        """The caller's form, or the error answer to give (401, then 404)."""
        owner_id = caller()
        if owner_id is None:
            return None, error(401, "unauthorized", "a valid bearer token is required")
        form = store.form(form_id) if form_id <= MAX_ID else None
        if form is None or form["owner_id"] != owner_id:
            return None, error(404, "not_found", "no such form")
        return form, None

    @app.errorhandler(404)
    def not_found(_err: Any) -> Any:
        return error(404, "not_found", "no such resource")

    @app.errorhandler(405)
    def method_not_allowed(_err: Any) -> Any:
        return error(405, "method_not_allowed", "this path does not take that method")

    @app.errorhandler(500)
    def internal_error(_err: Any) -> Any:
        return error(500, "internal_error", "unexpected failure")

    @app.get("/health")
    def health() -> Any:
        return jsonify({"status": "ok"})

    @app.get("/")
    def index() -> Any:
        return send_from_directory(STATIC, "index.html")

    @app.get("/f/<path:slug>")
    def form_page(slug: str) -> Any:
        return send_from_directory(STATIC, "form.html")

    @app.get("/static/<path:name>")
    def static_file(name: str) -> Any:
        return send_from_directory(STATIC, name)

    # ---------------------------------------------------------------- accounts

    @app.post("/api/users")
    def register() -> Any:
        data, too_large = body()
        if data is None:
            return refused_body(too_large)
        fields = []
        email, password = data.get("email"), data.get("password")
        if not isinstance(email, str) or len(email) > 254 or not rules.EMAIL.match(email):
            fields.append("email")
        if not isinstance(password, str) or not 8 <= len(password) <= 128:
            fields.append("password")
        if fields:
            return invalid(fields)
        try:
            row = store.create_owner(email.lower(), rules.hash_password(password))
        except Taken:
            return error(409, "email_taken", "this email is already registered")
        return jsonify(owner_json(row)), 201

    @app.post("/api/auth/token")
    def log_in() -> Any:
        data, too_large = body()
        if data is None:
            return refused_body(too_large)
        email, password = data.get("email"), data.get("password")
        if not isinstance(email, str) or not isinstance(password, str):
            return invalid([f for f in ("email", "password") if not isinstance(data.get(f), str)])
        row = store.owner_by_email(email.lower()) if "\x00" not in email else None
        if row is None or not rules.check_password(password, row["password_hash"]):
            return error(401, "invalid_credentials", "wrong email or password")
        token = secrets.token_urlsafe(32)
        with tokens_lock:
            tokens[token] = row["id"]
        return jsonify({"token": token, "owner": owner_json(row)})

    @app.get("/api/me")
    def me() -> Any:
        owner_id = caller()
        row = store.owner(owner_id) if owner_id is not None else None
        if row is None:
            return error(401, "unauthorized", "a valid bearer token is required")
        return jsonify(owner_json(row))

    # ---------------------------------------------------------------- forms

    @app.get("/api/forms")
    def list_forms() -> Any:
        owner_id = caller()
        if owner_id is None:
            return error(401, "unauthorized", "a valid bearer token is required")
        return jsonify({"items": [form_json(f) for f in store.forms_of(owner_id)]})

    @app.post("/api/forms")
    def create_form() -> Any:
        owner_id = caller()
        if owner_id is None:
            return error(401, "unauthorized", "a valid bearer token is required")
        data, too_large = body()
        if data is None:
            return refused_body(too_large)
        fields = []
        if not rules.non_blank(data.get("title"), 200):
            fields.append("title")
        limit = data.get("response_limit")
        if limit is not None and (not rules.is_int(limit) or not 1 <= limit <= 100_000):
            fields.append("response_limit")
        if fields:
            return invalid(fields)
        return jsonify(form_json(store.create_form(owner_id, data["title"], secrets.token_urlsafe(12), limit))), 201

    @app.get("/api/forms/<int:form_id>")
    def get_form(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        return refusal or jsonify(form_json(form or {}))

    @app.delete("/api/forms/<int:form_id>")
    def delete_form(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        store.delete_form(form_id)
        return Response(status=204)

    @app.post("/api/forms/<int:form_id>/questions")
    def add_question(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        if form and form["status"] != "draft":
            return error(409, "form_not_draft", "questions change only while the form is a draft")
        data, too_large = body()
        if data is None:
            return refused_body(too_large)
        fields, settings = rules.question_problems(data)
        if fields:
            return invalid(fields)
        row = store.add_question(form_id, data["type"], data["title"], bool(data.get("required", False)), settings)
        if row is None:
            return error(409, "form_not_draft", "questions change only while the form is a draft")
        return jsonify(rules.question_json(row)), 201

    @app.delete("/api/forms/<int:form_id>/questions/<int:question_id>")
    def delete_question(form_id: int, question_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        outcome = store.delete_question(form_id, question_id) if question_id <= MAX_ID else "missing"
        if outcome == "not_draft":
            return error(409, "form_not_draft", "questions change only while the form is a draft")
        if outcome == "missing":
            return error(404, "not_found", "no such question")
        return Response(status=204)

    @app.post("/api/forms/<int:form_id>/publish")
    def publish(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        if form and form["status"] == "draft" and not form["questions"]:
            return error(409, "no_questions", "a form needs at least one question to be published")
        if not store.set_status(form_id, "draft", "published"):
            return error(409, "invalid_transition", "only a draft can be published")
        return jsonify(form_json(store.form(form_id) or {}))

    @app.post("/api/forms/<int:form_id>/close")
    def close(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        if not store.set_status(form_id, "published", "closed"):
            return error(409, "invalid_transition", "only a published form can be closed")
        return jsonify(form_json(store.form(form_id) or {}))

    # ---------------------------------------------------------------- results

    @app.get("/api/forms/<int:form_id>/responses")
    def list_responses(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        items = [{"id": r["id"], "created_at": rules.iso(r["created_at"]), "answers": r["answers"]} for r in store.responses(form_id)]
        return jsonify({"items": items})

    @app.get("/api/forms/<int:form_id>/summary")
    def summary(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        return jsonify(rules.summary((form or {})["questions"], store.responses(form_id)))

    @app.get("/api/forms/<int:form_id>/export.csv")
    def export(form_id: int) -> Any:
        form, refusal = own_form(form_id)
        if refusal:
            return refusal
        text = rules.export_csv((form or {})["questions"], store.responses(form_id))
        return Response(text, status=200, content_type="text/csv; charset=utf-8")

    # ---------------------------------------------------------------- public

    def public_form(slug: str) -> dict[str, Any] | None:
        if not 1 <= len(slug) <= 64 or "\x00" in slug:  # no slug is that (and PostgreSQL text holds no NUL)
            return None
        form = store.form_by_slug(slug)
        return form if form is not None and form["status"] in ("published", "closed") else None

    @app.get("/api/public/forms/<slug>")
    def read_public(slug: str) -> Any:
        form = public_form(slug)
        if form is None:
            return error(404, "not_found", "no such form")
        return jsonify({"slug": form["slug"], "title": form["title"], "status": form["status"],
                        "questions": [rules.question_json(q) for q in form["questions"]]})

    @app.post("/api/public/forms/<slug>/responses")
    def submit(slug: str) -> Any:
        form = public_form(slug)
        if form is None:
            return error(404, "not_found", "no such form")
        if form["status"] == "closed":
            return error(409, "form_closed", "this form is closed and takes no more responses")
        data, too_large = body()
        if data is None:
            return refused_body(too_large)
        answers = data.get("answers")
        if not isinstance(answers, dict):
            return invalid(["answers"])
        fields, kept = rules.answer_problems(form["questions"], answers)
        if fields:
            return error(422, "validation_error", "some answers are missing or invalid", fields)
        try:
            row = store.submit(form["id"], kept)
        except Closed:
            return error(409, "form_closed", "this form is closed and takes no more responses")
        except LimitReached:
            return error(409, "response_limit_reached", "this form has all the responses it takes")
        return jsonify({"id": row["id"], "created_at": rules.iso(row["created_at"])}), 201

    return app


if __name__ == "__main__":
    create_app().run(host=os.environ.get("HOST", "0.0.0.0"), port=int(os.environ.get("PORT", "8000")), threaded=True)
