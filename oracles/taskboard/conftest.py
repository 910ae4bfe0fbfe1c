"""Shared setup for the taskboard oracle: users, projects, memberships, tasks.

Every item builds its own world through these helpers (unique usernames, fresh projects), so
items never depend on each other or on what the shared service already holds. A setup step
that does not answer as the contract says fails the item with a readable message: the
candidate is at fault, not the oracle.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_backendbench.http.accounts import Account as User
from pytest_backendbench.http.accounts import AccountsApi, api_fixture, leak_checks_fixture
from pytest_backendbench.http.api import unique


@dataclass
class Board:
    """A project with one user of each role, plus an outsider who belongs to nothing."""

    project: dict[str, Any]
    owner: User
    member: User
    viewer: User
    outsider: User

    @property
    def path(self) -> str:
        """The project's path, e.g. /projects/<id>."""
        return f"/projects/{self.project['id']}"


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    user, login = AccountsApi.register, AccountsApi.token

    # ---------------------------------------------------------------- users

    def register(self, prefix: str = "user", **extra: Any) -> tuple[dict[str, Any], str]:
        """Register a fresh user; returns (user json, password)."""
        password = "pw-" + uuid.uuid4().hex
        body = {"username": unique(prefix), "password": password, **extra}
        return self.ok(self.http.post("/users", json=body), 201, "register a user"), password

    # ---------------------------------------------------------------- projects and members

    def project(self, owner: User, name: str | None = None, **extra: Any) -> dict[str, Any]:
        """A new project owned by ``owner``."""
        body = {"name": name or unique("Project"), **extra}
        return self.ok(self.http.post("/projects", json=body, headers=owner.headers), 201, "create a project")

    def add_member(self, project: dict[str, Any], owner: User, user: User, role: str = "member") -> dict[str, Any]:
        """Add ``user`` to the project with ``role`` (as owner ``owner``)."""
        response = self.http.post(
            f"/projects/{project['id']}/members", json={"username": user.username, "role": role}, headers=owner.headers
        )
        return self.ok(response, 201, f"add a {role}")

    def set_role(self, project: dict[str, Any], owner: User, user: User, role: str) -> dict[str, Any]:
        """Change ``user``'s role (as owner ``owner``)."""
        response = self.http.patch(f"/projects/{project['id']}/members/{user.id}", json={"role": role}, headers=owner.headers)
        return self.ok(response, 200, f"change a role to {role}")

    def board(self) -> Board:
        """A project with an owner, a member and a viewer; and an outsider."""
        owner, member, viewer, outsider = (self.user(p) for p in ("owner", "member", "viewer", "outsider"))
        project = self.project(owner)
        self.add_member(project, owner, member, "member")
        self.add_member(project, owner, viewer, "viewer")
        return Board(project, owner, member, viewer, outsider)

    # ---------------------------------------------------------------- tasks and comments

    def task(self, project: dict[str, Any], user: User, title: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new task created by ``user``."""
        body = {"title": title or unique("Task"), **fields}
        response = self.http.post(f"/projects/{project['id']}/tasks", json=body, headers=user.headers)
        return self.ok(response, 201, "create a task")

    def patch_task(self, project: dict[str, Any], user: User, task: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Update a task; the update must succeed."""
        response = self.http.patch(f"/projects/{project['id']}/tasks/{task['id']}", json=fields, headers=user.headers)
        return self.ok(response, 200, f"update a task with {fields}")

    def move(self, project: dict[str, Any], user: User, task: dict[str, Any], *statuses: str) -> dict[str, Any]:
        """Walk a task through allowed status changes, in order."""
        for status in statuses:
            task = self.patch_task(project, user, task, status=status)
        return task

    def get_task(self, project: dict[str, Any], user: User, task_id: str) -> dict[str, Any]:
        """Read one task (must exist)."""
        response = self.http.get(f"/projects/{project['id']}/tasks/{task_id}", headers=user.headers)
        return self.ok(response, 200, "read a task")

    def tasks(self, project: dict[str, Any], user: User, **params: Any) -> dict[str, Any]:
        """One page of the task list (the envelope)."""
        response = self.http.get(f"/projects/{project['id']}/tasks", params=params, headers=user.headers)
        return self.ok(response, 200, f"list tasks with {params}")

    def comment(self, project: dict[str, Any], user: User, task: dict[str, Any], body: str | None = None) -> dict[str, Any]:
        """A new comment by ``user`` on ``task``."""
        response = self.http.post(
            f"/projects/{project['id']}/tasks/{task['id']}/comments", json={"body": body or unique("note")}, headers=user.headers
        )
        return self.ok(response, 201, "add a comment")

    def commented(self, board: Board, creator: User, commenter: User, **task_fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """A new task on the board's project by ``creator`` and a comment on it by ``commenter``: (task, comment)."""
        task = self.task(board.project, creator, **task_fields)
        return task, self.comment(board.project, commenter, task)

    def activity(self, project: dict[str, Any], user: User) -> list[dict[str, Any]]:
        """The project's newest 100 activity entries, newest first."""
        response = self.http.get(f"/projects/{project['id']}/activity", params={"limit": 100}, headers=user.headers)
        return list(self.ok(response, 200, "read the activity feed")["items"])

    @staticmethod
    def facts(entry: dict[str, Any], *data_keys: str) -> tuple[Any, Any, Any, dict[str, Any]]:
        """(type, actor_id, task_id, data) of an activity entry, data narrowed to the keys the spec names."""
        data = entry.get("data") if isinstance(entry.get("data"), dict) else {}
        return entry.get("type"), entry.get("actor_id"), entry.get("task_id"), {k: data.get(k, "<missing>") for k in data_keys}

    @staticmethod
    def shape(entries: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
        """(type, task_id) of each activity entry, for readable comparisons."""
        return [(e.get("type"), e.get("task_id")) for e in entries]


api = api_fixture(Api)


@pytest.fixture
def board(api: Api) -> Board:
    """A fresh project with an owner, a member, a viewer, and an outsider."""
    return api.board()


http_response_checks = leak_checks_fixture()
