"""Shared setup for the issue-tracker oracle: users, projects with members, issues, labels,
milestones, hooks, and the webhook receiver mock.

Every item builds its own world (fresh users made by the administrator, its own projects), so
items never depend on each other or on what the shared service already holds. Every hook an
item registers points at its own fresh path under the receiver, and what the receiver got is
read for that path only, so deliveries of other items never mix in; the mock is never reset.

The hook URL must start with WEBHOOKS_URL as the *service* sees it (spec.md, Webhooks): under
the process runtime that is the address the harness reaches the mock at; in a container it
is the mock's network alias ``webhooks`` on the port of mocks/webhooks/mock.yaml.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import uuid
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import Account as Caller
from pytest_backendbench.http.accounts import AccountsApi, field, leak_checks_fixture, task_env_fixture
from pytest_backendbench.http.api import unique


class Receiver:
    """The webhook receiver mock, seen from the oracle."""

    def __init__(self, handle: Any, service_base: str) -> None:
        self.handle = handle
        self.service_base = service_base

    def fresh_path(self) -> str:
        """A path no other item uses."""
        return f"/hooks/{uuid.uuid4().hex}"

    def url(self, path: str) -> str:
        """The URL the service must deliver to for ``path`` (WEBHOOKS_URL + path)."""
        return self.service_base + path

    def got(self, path: str) -> list[dict[str, Any]]:
        """Every request the receiver got at ``path``, oldest first (each with headers, exact body bytes, json, status)."""
        response = self.handle.get("/__mock__/requests", params={"path": path})
        response.raise_for_status()
        return list(response.json()["requests"])

    def answer(self, path: str, status: int) -> None:
        """Make the receiver answer ``status`` (0: no answer at all) at ``path`` from now on."""
        self.handle.post("/__mock__/respond", json={"path": path, "status": status}).raise_for_status()

    @staticmethod
    def raw(delivery: dict[str, Any]) -> bytes:
        """The exact bytes of a delivery's body."""
        return base64.b64decode(delivery["body_base64"])

    @staticmethod
    def signature(secret: str, raw: bytes) -> str:
        """The X-Tracker-Signature value spec.md defines for this body."""
        return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    credential_keys = ("ISSUES_ADMIN_USERNAME", "ISSUES_ADMIN_PASSWORD")

    def __init__(self, http: requests.Session, env: dict[str, str], receiver: Receiver) -> None:
        super().__init__(http, env)
        self.receiver = receiver

    # ---------------------------------------------------------------- accounts

    def user(self, prefix: str = "user") -> Caller:
        """A fresh user created by the administrator, logged in."""
        password = "pw-" + uuid.uuid4().hex
        created = self.ok(self.http.post("/users", json={"username": unique(prefix), "password": password}, headers=self.admin.headers), 201, "create a user")
        return self.login(created["username"], password, created["id"])

    def login(self, username: str, password: str, user_id: str | None = None) -> Caller:
        body = self.login_answer(username, password, "log in")
        return Caller(user_id or field(body, "user", "id", what="log in"), username, password, str(field(body, "token", what="log in")))

    # ---------------------------------------------------------------- projects

    def project(self, owner: Caller, *, maintainers: tuple[Caller, ...] = (), reporters: tuple[Caller, ...] = (), name: str | None = None) -> dict[str, Any]:
        """A new project owned by ``owner`` with the given members."""
        project = self.ok(self.http.post("/projects", json={"name": name or unique("Project ", "")}, headers=owner.headers), 201, "create a project")
        for role, members in (("maintainer", maintainers), ("reporter", reporters)):
            for member in members:
                self.add_member(owner, project, member, role)
        return dict(project)

    def owned(self) -> tuple[Caller, dict[str, Any]]:
        """A fresh user and a new project of theirs (the usual start): (owner, project)."""
        owner = self.user()
        return owner, self.project(owner)

    def hooked(self) -> tuple[Caller, dict[str, Any], dict[str, Any], str]:
        """A fresh owner, their new project and a hook on it to a fresh receiver path: (owner, project, hook, path)."""
        owner, project = self.owned()
        hook, path, _ = self.hook(owner, project)
        return owner, project, hook, path

    def add_member(self, owner: Caller, project: dict[str, Any], user: Caller, role: str) -> dict[str, Any]:
        return dict(self.ok(self.http.post(f"/projects/{project['id']}/members", json={"user_id": user.id, "role": role}, headers=owner.headers), 201, f"add a {role}"))

    def team(self) -> tuple[dict[str, Any], Caller, Caller, Caller]:
        """A project with an owner, a maintainer and a reporter: (project, owner, maintainer, reporter)."""
        owner, maintainer, reporter = self.user("owner"), self.user("maint"), self.user("reporter")
        return self.project(owner, maintainers=(maintainer,), reporters=(reporter,)), owner, maintainer, reporter

    # ---------------------------------------------------------------- issues, labels, milestones

    def issue(self, caller: Caller, project: dict[str, Any], title: str = "Something is broken", **fields: Any) -> dict[str, Any]:
        return dict(self.ok(self.http.post(f"/projects/{project['id']}/issues", json={"title": title, **fields}, headers=caller.headers), 201, "create an issue"))

    def patch_issue(self, caller: Caller, project: dict[str, Any], number: int, **fields: Any) -> dict[str, Any]:
        return dict(self.ok(self.http.patch(f"/projects/{project['id']}/issues/{number}", json=fields, headers=caller.headers), 200, f"PATCH issue {fields}"))

    def get_issue(self, caller: Caller, project: dict[str, Any], number: int) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/projects/{project['id']}/issues/{number}", headers=caller.headers), 200, "read an issue"))

    def issues(self, caller: Caller, project: dict[str, Any], **params: Any) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/projects/{project['id']}/issues", params={"limit": 100, **params}, headers=caller.headers), 200, f"list issues {params}"))

    def numbers(self, caller: Caller, project: dict[str, Any], **params: Any) -> list[int]:
        """The numbers of the listed issues, in the order answered."""
        return [i["number"] for i in self.issues(caller, project, **params)["items"]]

    def comment(self, caller: Caller, project: dict[str, Any], number: int, body: str = "Me too") -> dict[str, Any]:
        return dict(self.ok(self.http.post(f"/projects/{project['id']}/issues/{number}/comments", json={"body": body}, headers=caller.headers), 201, "comment"))

    def label(self, caller: Caller, project: dict[str, Any], name: str | None = None, color: str = "#d73a4a", **fields: Any) -> dict[str, Any]:
        body = {"name": name or unique("label-", ""), "color": color, **fields}
        return dict(self.ok(self.http.post(f"/projects/{project['id']}/labels", json=body, headers=caller.headers), 201, "create a label"))

    def milestone(self, caller: Caller, project: dict[str, Any], title: str = "v1.0", **fields: Any) -> dict[str, Any]:
        return dict(self.ok(self.http.post(f"/projects/{project['id']}/milestones", json={"title": title, **fields}, headers=caller.headers), 201, "create a milestone"))

    def get_milestone(self, caller: Caller, project: dict[str, Any], milestone: dict[str, Any]) -> dict[str, Any]:
        return dict(self.ok(self.http.get(f"/projects/{project['id']}/milestones/{milestone['id']}", headers=caller.headers), 200, "read a milestone"))

    # ---------------------------------------------------------------- hooks

    def hook(self, owner: Caller, project: dict[str, Any], secret: str | None = None, **fields: Any) -> tuple[dict[str, Any], str, str]:
        """A hook to a fresh receiver path: (hook, path, secret)."""
        path = self.receiver.fresh_path()
        secret = secret or "s3cret-" + uuid.uuid4().hex
        body = {"url": self.receiver.url(path), "secret": secret, **fields}
        hook = self.ok(self.http.post(f"/projects/{project['id']}/hooks", json=body, headers=owner.headers), 201, "create a hook")
        return dict(hook), path, secret

    def deliveries(self, owner: Caller, project: dict[str, Any], hook: dict[str, Any]) -> list[dict[str, Any]]:
        body = self.ok(self.http.get(f"/projects/{project['id']}/hooks/{hook['id']}/deliveries", headers=owner.headers), 200, "list deliveries")
        return list(body["items"])


task_env = task_env_fixture


@pytest.fixture
def receiver(mocks: dict[str, Any], service: Any) -> Receiver:
    """The webhook receiver, with WEBHOOKS_URL as the service sees it."""
    handle = mocks["webhooks"]
    return Receiver(handle, handle.candidate_url.rstrip("/"))


@pytest.fixture
def api(http: requests.Session, task_env: dict[str, str], receiver: Receiver) -> Api:
    """Setup and inspection helpers bound to the service under test, with the administrator logged in."""
    api = Api(http, task_env, receiver)
    _ = api.admin  # logged in before the item starts, as for every item
    return api


http_response_checks = leak_checks_fixture()
