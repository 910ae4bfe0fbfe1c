"""Taskboard — projects, members, tasks (FastAPI, in-memory)."""
import os
import re

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from core import (ApiError, bearer_token, check_password, conflict, fmt_ts, hash_password,
                  install_handlers, is_str, json_object, new_id, new_token, next_seq,
                  no_content, not_found, now, page, paging, unauthorized, validation)

app = FastAPI(title="Taskboard", redirect_slashes=False, docs_url=None, redoc_url=None,
              openapi_url=None)
install_handlers(app)

USERNAME_RE = re.compile(r"[a-z0-9_]{3,32}")
ROLES = ("owner", "member", "viewer")
PRIORITIES = ("low", "medium", "high")
STATUSES = ("todo", "in_progress", "done", "cancelled")
TRANSITIONS = {
    "todo": {"in_progress", "cancelled"},
    "in_progress": {"todo", "done", "cancelled"},
    "done": {"in_progress"},
    "cancelled": {"todo"},
}

users = {}          # id -> user
users_by_name = {}  # username -> id
tokens = {}         # token -> user id
projects = {}       # id -> project (members, tasks, activity inside)


def forbidden(message="your role does not allow this action"):
    return ApiError(403, "forbidden", message)


# ---------------------------------------------------------------- helpers

def non_blank(v, max_len):
    return is_str(v) and 1 <= len(v) <= max_len and v.strip() != "" and not v.isspace()


def text_ok(v, max_len):
    return is_str(v) and len(v) <= max_len


def render_user(u):
    return {"id": u["id"], "username": u["username"], "display_name": u["display_name"],
            "created_at": fmt_ts(u["created_at"])}


def current_user(request: Request):
    token = bearer_token(request)
    if token is None or token not in tokens:
        raise unauthorized()
    return users[tokens[token]], token


def render_project(p, user_id):
    return {"id": p["id"], "name": p["name"], "description": p["description"],
            "created_by": p["created_by"], "created_at": fmt_ts(p["created_at"]),
            "role": p["members"][user_id]["role"]}


def render_member(uid, m):
    u = users[uid]
    return {"user_id": uid, "username": u["username"], "display_name": u["display_name"],
            "role": m["role"], "joined_at": fmt_ts(m["joined_at"])}


def render_task(t):
    return {k: t[k] for k in ("id", "project_id", "title", "description", "status", "priority",
                              "assignee_id", "created_by")} | {
        "created_at": fmt_ts(t["created_at"]), "updated_at": fmt_ts(t["updated_at"]),
        "completed_at": fmt_ts(t["completed_at"])}


def render_comment(c):
    return {"id": c["id"], "task_id": c["task_id"], "author_id": c["author_id"],
            "body": c["body"], "created_at": fmt_ts(c["created_at"])}


def render_activity(a):
    return {"id": a["id"], "type": a["type"], "actor_id": a["actor_id"], "task_id": a["task_id"],
            "data": a["data"], "created_at": fmt_ts(a["created_at"])}


def visible_project(user, project_id):
    """The project if it exists and the caller is a member (404 otherwise), and their role."""
    p = projects.get(project_id)
    if p is None or user["id"] not in p["members"]:
        raise not_found("project not found")
    return p, p["members"][user["id"]]["role"]


def project_task(p, task_id):
    t = p["tasks"].get(task_id)
    if t is None:
        raise not_found("task not found")
    return t


def record(p, type_, actor_id, task_id, data):
    p["activity"].append({"id": new_id(), "type": type_, "actor_id": actor_id,
                          "task_id": task_id, "data": data, "created_at": now(),
                          "seq": next_seq()})


def unassign(p, user_id):
    for t in p["tasks"].values():
        if t["assignee_id"] == user_id:
            t["assignee_id"] = None


def assignable(p, value):
    """assignee_id validity: null, or the id of a current owner/member of the project."""
    if value is None:
        return True
    if not is_str(value):
        return False
    m = p["members"].get(value)
    return m is not None and m["role"] in ("owner", "member")


def owner_count(p):
    return sum(1 for m in p["members"].values() if m["role"] == "owner")


# ---------------------------------------------------------------- system & users

@app.get("/health")
async def health():
    return {"status": "ok"}


@app.post("/users", status_code=201)
async def register(request: Request):
    body = await json_object(request)
    bad = []
    username = body.get("username")
    password = body.get("password")
    if not is_str(username) or not USERNAME_RE.fullmatch(username):
        bad.append("username")
    if not is_str(password) or not (8 <= len(password) <= 128):
        bad.append("password")
    display_name = username
    if "display_name" in body:
        display_name = body["display_name"]
        if not non_blank(display_name, 64):
            bad.append("display_name")
    if bad:
        raise validation(bad)
    if username in users_by_name:
        raise conflict("username is taken")
    salt, digest = hash_password(password)
    user = {"id": new_id(), "username": username, "display_name": display_name,
            "salt": salt, "digest": digest, "created_at": now()}
    users[user["id"]] = user
    users_by_name[username] = user["id"]
    return JSONResponse(render_user(user), status_code=201)


@app.post("/auth/token")
async def login(request: Request):
    body = await json_object(request)
    bad = [f for f in ("username", "password") if not is_str(body.get(f))]
    if bad:
        raise validation(bad)
    uid = users_by_name.get(body["username"])
    user = users.get(uid) if uid else None
    if user is None or not check_password(body["password"], user["salt"], user["digest"]):
        raise unauthorized("wrong username or password")
    token = new_token()
    tokens[token] = user["id"]
    return {"token": token, "token_type": "bearer", "user": render_user(user)}


@app.post("/auth/logout", status_code=204)
async def logout(request: Request):
    _, token = current_user(request)
    tokens.pop(token, None)
    return no_content()


@app.get("/me")
async def me(request: Request):
    user, _ = current_user(request)
    return render_user(user)


# ---------------------------------------------------------------- projects

@app.post("/projects", status_code=201)
async def create_project(request: Request):
    user, _ = current_user(request)
    body = await json_object(request)
    bad = []
    name = body.get("name")
    if not non_blank(name, 100):
        bad.append("name")
    description = body.get("description", "")
    if not text_ok(description, 2000):
        bad.append("description")
    if bad:
        raise validation(bad)
    t = now()
    p = {"id": new_id(), "name": name, "description": description, "created_by": user["id"],
         "created_at": t, "seq": next_seq(),
         "members": {user["id"]: {"role": "owner", "joined_at": t}},
         "tasks": {}, "activity": []}
    projects[p["id"]] = p
    record(p, "project_created", user["id"], None, {"name": name})
    return JSONResponse(render_project(p, user["id"]), status_code=201)


@app.get("/projects")
async def list_projects(request: Request):
    user, _ = current_user(request)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    items = sorted((p for p in projects.values() if user["id"] in p["members"]),
                   key=lambda p: p["seq"])
    return page(items, limit, offset, lambda p: render_project(p, user["id"]))


@app.get("/projects/{project_id}")
async def get_project(project_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    return render_project(p, user["id"])


@app.patch("/projects/{project_id}")
async def update_project(project_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    if role != "owner":
        raise forbidden("only owners may edit the project")
    body = await json_object(request)
    bad = []
    if "name" in body and not non_blank(body["name"], 100):
        bad.append("name")
    if "description" in body and not text_ok(body["description"], 2000):
        bad.append("description")
    if bad:
        raise validation(bad)
    for k in ("name", "description"):
        if k in body:
            p[k] = body[k]
    return render_project(p, user["id"])


@app.delete("/projects/{project_id}", status_code=204)
async def delete_project(project_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    if role != "owner":
        raise forbidden("only owners may delete the project")
    del projects[p["id"]]
    return no_content()


# ---------------------------------------------------------------- members

@app.get("/projects/{project_id}/members")
async def list_members(project_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    return {"items": [render_member(uid, m) for uid, m in p["members"].items()]}


@app.post("/projects/{project_id}/members", status_code=201)
async def add_member(project_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    if role != "owner":
        raise forbidden("only owners may add members")
    body = await json_object(request)
    bad = []
    username = body.get("username")
    target = None
    if not is_str(username) or username not in users_by_name:
        bad.append("username")
    else:
        target = users[users_by_name[username]]
    new_role = body.get("role", "member")
    if not is_str(new_role) or new_role not in ROLES:
        bad.append("role")
    if bad:
        raise validation(bad)
    if target["id"] in p["members"]:
        raise conflict("user is already a member")
    m = {"role": new_role, "joined_at": now()}
    p["members"][target["id"]] = m
    record(p, "member_added", user["id"], None, {"user_id": target["id"], "role": new_role})
    return JSONResponse(render_member(target["id"], m), status_code=201)


@app.patch("/projects/{project_id}/members/{user_id}")
async def change_role(project_id: str, user_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    m = p["members"].get(user_id)
    if m is None:
        raise not_found("member not found")
    if role != "owner":
        raise forbidden("only owners may change roles")
    body = await json_object(request)
    new_role = body.get("role")
    if not is_str(new_role) or new_role not in ROLES:
        raise validation(["role"])
    old = m["role"]
    if new_role == old:
        return render_member(user_id, m)
    if old == "owner" and owner_count(p) == 1:
        raise conflict("a project must keep at least one owner")
    m["role"] = new_role
    if new_role == "viewer":
        unassign(p, user_id)
    record(p, "member_role_changed", user["id"], None,
           {"user_id": user_id, "from": old, "to": new_role})
    return render_member(user_id, m)


@app.delete("/projects/{project_id}/members/{user_id}", status_code=204)
async def remove_member(project_id: str, user_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    m = p["members"].get(user_id)
    if m is None:
        raise not_found("member not found")
    if user_id != user["id"] and role != "owner":
        raise forbidden("only owners may remove other members")
    if m["role"] == "owner" and owner_count(p) == 1:
        raise conflict("a project must keep at least one owner")
    del p["members"][user_id]
    unassign(p, user_id)
    record(p, "member_removed", user["id"], None, {"user_id": user_id})
    return no_content()


# ---------------------------------------------------------------- tasks

def validate_task_fields(p, body, creating):
    bad = []
    if creating or "title" in body:
        if not non_blank(body.get("title"), 200):
            bad.append("title")
    if "description" in body and not text_ok(body["description"], 5000):
        bad.append("description")
    if "priority" in body and (not is_str(body["priority"]) or body["priority"] not in PRIORITIES):
        bad.append("priority")
    if "assignee_id" in body and not assignable(p, body["assignee_id"]):
        bad.append("assignee_id")
    if not creating and "status" in body and (
            not is_str(body["status"]) or body["status"] not in STATUSES):
        bad.append("status")
    return bad


@app.post("/projects/{project_id}/tasks", status_code=201)
async def create_task(project_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    if role == "viewer":
        raise forbidden("viewers may not create tasks")
    body = await json_object(request)
    bad = validate_task_fields(p, body, True)
    if bad:
        raise validation(bad)
    t = now()
    task = {"id": new_id(), "project_id": p["id"], "title": body["title"],
            "description": body.get("description", ""), "status": "todo",
            "priority": body.get("priority", "medium"), "assignee_id": body.get("assignee_id"),
            "created_by": user["id"], "created_at": t, "updated_at": t, "completed_at": None,
            "comments": {}}
    p["tasks"][task["id"]] = task
    record(p, "task_created", user["id"], task["id"],
           {"title": task["title"], "assignee_id": task["assignee_id"]})
    return JSONResponse(render_task(task), status_code=201)


@app.get("/projects/{project_id}/tasks")
async def list_tasks(project_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    bad = []
    limit, offset = paging(request, bad)
    status = request.query_params.get("status")
    if status is not None and status not in STATUSES:
        bad.append("status")
    if bad:
        raise validation(bad)
    assignee = request.query_params.get("assignee_id")
    items = list(p["tasks"].values())
    if status is not None:
        items = [t for t in items if t["status"] == status]
    if assignee is not None:
        want = None if assignee == "none" else assignee
        items = [t for t in items if t["assignee_id"] == want]
    return page(items, limit, offset, render_task)


@app.get("/projects/{project_id}/tasks/{task_id}")
async def get_task(project_id: str, task_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    return render_task(project_task(p, task_id))


@app.patch("/projects/{project_id}/tasks/{task_id}")
async def update_task(project_id: str, task_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    task = project_task(p, task_id)
    if role == "viewer":
        raise forbidden("viewers may not edit tasks")
    body = await json_object(request)
    bad = validate_task_fields(p, body, False)
    if bad:
        raise validation(bad)
    old_status = task["status"]
    new_status = body.get("status", old_status)
    if new_status != old_status and new_status not in TRANSITIONS[old_status]:
        raise ApiError(409, "invalid_transition",
                       "cannot move a task from %s to %s" % (old_status, new_status))
    changed = False
    t = now()
    for k in ("title", "description", "priority"):
        if k in body and body[k] != task[k]:
            task[k] = body[k]
            changed = True
    events = []
    if new_status != old_status:
        task["status"] = new_status
        task["completed_at"] = t if new_status == "done" else None
        events.append(("task_status_changed", {"from": old_status, "to": new_status}))
        changed = True
    if "assignee_id" in body and body["assignee_id"] != task["assignee_id"]:
        events.append(("task_assigned", {"assignee_id": body["assignee_id"],
                                         "previous_assignee_id": task["assignee_id"]}))
        task["assignee_id"] = body["assignee_id"]
        changed = True
    if changed:
        task["updated_at"] = t
    for type_, data in events:
        record(p, type_, user["id"], task["id"], data)
    return render_task(task)


@app.delete("/projects/{project_id}/tasks/{task_id}", status_code=204)
async def delete_task(project_id: str, task_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    task = project_task(p, task_id)
    if not (role == "owner" or (role == "member" and task["created_by"] == user["id"])):
        raise forbidden("you may not delete this task")
    del p["tasks"][task["id"]]
    record(p, "task_deleted", user["id"], task["id"], {"title": task["title"]})
    return no_content()


# ---------------------------------------------------------------- comments

@app.post("/projects/{project_id}/tasks/{task_id}/comments", status_code=201)
async def add_comment(project_id: str, task_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    task = project_task(p, task_id)
    if role == "viewer":
        raise forbidden("viewers may not comment")
    body = await json_object(request)
    if not non_blank(body.get("body"), 2000):
        raise validation(["body"])
    c = {"id": new_id(), "task_id": task["id"], "author_id": user["id"], "body": body["body"],
         "created_at": now()}
    task["comments"][c["id"]] = c
    record(p, "comment_added", user["id"], task["id"], {"comment_id": c["id"]})
    return JSONResponse(render_comment(c), status_code=201)


@app.get("/projects/{project_id}/tasks/{task_id}/comments")
async def list_comments(project_id: str, task_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    task = project_task(p, task_id)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    return page(list(task["comments"].values()), limit, offset, render_comment)


@app.delete("/projects/{project_id}/tasks/{task_id}/comments/{comment_id}", status_code=204)
async def delete_comment(project_id: str, task_id: str, comment_id: str, request: Request):
    user, _ = current_user(request)
    p, role = visible_project(user, project_id)
    task = project_task(p, task_id)
    c = task["comments"].get(comment_id)
    if c is None:
        raise not_found("comment not found")
    if not (role == "owner" or (c["author_id"] == user["id"] and role == "member")):
        raise forbidden("you may not delete this comment")
    del task["comments"][c["id"]]
    return no_content()


# ---------------------------------------------------------------- activity

@app.get("/projects/{project_id}/activity")
async def list_activity(project_id: str, request: Request):
    user, _ = current_user(request)
    p, _ = visible_project(user, project_id)
    bad = []
    limit, offset = paging(request, bad)
    if bad:
        raise validation(bad)
    return page(list(reversed(p["activity"])), limit, offset, render_activity)


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "8000")),
                log_level="warning", access_log=False)
