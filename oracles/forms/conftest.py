"""Helpers for the forms oracle.

Every item registers its own owners (fresh emails) and builds its own forms, and looks only at
those: owners see only their own forms, and public slugs are unique, so no item depends on
what another item made; every item passes alone, in any order and twice in a row.
"""

from __future__ import annotations

import csv
import io
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests

from pytest_backendbench.http.accounts import AccountsApi, Bearer, api_fixture, leak_checks_fixture, restart, task_checks_fixture
from pytest_backendbench.http.api import brief
from pytest_backendbench.http.checks import injection_texts, table_ids
from pytest_backendbench.http.concurrency import parallel_posts

FORM_KEYS = ("id", "title", "slug", "status", "response_limit", "response_count", "questions", "created_at")
QUESTION_KEYS = ("id", "position", "type", "title", "required")
SETTINGS = {
    "short_text": ("max_length",),
    "number": ("min", "max"),
    "single_choice": ("options",),
    "multiple_choice": ("options", "min_selections", "max_selections"),
}
PASSWORD = "correct horse battery"

# one question of each type, as the items build them
TEXT = {"type": "short_text", "title": "Your name", "required": True, "max_length": 20}
NUMBER = {"type": "number", "title": "Guests", "min": 0, "max": 5}
SINGLE = {"type": "single_choice", "title": "Main course", "required": True, "options": ["Fish", "Pasta", "Salad"]}
MULTI = {"type": "multiple_choice", "title": "Extras", "options": ["Bread", "Wine", "Cake", "Soup"], "min_selections": 1, "max_selections": 2}
ALL_TYPES = (TEXT, NUMBER, SINGLE, MULTI)


def unique(prefix: str) -> str:
    """A fresh title."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def fresh_email(domain: str = "example.org") -> str:
    """A fresh lower-case email address."""
    return f"{uuid.uuid4().hex[:12]}@{domain}"


@dataclass
class Owner(Bearer):
    """A registered, logged-in owner."""

    id: int
    email: str
    token: str
    password: str = PASSWORD


@dataclass
class Built:
    """A form made by an item: the form as the API answered it and its question ids by short name."""

    owner: Owner
    form: dict[str, Any]
    qids: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> int:
        return int(self.form["id"])

    @property
    def slug(self) -> str:
        return str(self.form["slug"])


def parse_csv(text: str) -> list[list[str]]:
    """The records of a CSV document (RFC 4180 quoting)."""
    return list(csv.reader(io.StringIO(text, newline="")))


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    errors_carry_message = True
    unique = staticmethod(unique)
    fresh_email = staticmethod(fresh_email)
    parse_csv = staticmethod(parse_csv)

    def fields_of(self, response: requests.Response, what: str) -> set[str]:
        """The ``fields`` of a 422 answer (asserting the 422 shape)."""
        body = self.error(response, 422, "validation_error", what)
        fields = body.get("fields")
        assert isinstance(fields, list) and all(isinstance(f, str) for f in fields), f"{what}: 422 lists fields as strings: {body}"
        return set(fields)

    # ---------------------------------------------------------------- accounts

    def register(self, email: str | None = None, password: str = PASSWORD) -> requests.Response:
        return self.http.post("/api/users", json={"email": email or fresh_email(), "password": password})

    def login(self, email: str, password: str = PASSWORD) -> requests.Response:
        return self.http.post("/api/auth/token", json={"email": email, "password": password})

    def owner(self, password: str = PASSWORD) -> Owner:
        """A fresh owner, registered and logged in (must succeed)."""
        email = fresh_email()
        made = self.ok(self.register(email, password), 201, "register an owner")
        token = self.ok(self.login(email, password), 200, "log in")["token"]
        return Owner(int(made["id"]), email, str(token), password)

    # ---------------------------------------------------------------- forms

    def get(self, owner: Owner, path: str) -> requests.Response:
        return self.http.get(path, headers=owner.headers)

    def post(self, owner: Owner, path: str, body: Any = None) -> requests.Response:
        return self.http.post(path, json=body, headers=owner.headers) if body is not None else self.http.post(path, headers=owner.headers)

    def delete(self, owner: Owner, path: str) -> requests.Response:
        return self.http.delete(path, headers=owner.headers)

    def create_form(self, owner: Owner, **fields: Any) -> requests.Response:
        return self.post(owner, "/api/forms", {"title": unique("Survey"), **fields})

    def add_question(self, owner: Owner, form_id: int, **question: Any) -> requests.Response:
        return self.post(owner, f"/api/forms/{form_id}/questions", question)

    def build(self, owner: Owner | None = None, questions: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ALL_TYPES,
              publish: bool = True, **fields: Any) -> Built:
        """A form with these questions (short names: their titles), published unless said (must succeed)."""
        owner = owner or self.owner()
        form = self.ok(self.create_form(owner, **fields), 201, "create a form")
        built = Built(owner, form)
        for question in questions:
            made = self.ok(self.add_question(owner, int(form["id"]), **question), 201, f"add the question {question}")
            built.qids[question["title"]] = str(made["id"])
        if publish:
            self.ok(self.post(owner, f"/api/forms/{built.id}/publish"), 200, "publish the form")
        built.form = self.read(built)
        return built

    def read(self, built: Built) -> dict[str, Any]:
        return dict(self.ok(self.get(built.owner, f"/api/forms/{built.id}"), 200, "read the form"))

    def close(self, built: Built) -> None:
        self.ok(self.post(built.owner, f"/api/forms/{built.id}/close"), 200, "close the form")

    # ---------------------------------------------------------------- responses

    def submit(self, built: Built | str, answers: Any, raw: bool = False) -> requests.Response:
        """POST a response; ``answers`` keyed by question titles of ``built`` (or raw when ``raw``)."""
        slug = built if isinstance(built, str) else built.slug
        if not raw and isinstance(built, Built) and isinstance(answers, dict):
            answers = {built.qids.get(k, k): v for k, v in answers.items()}
        return self.http.post(f"/api/public/forms/{slug}/responses", json={"answers": answers})

    def answer(self, built: Built, answers: dict[str, Any]) -> dict[str, Any]:
        """A response that must be accepted."""
        return dict(self.ok(self.submit(built, answers), 201, f"submit {answers}"))

    @staticmethod
    def valid(built: Built, changes: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answers (by title) valid for the questions of ALL_TYPES that ``built`` has, with ``changes``."""
        answers: dict[str, Any] = {"Your name": "Ada", "Guests": 2, "Main course": "Pasta", "Extras": ["Bread"], **(changes or {})}
        return {k: v for k, v in answers.items() if k in built.qids}

    def responses(self, built: Built) -> list[dict[str, Any]]:
        return list(self.ok(self.get(built.owner, f"/api/forms/{built.id}/responses"), 200, "list the responses")["items"])

    def summary(self, built: Built) -> dict[str, Any]:
        return dict(self.ok(self.get(built.owner, f"/api/forms/{built.id}/summary"), 200, "read the summary"))

    def export(self, built: Built) -> list[list[str]]:
        r = self.get(built.owner, f"/api/forms/{built.id}/export.csv")
        assert r.status_code == 200, f"the export: {brief(r)}"
        return parse_csv(r.content.decode("utf-8-sig"))

    def unknown_form_id(self, owner: Owner) -> int:
        """A form id no form has: delete a fresh one, so its id is known to be free."""
        form = self.ok(self.create_form(owner), 201, "create a form")
        self.ok(self.delete(owner, f"/api/forms/{form['id']}"), 204, "delete it")
        return int(form["id"])


api = api_fixture(Api)


checks = task_checks_fixture(parallel_posts=parallel_posts, restart=restart, injection_texts=injection_texts("forms"), task_ids=table_ids("forms"))


http_response_checks = leak_checks_fixture()
