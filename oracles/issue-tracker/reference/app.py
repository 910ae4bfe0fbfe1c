"""Reference implementation of the issue-tracker task: a candidate that passes the whole oracle.

Flask with in-memory storage behind one lock. Handlers check in spec.md's order: authenticate
(401), membership and existence (404), role (403), validation (422), then conflicts (409).
Webhook deliveries are built under the lock and sent after it is released but before the
answer, so a slow receiver never blocks other requests and the oracle sees every delivery as
soon as the API has answered.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import urllib.error
import urllib.request
import uuid
from datetime import date, datetime, timezone
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

app = Flask(__name__)

LOCK = threading.RLock()
USERS: dict[str, dict[str, Any]] = {}         # user id -> user (with salt and hash)
USER_IDS: dict[str, str] = {}                 # username -> user id
TOKENS: dict[str, str] = {}                   # token -> user id
PROJECTS: dict[str, dict[str, Any]] = {}      # creation order

USERNAME = re.compile(r"^[a-z0-9_]{3,32}$")
COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
NUMBER = re.compile(r"^[1-9][0-9]{0,17}$")
INTEGER = re.compile(r"^-?[0-9]+$")
BEARER = re.compile(r"^Bearer ([^\s]+)$")
PBKDF2_ITERATIONS = 100_000
MAX_BODY_BYTES = 1_048_576
MAX_BODY_DEPTH = 32
MAX_HOOKS = 5
DELIVERY_TIMEOUT_S = 5.0
WRITERS = ("owner", "maintainer")
EVENTS = ("issues", "issue_comment")
MISSING = object()


class ApiError(Exception):
    """An error answer: status, error code, message (and the invalid fields for 422)."""

    def __init__(self, status: int, code: str, message: str, fields: list[str] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def forbidden(message: str) -> ApiError:
    return ApiError(403, "forbidden", message)


def not_found(what: str) -> ApiError:
    return ApiError(404, "not_found", f"{what} not found")


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


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
    code = {404: "not_found", 405: "method_not_allowed", 413: "validation_error"}.get(status, "internal_error" if status >= 500 else "validation_error")
    body: dict[str, Any] = {"error": code, "message": err.description or err.name}
    if code == "validation_error":
        body["fields"] = []
    return reply(body, status)


@app.errorhandler(Exception)
def handle_unexpected(err: Exception) -> Response:
    return reply({"error": "internal_error", "message": f"{type(err).__name__}"}, 500)


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


# ---------------------------------------------------------------------------- request bodies


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

    def text(self, name: str, *, required: bool, max_len: int, non_blank: bool = False, min_len: int = 0,
             pattern: re.Pattern[str] | None = None, choices: tuple[str, ...] | None = None) -> Any:
        value = self.data.get(name, MISSING)
        if value is MISSING:
            if required:
                self.fail(name)
            return MISSING
        if (not isinstance(value, str) or not min_len <= len(value) <= max_len or (non_blank and not value.strip())
                or (pattern is not None and not pattern.match(value)) or (choices is not None and value not in choices)):
            self.fail(name)
            return MISSING
        return value

    def boolean(self, name: str) -> Any:
        value = self.data.get(name, MISSING)
        if value is not MISSING and not isinstance(value, bool):
            self.fail(name)
            return MISSING
        return value

    def id_list(self, name: str, allowed: Any, most: int) -> Any:
        """A list of distinct ids, each in ``allowed``, at most ``most`` of them."""
        value = self.data.get(name, MISSING)
        if value is MISSING:
            return MISSING
        if (not isinstance(value, list) or len(value) > most or not all(isinstance(v, str) and v in allowed for v in value)
                or len(set(value)) != len(value)):
            self.fail(name)
            return MISSING
        return list(value)

    def check(self) -> None:
        if self.bad:
            raise invalid(self.bad, "invalid fields: " + ", ".join(self.bad))


def due_date(v: Validator, name: str = "due_on") -> Any:
    value = v.data.get(name, MISSING)
    if value is MISSING or value is None:
        return value
    try:
        if isinstance(value, str) and DATE.match(value):
            date.fromisoformat(value)
            return value
    except ValueError:
        pass
    v.fail(name)
    return MISSING


# ---------------------------------------------------------------------------- accounts


def hash_password(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, PBKDF2_ITERATIONS)


def add_user(username: str, password: str, is_admin: bool) -> dict[str, Any]:
    salt = secrets.token_bytes(16)
    user: dict[str, Any] = {"id": new_id("usr"), "username": username, "is_admin": is_admin, "created_at": now(),
            "salt": salt, "hash": hash_password(password, salt)}
    USERS[user["id"]] = user
    USER_IDS[username] = user["id"]
    return user


def user_view(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user[k] for k in ("id", "username", "is_admin", "created_at")}


def caller() -> dict[str, Any]:
    match = BEARER.match(request.headers.get("Authorization", ""))
    user_id = TOKENS.get(match.group(1)) if match else None
    if user_id is None:
        raise ApiError(401, "unauthorized", "a valid bearer token is required")
    return USERS[user_id]


@app.get("/health")
def health() -> Response:
    return reply({"status": "ok"})


@app.post("/auth/token")
def login() -> Response:
    v = Validator(json_body())
    username = v.text("username", required=True, max_len=10_000)
    password = v.text("password", required=True, max_len=10_000)
    v.check()
    user_id = USER_IDS.get(username)
    if user_id is None:
        raise ApiError(401, "unauthorized", "unknown username or wrong password")
    user = USERS[user_id]
    if not hmac.compare_digest(hash_password(password, user["salt"]), user["hash"]):
        raise ApiError(401, "unauthorized", "unknown username or wrong password")
    token = secrets.token_urlsafe(32)
    with LOCK:
        TOKENS[token] = user["id"]
    return reply({"token": token, "token_type": "bearer", "user": user_view(user)})


@app.get("/me")
def me() -> Response:
    return reply(user_view(caller()))


@app.post("/users")
def create_user() -> Response:
    user = caller()
    if not user["is_admin"]:
        raise forbidden("only the administrator creates users")
    v = Validator(json_body())
    username = v.text("username", required=True, max_len=32, pattern=USERNAME)
    password = v.text("password", required=True, min_len=8, max_len=128)
    v.check()
    with LOCK:
        if username in USER_IDS:
            raise conflict("that username is taken")
        created = add_user(username, password, False)
    return reply(user_view(created), 201)


# ---------------------------------------------------------------------------- projects and members


def project_view(project: dict[str, Any]) -> dict[str, Any]:
    return {k: project[k] for k in ("id", "name", "owner_id", "created_at")}


def member_project(project_id: str, user: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The project and the caller's role in it; 404 for non-members (the administrator too)."""
    project = PROJECTS.get(project_id)
    if project is None or user["id"] not in project["members"]:
        raise not_found("project")
    return project, project["members"][user["id"]]


def require(role: str, allowed: tuple[str, ...], what: str) -> None:
    if role not in allowed:
        raise forbidden(f"a {role} may not {what}")


def member_view(project: dict[str, Any], user_id: str) -> dict[str, Any]:
    return {"user_id": user_id, "username": USERS[user_id]["username"], "role": project["members"][user_id]}


@app.post("/projects")
def create_project() -> Response:
    user = caller()
    v = Validator(json_body())
    name = v.text("name", required=True, max_len=100, non_blank=True)
    v.check()
    project = {"id": new_id("prj"), "name": name, "owner_id": user["id"], "created_at": now(),
               "members": {user["id"]: "owner"}, "issues": {}, "next_number": 1,
               "labels": {}, "milestones": {}, "hooks": {}}
    with LOCK:
        PROJECTS[project["id"]] = project
    return reply(project_view(project), 201)


@app.get("/projects")
def list_projects() -> Response:
    user = caller()
    with LOCK:
        return reply({"items": [project_view(p) for p in PROJECTS.values() if user["id"] in p["members"]]})


@app.get("/projects/<project_id>")
def get_project(project_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply(project_view(project))


@app.get("/projects/<project_id>/members")
def list_members(project_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply({"items": [member_view(project, uid) for uid in project["members"]]})


@app.post("/projects/<project_id>/members")
def add_member(project_id: str) -> Response:
    with LOCK:
        project, role = member_project(project_id, caller())
        require(role, ("owner",), "manage members")
        v = Validator(json_body())
        user_id = v.text("user_id", required=True, max_len=200)
        if user_id is not MISSING and user_id not in USERS:
            v.fail("user_id")
        new_role = v.text("role", required=True, max_len=20, choices=("maintainer", "reporter"))
        v.check()
        if user_id in project["members"]:
            raise conflict("that user is already a member")
        project["members"][user_id] = new_role
        return reply(member_view(project, user_id), 201)


def existing_member(project: dict[str, Any], user_id: str) -> str:
    if user_id not in project["members"]:
        raise not_found("member")
    return user_id


@app.patch("/projects/<project_id>/members/<user_id>")
def change_member(project_id: str, user_id: str) -> Response:
    with LOCK:
        project, role = member_project(project_id, caller())
        existing_member(project, user_id)
        require(role, ("owner",), "manage members")
        v = Validator(json_body())
        new_role = v.text("role", required=False, max_len=20, choices=("maintainer", "reporter"))
        v.check()
        if project["members"][user_id] == "owner":
            raise conflict("the owner's membership cannot be changed")
        if new_role is not MISSING:
            project["members"][user_id] = new_role
        return reply(member_view(project, user_id))


@app.delete("/projects/<project_id>/members/<user_id>")
def remove_member(project_id: str, user_id: str) -> Response:
    with LOCK:
        project, role = member_project(project_id, caller())
        existing_member(project, user_id)
        require(role, ("owner",), "manage members")
        if project["members"][user_id] == "owner":
            raise conflict("the owner's membership cannot be removed")
        del project["members"][user_id]
        for issue in project["issues"].values():
            if user_id in issue["assignees"]:
                issue["assignees"].remove(user_id)
        return no_content()


# ---------------------------------------------------------------------------- webhooks


def deliver_later(project: dict[str, Any], event: str, action: str, issue: dict[str, Any], sender: dict[str, Any],
                  comment: dict[str, Any] | None = None) -> list[tuple[dict[str, Any], dict[str, Any], bytes]]:
    """Build (under the lock) one signed delivery per active hook subscribed to ``event``."""
    payload: dict[str, Any] = {"action": action, "project": {"id": project["id"], "name": project["name"]},
                               "issue": issue_view(project, issue), "sender": {"id": sender["id"], "username": sender["username"]}}
    if comment is not None:
        payload["comment"] = comment
    body = json.dumps(payload).encode()
    planned = []
    for hook in project["hooks"].values():
        if hook["active"] and event in hook["events"]:
            record = {"id": new_id("dlv"), "event": event, "action": action, "issue_number": issue["number"],
                      "status_code": None, "success": False, "delivered_at": now()}
            hook["deliveries"].append(record)
            planned.append((hook, record, body))
    return planned


def send_deliveries(planned: list[tuple[dict[str, Any], dict[str, Any], bytes]]) -> None:
    """POST each delivery and record the receiver's status; failures never reach the caller."""
    for hook, record, body in planned:
        signature = "sha256=" + hmac.new(hook["secret"].encode(), body, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json", "X-Tracker-Event": record["event"],
                   "X-Tracker-Delivery": record["id"], "X-Tracker-Signature": signature}
        status: int | None
        try:
            with urllib.request.urlopen(urllib.request.Request(hook["url"], data=body, headers=headers, method="POST"),
                                        timeout=DELIVERY_TIMEOUT_S) as answer:
                status = answer.status
        except urllib.error.HTTPError as err:
            status = err.code
        except Exception:  # noqa: BLE001 - no answer, refused, timed out: recorded as null
            status = None
        with LOCK:
            record["status_code"] = status
            record["success"] = status is not None and 200 <= status < 300


def valid_hook_url(value: Any) -> bool:
    base = os.environ.get("WEBHOOKS_URL", "")
    return (isinstance(value, str) and bool(base) and value.startswith(base + "/") and len(value) <= 500
            and not any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value))


def hook_fields(v: Validator, required: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    url = v.data.get("url", MISSING)
    if url is MISSING:
        if required:
            v.fail("url")
    elif not valid_hook_url(url):
        v.fail("url")
    else:
        fields["url"] = url
    secret = v.text("secret", required=required, min_len=8, max_len=200)
    if secret is not MISSING:
        fields["secret"] = secret
    events = v.data.get("events", MISSING)
    if events is not MISSING:
        if (not isinstance(events, list) or not events or not all(isinstance(e, str) and e in EVENTS for e in events)
                or len(set(events)) != len(events)):
            v.fail("events")
        else:
            fields["events"] = list(events)
    active = v.boolean("active")
    if active is not MISSING:
        fields["active"] = active
    return fields


def hook_view(hook: dict[str, Any]) -> dict[str, Any]:
    return {k: hook[k] for k in ("id", "url", "events", "active", "created_at")}


def owner_hook(project_id: str, hook_id: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    project, role = member_project(project_id, caller())
    hook = None
    if hook_id is not None:
        hook = project["hooks"].get(hook_id)
        if hook is None:
            raise not_found("hook")
    require(role, ("owner",), "manage hooks")
    return project, hook


@app.post("/projects/<project_id>/hooks")
def create_hook(project_id: str) -> Response:
    with LOCK:
        project, _ = owner_hook(project_id)
        v = Validator(json_body())
        fields = hook_fields(v, required=True)
        v.check()
        if len(project["hooks"]) >= MAX_HOOKS:
            raise conflict(f"a project has at most {MAX_HOOKS} hooks")
        hook = {"id": new_id("hook"), "events": list(EVENTS), "active": True, "created_at": now(), "deliveries": [], **fields}
        project["hooks"][hook["id"]] = hook
        return reply(hook_view(hook), 201)


@app.get("/projects/<project_id>/hooks")
def list_hooks(project_id: str) -> Response:
    with LOCK:
        project, _ = owner_hook(project_id)
        return reply({"items": [hook_view(h) for h in project["hooks"].values()]})


@app.patch("/projects/<project_id>/hooks/<hook_id>")
def update_hook(project_id: str, hook_id: str) -> Response:
    with LOCK:
        _, hook = owner_hook(project_id, hook_id)
        assert hook is not None
        v = Validator(json_body())
        fields = hook_fields(v, required=False)
        v.check()
        hook.update(fields)
        return reply(hook_view(hook))


@app.delete("/projects/<project_id>/hooks/<hook_id>")
def delete_hook(project_id: str, hook_id: str) -> Response:
    with LOCK:
        project, hook = owner_hook(project_id, hook_id)
        assert hook is not None
        del project["hooks"][hook["id"]]
        return no_content()


@app.get("/projects/<project_id>/hooks/<hook_id>/deliveries")
def list_deliveries(project_id: str, hook_id: str) -> Response:
    with LOCK:
        _, hook = owner_hook(project_id, hook_id)
        assert hook is not None
        return reply({"items": [dict(d) for d in hook["deliveries"]]})


# ---------------------------------------------------------------------------- issues and comments


def issue_view(project: dict[str, Any], issue: dict[str, Any]) -> dict[str, Any]:
    labels = [project["labels"][lid] for lid in issue["labels"] if lid in project["labels"]]
    return {
        "number": issue["number"], "project_id": project["id"], "title": issue["title"], "body": issue["body"],
        "state": issue["state"], "author_id": issue["author_id"], "assignees": list(issue["assignees"]),
        "labels": [{"id": lb["id"], "name": lb["name"], "color": lb["color"]} for lb in labels],
        "milestone_id": issue["milestone_id"], "comments": len(issue["comment_list"]),
        "created_at": issue["created_at"], "updated_at": issue["updated_at"], "closed_at": issue["closed_at"],
    }


def find_issue(project: dict[str, Any], number: str) -> dict[str, Any]:
    issue = project["issues"].get(int(number)) if NUMBER.match(number) else None
    if issue is None:
        raise not_found("issue")
    return issue


def issue_links(v: Validator, project: dict[str, Any]) -> dict[str, Any]:
    """labels, milestone_id and assignees, each checked against this project only."""
    fields: dict[str, Any] = {}
    labels = v.id_list("labels", project["labels"], 20)
    if labels is not MISSING:
        fields["labels"] = labels
    milestone = v.data.get("milestone_id", MISSING)
    if milestone is not MISSING:
        if milestone is None or (isinstance(milestone, str) and milestone in project["milestones"]):
            fields["milestone_id"] = milestone
        else:
            v.fail("milestone_id")
    assignees = v.id_list("assignees", project["members"], 10)
    if assignees is not MISSING:
        fields["assignees"] = assignees
    return fields


LINKS = ("labels", "milestone_id", "assignees")


@app.post("/projects/<project_id>/issues")
def create_issue(project_id: str) -> Response:
    user = caller()
    with LOCK:
        project, role = member_project(project_id, user)
        data = json_body()
        if role not in WRITERS and any(name in data for name in LINKS):
            raise forbidden("a reporter may not set labels, milestone or assignees")
        v = Validator(data)
        title = v.text("title", required=True, max_len=255, non_blank=True)
        body = v.text("body", required=False, max_len=65_535)
        links = issue_links(v, project)
        v.check()
        stamp = now()
        issue = {"number": project["next_number"], "title": title, "body": "" if body is MISSING else body, "state": "open",
                 "author_id": user["id"], "labels": [], "milestone_id": None, "assignees": [], "comment_list": [],
                 "created_at": stamp, "updated_at": stamp, "closed_at": None, **links}
        project["next_number"] += 1
        project["issues"][issue["number"]] = issue
        planned = deliver_later(project, "issues", "opened", issue, user)
        answer = issue_view(project, issue)
    send_deliveries(planned)
    return reply(answer, 201)


@app.get("/projects/<project_id>/issues/<number>")
def get_issue(project_id: str, number: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply(issue_view(project, find_issue(project, number)))


@app.patch("/projects/<project_id>/issues/<number>")
def update_issue(project_id: str, number: str) -> Response:
    user = caller()
    with LOCK:
        project, role = member_project(project_id, user)
        issue = find_issue(project, number)
        if role not in WRITERS and issue["author_id"] != user["id"]:
            raise forbidden("a reporter may only change issues they authored")
        data = json_body()
        if role not in WRITERS and any(name in data for name in (*LINKS, "state")):
            raise forbidden("a reporter may only change the title and body")
        v = Validator(data)
        changes: dict[str, Any] = {}
        for name, max_len, non_blank in (("title", 255, True), ("body", 65_535, False)):
            value = v.text(name, required=False, max_len=max_len, non_blank=non_blank)
            if value is not MISSING:
                changes[name] = value
        state = v.text("state", required=False, max_len=10, choices=("open", "closed"))
        changes.update(issue_links(v, project))
        v.check()
        stamp = now()
        action = "edited"
        if state is not MISSING and state != issue["state"]:
            issue["state"] = state
            issue["closed_at"] = stamp if state == "closed" else None
            action = state if state == "closed" else "reopened"
        issue.update(changes)
        issue["updated_at"] = stamp
        planned = deliver_later(project, "issues", action, issue, user)
        answer = issue_view(project, issue)
    send_deliveries(planned)
    return reply(answer)


def list_params() -> tuple[str, int, int]:
    bad: list[str] = []
    state = request.args.get("state", "open")
    if state not in ("open", "closed", "all"):
        bad.append("state")
    paging = {}
    for name, default, low, high in (("limit", 20, 1, 100), ("offset", 0, 0, None)):
        raw = request.args.get(name)
        if raw is None:
            paging[name] = default
        elif not INTEGER.match(raw) or int(raw) < low or (high is not None and int(raw) > high):
            bad.append(name)
        else:
            paging[name] = int(raw)
    if bad:
        raise invalid(bad, "invalid query parameters: " + ", ".join(bad))
    return state, paging["limit"], paging["offset"]


@app.get("/projects/<project_id>/issues")
def list_issues(project_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        state, limit, offset = list_params()
        label, milestone, assignee = (request.args.get(k) for k in ("label", "milestone", "assignee"))
        found = [
            issue for issue in sorted(project["issues"].values(), key=lambda i: -i["number"])
            if (state == "all" or issue["state"] == state)
            and (label is None or label in issue["labels"])
            and (milestone is None or issue["milestone_id"] == milestone)
            and (assignee is None or assignee in issue["assignees"])
        ]
        items = [issue_view(project, i) for i in found[offset:offset + limit]]
        return reply({"items": items, "total": len(found), "limit": limit, "offset": offset})


@app.post("/projects/<project_id>/issues/<number>/comments")
def create_comment(project_id: str, number: str) -> Response:
    user = caller()
    with LOCK:
        project, _ = member_project(project_id, user)
        issue = find_issue(project, number)
        v = Validator(json_body())
        text = v.text("body", required=True, max_len=65_535, non_blank=True)
        v.check()
        comment = {"id": new_id("cmt"), "issue_number": issue["number"], "author_id": user["id"], "body": text, "created_at": now()}
        issue["comment_list"].append(comment)
        planned = deliver_later(project, "issue_comment", "created", issue, user, dict(comment))
    send_deliveries(planned)
    return reply(comment, 201)


@app.get("/projects/<project_id>/issues/<number>/comments")
def list_comments(project_id: str, number: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply({"items": [dict(c) for c in find_issue(project, number)["comment_list"]]})


# ---------------------------------------------------------------------------- labels and milestones


def label_fields(v: Validator, required: bool) -> dict[str, Any]:
    fields = {}
    for name, kwargs in (("name", {"max_len": 50, "non_blank": True, "required": required}),
                         ("color", {"max_len": 7, "pattern": COLOR, "required": required}),
                         ("description", {"max_len": 200, "required": False})):
        value = v.text(name, **kwargs)  # type: ignore[arg-type]
        if value is not MISSING:
            fields[name] = value.lower() if name == "color" else value
    return fields


def name_taken(project: dict[str, Any], name: str, except_id: str | None = None) -> bool:
    return any(lb["name"].lower() == name.lower() and lb["id"] != except_id for lb in project["labels"].values())


def writable(project_id: str, what: str, table: str | None = None, item_id: str | None = None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    project, role = member_project(project_id, caller())
    item = None
    if table is not None and item_id is not None:
        item = project[table].get(item_id)
        if item is None:
            raise not_found(what)
    require(role, WRITERS, f"change {what}s")
    return project, item


@app.post("/projects/<project_id>/labels")
def create_label(project_id: str) -> Response:
    with LOCK:
        project, _ = writable(project_id, "label")
        v = Validator(json_body())
        fields = label_fields(v, required=True)
        v.check()
        if name_taken(project, fields["name"]):
            raise conflict("a label with that name exists in this project")
        label = {"id": new_id("lbl"), "description": "", **fields}
        project["labels"][label["id"]] = label
        return reply(label, 201)


@app.get("/projects/<project_id>/labels")
def list_labels(project_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply({"items": [dict(lb) for lb in project["labels"].values()]})


@app.patch("/projects/<project_id>/labels/<label_id>")
def update_label(project_id: str, label_id: str) -> Response:
    with LOCK:
        project, label = writable(project_id, "label", "labels", label_id)
        assert label is not None
        v = Validator(json_body())
        fields = label_fields(v, required=False)
        v.check()
        if "name" in fields and name_taken(project, fields["name"], label["id"]):
            raise conflict("a label with that name exists in this project")
        label.update(fields)
        return reply(dict(label))


@app.delete("/projects/<project_id>/labels/<label_id>")
def delete_label(project_id: str, label_id: str) -> Response:
    with LOCK:
        project, label = writable(project_id, "label", "labels", label_id)
        assert label is not None
        del project["labels"][label["id"]]
        for issue in project["issues"].values():
            if label["id"] in issue["labels"]:
                issue["labels"].remove(label["id"])
        return no_content()


def milestone_view(project: dict[str, Any], milestone: dict[str, Any]) -> dict[str, Any]:
    states = [i["state"] for i in project["issues"].values() if i["milestone_id"] == milestone["id"]]
    opened, closed = states.count("open"), states.count("closed")
    progress = (100 * closed) // (opened + closed) if states else 0
    return {**milestone, "open_issues": opened, "closed_issues": closed, "progress": progress}


def milestone_fields(v: Validator, required: bool) -> dict[str, Any]:
    fields = {}
    title = v.text("title", required=required, max_len=100, non_blank=True)
    if title is not MISSING:
        fields["title"] = title
    description = v.text("description", required=False, max_len=1000)
    if description is not MISSING:
        fields["description"] = description
    due = due_date(v)
    if due is not MISSING:
        fields["due_on"] = due
    if not required:
        state = v.text("state", required=False, max_len=10, choices=("open", "closed"))
        if state is not MISSING:
            fields["state"] = state
    return fields


@app.post("/projects/<project_id>/milestones")
def create_milestone(project_id: str) -> Response:
    with LOCK:
        project, _ = writable(project_id, "milestone")
        v = Validator(json_body())
        fields = milestone_fields(v, required=True)
        v.check()
        milestone = {"id": new_id("ms"), "description": "", "due_on": None, "state": "open", **fields}
        project["milestones"][milestone["id"]] = milestone
        return reply(milestone_view(project, milestone), 201)


@app.get("/projects/<project_id>/milestones")
def list_milestones(project_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        return reply({"items": [milestone_view(project, m) for m in project["milestones"].values()]})


@app.get("/projects/<project_id>/milestones/<milestone_id>")
def get_milestone(project_id: str, milestone_id: str) -> Response:
    with LOCK:
        project, _ = member_project(project_id, caller())
        milestone = project["milestones"].get(milestone_id)
        if milestone is None:
            raise not_found("milestone")
        return reply(milestone_view(project, milestone))


@app.patch("/projects/<project_id>/milestones/<milestone_id>")
def update_milestone(project_id: str, milestone_id: str) -> Response:
    with LOCK:
        project, milestone = writable(project_id, "milestone", "milestones", milestone_id)
        assert milestone is not None
        v = Validator(json_body())
        fields = milestone_fields(v, required=False)
        v.check()
        milestone.update(fields)
        return reply(milestone_view(project, milestone))


@app.delete("/projects/<project_id>/milestones/<milestone_id>")
def delete_milestone(project_id: str, milestone_id: str) -> Response:
    with LOCK:
        project, milestone = writable(project_id, "milestone", "milestones", milestone_id)
        assert milestone is not None
        del project["milestones"][milestone["id"]]
        for issue in project["issues"].values():
            if issue["milestone_id"] == milestone["id"]:
                issue["milestone_id"] = None
        return no_content()


def seed() -> None:
    add_user(os.environ.get("ISSUES_ADMIN_USERNAME", "admin"), os.environ.get("ISSUES_ADMIN_PASSWORD", "change-me-now"), True)


seed()

if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", "8000")), threaded=True)
