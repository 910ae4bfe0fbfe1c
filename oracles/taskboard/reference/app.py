"""Reference implementation of the taskboard task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. The order of checks in every handler follows
spec.md's precedence: authenticate (401), find what the caller may see (404), check the
role (403), validate the body and query (422), then the state rules (409).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import uuid
from datetime import datetime, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}          # user id -> user (with password hash)
USER_IDS: dict[str, str] = {}                  # username -> user id
TOKENS: dict[str, str] = {}                    # token -> user id
PROJECTS: dict[str, dict[str, Any]] = {}       # project id -> project (insertion = creation order)
MEMBERS: dict[str, dict[str, dict[str, Any]]] = {}  # project id -> user id -> membership (join order)
TASKS: dict[str, dict[str, Any]] = {}          # task id -> task (insertion = creation order)
COMMENTS: dict[str, dict[str, Any]] = {}       # comment id -> comment (insertion = creation order)
ACTIVITY: dict[str, list[dict[str, Any]]] = {} # project id -> entries, oldest first

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
INTEGER = re.compile(r"^-?[0-9]+$")
ROLES = ("owner", "member", "viewer")
STATUSES = ("todo", "in_progress", "done", "cancelled")
PRIORITIES = ("low", "medium", "high")
TRANSITIONS = {
    "todo": {"in_progress", "cancelled"},
    "in_progress": {"todo", "done", "cancelled"},
    "done": {"in_progress"},
    "cancelled": {"todo"},
}
WRITERS = ("owner", "member")
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def unauthorized(message: str = "authentication required") -> ApiError:
    return ApiError(401, "unauthorized", message)


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str, code: str = "conflict") -> ApiError:
    return ApiError(409, code, message)


def invalid(fields: list[str], message: str = "invalid request") -> ApiError:
    return ApiError(422, "validation_error", message, fields)


def reply(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload), status=status, mimetype="application/json")


def no_content() -> Response:
    return Response(status=204)


@app.errorhandler(ApiError)
def handle_api_error(err: ApiError) -> Response:
    body: dict[str, Any] = {"error": err.code, "message": err.message}
    if err.fields is not None:
        body["fields"] = err.fields
    return reply(body, err.status)


@app.errorhandler(HTTPException)
def handle_http_error(err: HTTPException) -> Response:
    status = err.code or 500
    if status == 405 or status >= 500:  # spec.md, Errors: the codes the table does not list
        return reply({"error": "method_not_allowed" if status == 405 else "internal_error", "message": err.description or err.name}, status)
    code = "not_found" if err.code == 404 else "validation_error" if err.code == 400 else "forbidden"
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    return reply(body, err.code or 500)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- requests



MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32


def nesting_depth(value: Any) -> int:
    """How deeply objects and arrays nest in a parsed body (iterative: no recursion limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def json_body() -> dict[str, Any]:
    """The request body as a JSON object, or 422 (called only after the 401/404/403 checks)."""
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY_BYTES:
        raise invalid([], "the body is larger than 1 MiB")
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError) as err:
        raise invalid([], "the body is not valid JSON") from err
    if nesting_depth(data) > MAX_BODY_DEPTH:
        raise invalid([], f"the body nests deeper than {MAX_BODY_DEPTH} levels")
    if not isinstance(data, dict):
        raise invalid([], "the body must be a JSON object")
    return data


class Validator:
    """Collects every invalid field of one body before answering 422."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.bad: list[str] = []

    def fail(self, name: str) -> None:
        if name not in self.bad:
            self.bad.append(name)

    def text(self, name: str, *, required: bool, max_len: int, min_len: int = 1,
             non_blank: bool = False, pattern: re.Pattern[str] | None = None,
             choices: tuple[str, ...] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if not isinstance(value, str):
            self.fail(name)
            return MISSING
        if choices is not None and value not in choices:
            self.fail(name)
            return MISSING
        if not (min_len <= len(value) <= max_len):
            self.fail(name)
            return MISSING
        if non_blank and not value.strip():
            self.fail(name)
            return MISSING
        if pattern is not None and not pattern.match(value):
            self.fail(name)
            return MISSING
        return value

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def paging(extra_bad: list[str] | None = None) -> tuple[int, int]:
    """limit and offset from the query string (422 naming each invalid one)."""
    bad = list(extra_bad or [])
    values = {}
    for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
        raw = request.args.get(name)
        if raw is None:
            values[name] = default
            continue
        if not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
            bad.append(name)
            continue
        values[name] = int(raw)
    if bad:
        raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
    return values["limit"], values["offset"]


def page(items: list[dict[str, Any]], limit: int, offset: int) -> dict[str, Any]:
    return {"items": items[offset:offset + limit], "total": len(items), "limit": limit, "offset": offset}


# ---------------------------------------------------------------------------- lookups


def current_user() -> dict[str, Any]:
    header = request.headers.get("Authorization", "")
    parts = header.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        raise unauthorized("send Authorization: Bearer <token>")
    user_id = TOKENS.get(parts[1].strip())
    if user_id is None or user_id not in USERS:
        raise unauthorized("unknown or revoked token")
    return USERS[user_id]


def visible_project(user: dict[str, Any], project_id: str) -> tuple[dict[str, Any], str]:
    """The project and the caller's role in it; 404 unless the caller is a member."""
    project = PROJECTS.get(project_id)
    membership = MEMBERS.get(project_id, {}).get(user["id"])
    if project is None or membership is None:
        raise not_found("project")
    return project, membership["role"]


def project_task(project_id: str, task_id: str) -> dict[str, Any]:
    task = TASKS.get(task_id)
    if task is None or task["project_id"] != project_id:
        raise not_found("task")
    return task


def record(project_id: str, kind: str, actor_id: str, task_id: str | None, data: dict[str, Any]) -> None:
    ACTIVITY[project_id].append({
        "id": new_id("a"), "type": kind, "actor_id": actor_id, "task_id": task_id,
        "data": data, "created_at": now(),
    })


def hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 10_000)


# ---------------------------------------------------------------------------- views


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "display_name", "created_at")}


def project_view(project: dict[str, Any], role: str) -> dict[str, Any]:
    return {**{k: project[k] for k in ("id", "name", "description", "created_by", "created_at")}, "role": role}


def member_view(user_id: str, membership: dict[str, Any]) -> dict[str, Any]:
    user = USERS[user_id]
    return {"user_id": user_id, "username": user["username"], "display_name": user["display_name"],
            "role": membership["role"], "joined_at": membership["joined_at"]}


def task_view(task: dict[str, Any]) -> dict[str, Any]:
    return dict(task)


# ---------------------------------------------------------------------------- system and users


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/users")
def register() -> Response:
    data = json_body()
    v = Validator(data)
    username = v.text("username", required=True, min_len=3, max_len=32, pattern=USERNAME)
    password = v.text("password", required=True, min_len=8, max_len=128)
    display_name = v.text("display_name", required=False, max_len=64, non_blank=True)
    v.check()
    with LOCK:
        if username in USER_IDS:
            raise conflict("username already taken")
        salt = secrets.token_bytes(16)
        user = {
            "id": new_id("u"), "username": username,
            "display_name": username if display_name is MISSING else display_name,
            "created_at": now(), "salt": salt, "password_hash": hash_password(password, salt),
        }
        USERS[user["id"]] = user
        USER_IDS[username] = user["id"]
        return reply(user_view(user), 201)


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, min_len=0, max_len=10_000)
    password = v.text("password", required=True, min_len=0, max_len=10_000)
    v.check()
    with LOCK:
        user = USERS.get(USER_IDS.get(username, ""))
        if user is None or not hmac.compare_digest(hash_password(password, user["salt"]), user["password_hash"]):
            raise unauthorized("wrong username or password")
        token = secrets.token_urlsafe(32)
        TOKENS[token] = user["id"]
        return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.post("/auth/logout")
def logout() -> Response:
    with LOCK:
        current_user()
        TOKENS.pop(request.headers["Authorization"].split(None, 1)[1].strip(), None)
        return no_content()


@app.get("/me")
def me() -> Response:
    with LOCK:
        return reply(user_view(current_user()))


# ---------------------------------------------------------------------------- projects


@app.get("/projects")
def list_projects() -> Response:
    with LOCK:
        user = current_user()
        limit, offset = paging()
        mine = [project_view(p, MEMBERS[pid][user["id"]]["role"])
                for pid, p in PROJECTS.items() if user["id"] in MEMBERS[pid]]
        return reply(page(mine, limit, offset))


@app.post("/projects")
def create_project() -> Response:
    with LOCK:
        user = current_user()
        v = Validator(json_body())
        name = v.text("name", required=True, max_len=100, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=2000)
        v.check()
        project = {
            "id": new_id("p"), "name": name, "description": "" if description is MISSING else description,
            "created_by": user["id"], "created_at": now(),
        }
        PROJECTS[project["id"]] = project
        MEMBERS[project["id"]] = {user["id"]: {"role": "owner", "joined_at": project["created_at"]}}
        ACTIVITY[project["id"]] = []
        record(project["id"], "project_created", user["id"], None, {"name": name})
        return reply(project_view(project, "owner"), 201)


@app.get("/projects/<project_id>")
def get_project(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        project, role = visible_project(user, project_id)
        return reply(project_view(project, role))


@app.patch("/projects/<project_id>")
def update_project(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        project, role = visible_project(user, project_id)
        if role != "owner":
            raise forbidden("only owners may edit the project")
        v = Validator(json_body())
        name = v.text("name", required=False, max_len=100, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=2000)
        v.check()
        if name is not MISSING:
            project["name"] = name
        if description is not MISSING:
            project["description"] = description
        return reply(project_view(project, role))


@app.delete("/projects/<project_id>")
def delete_project(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        if role != "owner":
            raise forbidden("only owners may delete the project")
        task_ids = {tid for tid, t in TASKS.items() if t["project_id"] == project_id}
        for cid in [cid for cid, c in COMMENTS.items() if c["task_id"] in task_ids]:
            del COMMENTS[cid]
        for tid in task_ids:
            del TASKS[tid]
        del PROJECTS[project_id]
        del MEMBERS[project_id]
        del ACTIVITY[project_id]
        return no_content()


# ---------------------------------------------------------------------------- members


def unassign(project_id: str, user_id: str) -> None:
    stamp = now()
    for task in TASKS.values():
        if task["project_id"] == project_id and task["assignee_id"] == user_id:
            task["assignee_id"] = None
            task["updated_at"] = stamp


def owner_count(project_id: str) -> int:
    return sum(1 for m in MEMBERS[project_id].values() if m["role"] == "owner")


@app.get("/projects/<project_id>/members")
def list_members(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        visible_project(user, project_id)
        return reply({"items": [member_view(uid, m) for uid, m in MEMBERS[project_id].items()]})


@app.post("/projects/<project_id>/members")
def add_member(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        if role != "owner":
            raise forbidden("only owners may add members")
        v = Validator(json_body())
        username = v.text("username", required=True, min_len=0, max_len=10_000)
        new_role = v.text("role", required=False, max_len=16, choices=ROLES)
        if username is not MISSING and username not in USER_IDS:
            v.fail("username")
        v.check()
        new_role = "member" if new_role is MISSING else new_role
        user_id = USER_IDS[username]
        if user_id in MEMBERS[project_id]:
            raise conflict("already a member of this project")
        membership = {"role": new_role, "joined_at": now()}
        MEMBERS[project_id][user_id] = membership
        record(project_id, "member_added", user["id"], None, {"user_id": user_id, "role": new_role})
        return reply(member_view(user_id, membership), 201)


@app.patch("/projects/<project_id>/members/<user_id>")
def change_member(project_id: str, user_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        membership = MEMBERS[project_id].get(user_id)
        if membership is None:
            raise not_found("member")
        if role != "owner":
            raise forbidden("only owners may change roles")
        v = Validator(json_body())
        new_role = v.text("role", required=True, max_len=16, choices=ROLES)
        v.check()
        old_role = membership["role"]
        if new_role == old_role:
            return reply(member_view(user_id, membership))
        if old_role == "owner" and owner_count(project_id) == 1:
            raise conflict("a project must keep at least one owner")
        membership["role"] = new_role
        if new_role == "viewer":
            unassign(project_id, user_id)
        record(project_id, "member_role_changed", user["id"], None,
               {"user_id": user_id, "from": old_role, "to": new_role})
        return reply(member_view(user_id, membership))


@app.delete("/projects/<project_id>/members/<user_id>")
def remove_member(project_id: str, user_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        membership = MEMBERS[project_id].get(user_id)
        if membership is None:
            raise not_found("member")
        if role != "owner" and user_id != user["id"]:
            raise forbidden("only owners may remove other members")
        if membership["role"] == "owner" and owner_count(project_id) == 1:
            raise conflict("a project must keep at least one owner")
        del MEMBERS[project_id][user_id]
        unassign(project_id, user_id)
        record(project_id, "member_removed", user["id"], None, {"user_id": user_id})
        return no_content()


# ---------------------------------------------------------------------------- tasks


def check_assignee(v: Validator, project_id: str) -> Any:
    value = v.data.get("assignee_id", MISSING)
    if value is MISSING or value is None:
        return value
    membership = MEMBERS[project_id].get(value) if isinstance(value, str) else None
    if membership is None or membership["role"] not in WRITERS:
        v.fail("assignee_id")
        return MISSING
    return value


@app.get("/projects/<project_id>/tasks")
def list_tasks(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        visible_project(user, project_id)
        status = request.args.get("status")
        assignee = request.args.get("assignee_id")
        limit, offset = paging(["status"] if status is not None and status not in STATUSES else [])
        found = []
        for task in TASKS.values():
            if task["project_id"] != project_id:
                continue
            if status is not None and task["status"] != status:
                continue
            if assignee is not None and task["assignee_id"] != (None if assignee == "none" else assignee):
                continue
            found.append(task_view(task))
        return reply(page(found, limit, offset))


@app.post("/projects/<project_id>/tasks")
def create_task(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        if role not in WRITERS:
            raise forbidden("viewers may not create tasks")
        v = Validator(json_body())
        title = v.text("title", required=True, max_len=200, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=5000)
        priority = v.text("priority", required=False, max_len=16, choices=PRIORITIES)
        assignee = check_assignee(v, project_id)
        v.check()
        stamp = now()
        task = {
            "id": new_id("t"), "project_id": project_id, "title": title,
            "description": "" if description is MISSING else description,
            "status": "todo", "priority": "medium" if priority is MISSING else priority,
            "assignee_id": None if assignee is MISSING else assignee,
            "created_by": user["id"], "created_at": stamp, "updated_at": stamp, "completed_at": None,
        }
        TASKS[task["id"]] = task
        record(project_id, "task_created", user["id"], task["id"],
               {"title": title, "assignee_id": task["assignee_id"]})
        return reply(task_view(task), 201)


@app.get("/projects/<project_id>/tasks/<task_id>")
def get_task(project_id: str, task_id: str) -> Response:
    with LOCK:
        user = current_user()
        visible_project(user, project_id)
        return reply(task_view(project_task(project_id, task_id)))


@app.patch("/projects/<project_id>/tasks/<task_id>")
def update_task(project_id: str, task_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        task = project_task(project_id, task_id)
        if role not in WRITERS:
            raise forbidden("viewers may not edit tasks")
        v = Validator(json_body())
        title = v.text("title", required=False, max_len=200, non_blank=True)
        description = v.text("description", required=False, min_len=0, max_len=5000)
        priority = v.text("priority", required=False, max_len=16, choices=PRIORITIES)
        status = v.text("status", required=False, max_len=16, choices=STATUSES)
        assignee = check_assignee(v, project_id)
        v.check()
        old_status = task["status"]
        if status is not MISSING and status != old_status and status not in TRANSITIONS[old_status]:
            raise conflict(f"a task cannot go from {old_status} to {status}", "invalid_transition")
        stamp = now()
        for name, value in (("title", title), ("description", description), ("priority", priority)):
            if value is not MISSING:
                task[name] = value
        if status is not MISSING and status != old_status:
            task["status"] = status
            task["completed_at"] = stamp if status == "done" else None
            record(project_id, "task_status_changed", user["id"], task_id, {"from": old_status, "to": status})
        if assignee is not MISSING and assignee != task["assignee_id"]:
            previous = task["assignee_id"]
            task["assignee_id"] = assignee
            record(project_id, "task_assigned", user["id"], task_id,
                   {"assignee_id": assignee, "previous_assignee_id": previous})
        task["updated_at"] = stamp
        return reply(task_view(task))


@app.delete("/projects/<project_id>/tasks/<task_id>")
def delete_task(project_id: str, task_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        task = project_task(project_id, task_id)
        if not (role == "owner" or (role == "member" and task["created_by"] == user["id"])):
            raise forbidden("owners delete any task, members only tasks they created")
        for cid in [cid for cid, c in COMMENTS.items() if c["task_id"] == task_id]:
            del COMMENTS[cid]
        del TASKS[task_id]
        record(project_id, "task_deleted", user["id"], task_id, {"title": task["title"]})
        return no_content()


# ---------------------------------------------------------------------------- comments


@app.get("/projects/<project_id>/tasks/<task_id>/comments")
def list_comments(project_id: str, task_id: str) -> Response:
    with LOCK:
        user = current_user()
        visible_project(user, project_id)
        project_task(project_id, task_id)
        limit, offset = paging()
        found = [dict(c) for c in COMMENTS.values() if c["task_id"] == task_id]
        return reply(page(found, limit, offset))


@app.post("/projects/<project_id>/tasks/<task_id>/comments")
def add_comment(project_id: str, task_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        project_task(project_id, task_id)
        if role not in WRITERS:
            raise forbidden("viewers may not comment")
        v = Validator(json_body())
        body = v.text("body", required=True, max_len=2000, non_blank=True)
        v.check()
        comment = {"id": new_id("c"), "task_id": task_id, "author_id": user["id"], "body": body, "created_at": now()}
        COMMENTS[comment["id"]] = comment
        record(project_id, "comment_added", user["id"], task_id, {"comment_id": comment["id"]})
        return reply(dict(comment), 201)


@app.delete("/projects/<project_id>/tasks/<task_id>/comments/<comment_id>")
def delete_comment(project_id: str, task_id: str, comment_id: str) -> Response:
    with LOCK:
        user = current_user()
        _, role = visible_project(user, project_id)
        project_task(project_id, task_id)
        comment = COMMENTS.get(comment_id)
        if comment is None or comment["task_id"] != task_id:
            raise not_found("comment")
        if not (role == "owner" or (role in WRITERS and comment["author_id"] == user["id"])):
            raise forbidden("only owners and the comment's author may delete it")
        del COMMENTS[comment_id]
        return no_content()


# ---------------------------------------------------------------------------- activity


@app.get("/projects/<project_id>/activity")
def list_activity(project_id: str) -> Response:
    with LOCK:
        user = current_user()
        visible_project(user, project_id)
        limit, offset = paging()
        return reply(page(list(reversed(ACTIVITY[project_id])), limit, offset))


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
