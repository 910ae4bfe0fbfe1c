"""Issue tracker: projects with roles, numbered issues, labels, milestones, signed webhooks.

Flask, in-memory storage guarded by one lock; webhook deliveries are sent synchronously
(after the change is committed, before the answer) outside the lock.
"""
import datetime as _dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import unicodedata
import uuid
from urllib.parse import urlsplit

import requests
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

MAX_BODY = 1024 * 1024
MAX_DEPTH = 32

app = Flask(__name__)
LOCK = threading.RLock()

USERS = {}          # id -> {id, username, is_admin, created_at, pw}
USERNAMES = {}      # username -> id
TOKENS = {}         # token -> user id
PROJECTS = {}       # id -> project dict (with internal keys)
_last_ts = [None]


# --------------------------------------------------------------------------- helpers
def now():
    with LOCK:
        t = _dt.datetime.now(_dt.timezone.utc)
        if _last_ts[0] is not None and t <= _last_ts[0]:
            t = _last_ts[0] + _dt.timedelta(microseconds=1)
        _last_ts[0] = t
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id():
    return uuid.uuid4().hex


def hash_password(pw):
    salt = secrets.token_bytes(16)
    dk = hashlib.scrypt(pw.encode("utf-8"), salt=salt, n=2 ** 14, r=8, p=1, dklen=32)
    return salt, dk


def check_password(pw, stored):
    salt, dk = stored
    got = hashlib.scrypt(pw.encode("utf-8"), salt=salt, n=2 ** 14, r=8, p=1, dklen=32)
    return hmac.compare_digest(got, dk)


_DUMMY = hash_password("dummy-password-for-timing")


class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.fields = fields


def jresp(obj, status=200):
    return Response(json.dumps(obj, ensure_ascii=False), status=status,
                    mimetype="application/json")


def no_content():
    r = Response(status=204)
    r.headers.pop("Content-Type", None)
    return r


def err(status, code, message, fields=None):
    raise ApiError(status, code, message, fields)


def unauthorized():
    err(401, "unauthorized", "missing or invalid bearer token")


def not_found(what="resource"):
    err(404, "not_found", f"{what} not found")


def forbidden(msg="your role does not allow this action"):
    err(403, "forbidden", msg)


def conflict(msg):
    err(409, "conflict", msg)


def invalid(fields, msg="validation failed"):
    out = []
    for f in fields:
        if f not in out:
            out.append(f)
    err(422, "validation_error", msg, out)


@app.errorhandler(ApiError)
def _api_error(e):
    body = {"error": e.code, "message": e.message}
    if e.status == 422:
        body["fields"] = e.fields or []
    return jresp(body, e.status)


@app.errorhandler(HTTPException)
def _http_error(e):
    if e.code == 404:
        # 401 wins over 404 even for paths that do not exist.
        if current_user_or_none() is None:
            return jresp({"error": "unauthorized", "message": "missing or invalid bearer token"}, 401)
        return jresp({"error": "not_found", "message": "not found"}, 404)
    if e.code == 405:
        return jresp({"error": "method_not_allowed", "message": "method not allowed"}, 405)
    if e.code == 413:
        return jresp({"error": "validation_error", "message": "request body too large", "fields": []}, 413)
    if e.code >= 500:
        return jresp({"error": "internal_error", "message": "internal error"}, e.code)
    return jresp({"error": "validation_error", "message": e.description or "bad request",
                  "fields": []}, 422)


@app.errorhandler(Exception)
def _unexpected(e):  # pragma: no cover
    app.logger.exception("unexpected error")
    return jresp({"error": "internal_error", "message": "internal error"}, 500)


def _depth_ok(obj):
    stack = [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, (dict, list)):
            if d > MAX_DEPTH:
                return False
            vals = o.values() if isinstance(o, dict) else o
            for v in vals:
                if isinstance(v, (dict, list)):
                    stack.append((v, d + 1))
    return True


def _raw_depth_ok(raw):
    """Bracket depth outside strings, before parsing (avoids deep recursion)."""
    depth = 0
    in_str = False
    esc = False
    for ch in raw:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def body():
    """The request body as a dict; 413/422 otherwise."""
    stream = request.stream
    chunks, size = [], 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        size += len(chunk)
        if size <= MAX_BODY:
            chunks.append(chunk)
        elif chunks:
            chunks = []  # keep draining so the client can read our answer
    if size > MAX_BODY:
        err(413, "validation_error", "request body larger than 1 MiB", [])
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        invalid([], "body is not valid UTF-8 JSON")
    if not _raw_depth_ok(text):
        invalid([], "JSON nested too deeply")
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        invalid([], "body is not valid JSON")
    if not isinstance(obj, dict):
        invalid([], "body must be a JSON object")
    if not _depth_ok(obj):
        invalid([], "JSON nested too deeply")
    return obj


def is_str(v):
    return isinstance(v, str)


def nonblank(s):
    return isinstance(s, str) and s.strip() != ""


def current_user_or_none():
    h = request.headers.get("Authorization", "")
    parts = h.split(" ")
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    uid = TOKENS.get(parts[1])
    if uid is None:
        return None
    return USERS.get(uid)


def auth():
    u = current_user_or_none()
    if u is None:
        unauthorized()
    return u


def user_out(u):
    return {"id": u["id"], "username": u["username"], "is_admin": u["is_admin"],
            "created_at": u["created_at"]}


def get_project(pid, user):
    p = PROJECTS.get(pid)
    if p is None or user["id"] not in p["members"]:
        not_found("project")
    return p


def role_of(p, user):
    return p["members"][user["id"]]


def project_out(p):
    return {"id": p["id"], "name": p["name"], "owner_id": p["owner_id"],
            "created_at": p["created_at"]}


def member_out(p, uid):
    return {"user_id": uid, "username": USERS[uid]["username"], "role": p["members"][uid]}


def label_ref(p, lid):
    l = p["labels"][lid]
    return {"id": l["id"], "name": l["name"], "color": l["color"]}


def label_out(l):
    return {"id": l["id"], "name": l["name"], "color": l["color"], "description": l["description"]}


def issue_out(p, i):
    return {
        "number": i["number"], "project_id": p["id"], "title": i["title"], "body": i["body"],
        "state": i["state"], "author_id": i["author_id"], "assignees": list(i["assignees"]),
        "labels": [label_ref(p, lid) for lid in i["labels"] if lid in p["labels"]],
        "milestone_id": i["milestone_id"], "comments": len(i["comments"]),
        "created_at": i["created_at"], "updated_at": i["updated_at"], "closed_at": i["closed_at"],
    }


def milestone_out(p, m):
    o = c = 0
    for i in p["issues"].values():
        if i["milestone_id"] == m["id"]:
            if i["state"] == "open":
                o += 1
            else:
                c += 1
    total = o + c
    return {"id": m["id"], "title": m["title"], "description": m["description"],
            "due_on": m["due_on"], "state": m["state"], "open_issues": o, "closed_issues": c,
            "progress": (100 * c) // total if total else 0}


def hook_out(h):
    return {"id": h["id"], "url": h["url"], "events": list(h["events"]), "active": h["active"],
            "created_at": h["created_at"]}


def comment_out(c):
    return {"id": c["id"], "issue_number": c["issue_number"], "author_id": c["author_id"],
            "body": c["body"], "created_at": c["created_at"]}


def get_issue(p, number):
    if not isinstance(number, str) or not re.fullmatch(r"[1-9][0-9]{0,17}", number):
        not_found("issue")
    i = p["issues"].get(int(number))
    if i is None:
        not_found("issue")
    return i


def valid_date(v):
    if not isinstance(v, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", v):
        return False
    try:
        _dt.date(int(v[0:4]), int(v[5:7]), int(v[8:10]))
    except ValueError:
        return False
    return True


def webhooks_base():
    return os.environ.get("WEBHOOKS_URL", "").rstrip("/") if os.environ.get("WEBHOOKS_URL") else ""


def valid_hook_url(v):
    if not isinstance(v, str) or len(v) > 500:
        return False
    for ch in v:
        if ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Zs"):
            return False
    base = webhooks_base()
    if not base or not v.startswith(base + "/"):
        return False
    try:
        a, b = urlsplit(v), urlsplit(base)
        if a.scheme.lower() != b.scheme.lower() or a.netloc.lower() != b.netloc.lower():
            return False
        if a.hostname != b.hostname or a.port != b.port:
            return False
    except ValueError:
        return False
    if "\\" in v:
        return False
    return True


# --------------------------------------------------------------------------- webhooks
def plan_deliveries(p, event, payload):
    """Under the lock: the hooks to deliver to, with their secret and the body."""
    out = []
    for h in p["hooks"].values():
        if h["active"] and event in h["events"]:
            out.append((h, h["url"], h["secret"]))
    return out


def deliver(plan, event, payload, issue_number):
    for h, url, secret in plan:
        did = new_id()
        raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        sig = hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json",
            "X-Tracker-Event": event,
            "X-Tracker-Delivery": did,
            "X-Tracker-Signature": "sha256=" + sig,
            "User-Agent": "issue-tracker-hooks/1",
        }
        status = None
        try:
            r = requests.post(url, data=raw, headers=headers, timeout=5, allow_redirects=False)
            status = r.status_code
            r.close()
        except Exception:
            status = None
        rec = {"id": did, "event": event, "action": payload["action"], "issue_number": issue_number,
               "status_code": status, "success": status is not None and 200 <= status < 300,
               "delivered_at": now()}
        with LOCK:
            h["deliveries"].append(rec)


def issue_event(p, issue, action, sender, comment=None):
    """Under the lock: build the payload and the list of hooks."""
    event = "issue_comment" if comment is not None else "issues"
    payload = {
        "action": action,
        "project": {"id": p["id"], "name": p["name"]},
        "issue": issue_out(p, issue),
        "sender": {"id": sender["id"], "username": sender["username"]},
    }
    if comment is not None:
        payload["comment"] = comment_out(comment)
    return (plan_deliveries(p, event, payload), event, payload, issue["number"])


# --------------------------------------------------------------------------- routes: accounts
@app.get("/health")
def health():
    return jresp({"status": "ok"})


@app.post("/auth/token")
def login():
    b = body()
    bad = [f for f in ("username", "password") if not is_str(b.get(f))]
    if bad:
        invalid(bad)
    with LOCK:
        uid = USERNAMES.get(b["username"])
        u = USERS.get(uid) if uid else None
    if u is None:
        check_password(b["password"], _DUMMY)
        unauthorized_login()
    if not check_password(b["password"], u["pw"]):
        unauthorized_login()
    tok = secrets.token_urlsafe(32)
    with LOCK:
        TOKENS[tok] = u["id"]
    return jresp({"token": tok, "token_type": "bearer", "user": user_out(u)})


def unauthorized_login():
    err(401, "unauthorized", "wrong username or password")


@app.get("/me")
def me():
    return jresp(user_out(auth()))


@app.post("/users")
def create_user():
    u = auth()
    if not u["is_admin"]:
        forbidden("only the administrator creates users")
    b = body()
    bad = []
    un, pw = b.get("username"), b.get("password")
    if not is_str(un) or not re.fullmatch(r"[a-z0-9_]{3,32}", un):
        bad.append("username")
    if not is_str(pw) or not (8 <= len(pw) <= 128):
        bad.append("password")
    if bad:
        invalid(bad)
    if un in USERNAMES:
        conflict("username taken")
    salt_dk = hash_password(pw)
    with LOCK:
        if un in USERNAMES:
            conflict("username taken")
        nu = {"id": new_id(), "username": un, "is_admin": False, "created_at": now(), "pw": salt_dk}
        USERS[nu["id"]] = nu
        USERNAMES[un] = nu["id"]
    return jresp(user_out(nu), 201)


# --------------------------------------------------------------------------- projects & members
@app.route("/projects", methods=["GET", "POST"])
def projects():
    u = auth()
    if request.method == "GET":
        with LOCK:
            items = [project_out(p) for p in PROJECTS.values() if u["id"] in p["members"]]
        return jresp({"items": items})
    b = body()
    name = b.get("name")
    if not nonblank(name) or len(name) > 100:
        invalid(["name"])
    with LOCK:
        p = {"id": new_id(), "name": name, "owner_id": u["id"], "created_at": now(),
             "members": {u["id"]: "owner"}, "issues": {}, "next_number": 1, "labels": {},
             "milestones": {}, "hooks": {}}
        PROJECTS[p["id"]] = p
        return jresp(project_out(p), 201)


@app.get("/projects/<pid>")
def project_get(pid):
    u = auth()
    with LOCK:
        return jresp(project_out(get_project(pid, u)))


@app.route("/projects/<pid>/members", methods=["GET", "POST"])
def members(pid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if request.method == "GET":
            return jresp({"items": [member_out(p, uid) for uid in p["members"]]})
        if role_of(p, u) != "owner":
            forbidden("only the owner manages members")
    b = body()
    with LOCK:
        p = get_project(pid, u)
        bad = []
        uid, role = b.get("user_id"), b.get("role")
        if not is_str(uid) or uid not in USERS:
            bad.append("user_id")
        if role not in ("maintainer", "reporter") or not is_str(role):
            bad.append("role")
        if bad:
            invalid(bad)
        if uid in p["members"]:
            conflict("user is already a member")
        p["members"][uid] = role
        return jresp(member_out(p, uid), 201)


@app.route("/projects/<pid>/members/<uid>", methods=["PATCH", "DELETE"])
def member(pid, uid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if uid not in p["members"]:
            not_found("member")
        if role_of(p, u) != "owner":
            forbidden("only the owner manages members")
        if request.method == "DELETE":
            if uid == p["owner_id"]:
                conflict("the owner's membership cannot be changed")
            del p["members"][uid]
            for i in p["issues"].values():
                if uid in i["assignees"]:
                    i["assignees"] = [a for a in i["assignees"] if a != uid]
            return no_content()
    b = body()
    with LOCK:
        p = get_project(pid, u)
        if uid not in p["members"]:
            not_found("member")
        role = b.get("role")
        if not is_str(role) or role not in ("maintainer", "reporter"):
            invalid(["role"])
        if uid == p["owner_id"]:
            conflict("the owner's membership cannot be changed")
        p["members"][uid] = role
        return jresp(member_out(p, uid))


# --------------------------------------------------------------------------- issues
def validate_issue_fields(p, b, creating):
    """Returns (bad_fields, cleaned dict of defined fields)."""
    bad, out = [], {}
    if "title" in b or creating:
        t = b.get("title")
        if not nonblank(t) or len(t) > 255:
            bad.append("title")
        else:
            out["title"] = t
    if "body" in b:
        v = b["body"]
        if not is_str(v) or len(v) > 65535:
            bad.append("body")
        else:
            out["body"] = v
    if not creating and "state" in b:
        v = b["state"]
        if not is_str(v) or v not in ("open", "closed"):
            bad.append("state")
        else:
            out["state"] = v
    if "labels" in b:
        v = b["labels"]
        if (not isinstance(v, list) or len(v) > 20 or not all(is_str(x) for x in v)
                or len(set(v)) != len(v) or not all(x in p["labels"] for x in v)):
            bad.append("labels")
        else:
            out["labels"] = list(v)
    if "milestone_id" in b:
        v = b["milestone_id"]
        if v is None:
            out["milestone_id"] = None
        elif not is_str(v) or v not in p["milestones"]:
            bad.append("milestone_id")
        else:
            out["milestone_id"] = v
    if "assignees" in b:
        v = b["assignees"]
        if (not isinstance(v, list) or len(v) > 10 or not all(is_str(x) for x in v)
                or len(set(v)) != len(v) or not all(x in p["members"] for x in v)):
            bad.append("assignees")
        else:
            out["assignees"] = list(v)
    return bad, out


def _query_int(name, default, lo, hi, bad):
    raw = request.args.get(name)
    if raw is None:
        return default
    if not re.fullmatch(r"[0-9]{1,9}", raw):
        bad.append(name)
        return default
    v = int(raw)
    if v < lo or (hi is not None and v > hi):
        bad.append(name)
    return v


@app.route("/projects/<pid>/issues", methods=["GET", "POST"])
def issues(pid):
    u = auth()
    if request.method == "GET":
        with LOCK:
            p = get_project(pid, u)
            bad = []
            state = request.args.get("state", "open")
            if state not in ("open", "closed", "all"):
                bad.append("state")
            limit = _query_int("limit", 20, 1, 100, bad)
            offset = _query_int("offset", 0, 0, None, bad)
            if bad:
                invalid(bad)
            label = request.args.get("label")
            ms = request.args.get("milestone")
            asg = request.args.get("assignee")
            res = []
            for n in sorted(p["issues"], reverse=True):
                i = p["issues"][n]
                if state != "all" and i["state"] != state:
                    continue
                if label is not None and label not in i["labels"]:
                    continue
                if ms is not None and i["milestone_id"] != ms:
                    continue
                if asg is not None and asg not in i["assignees"]:
                    continue
                res.append(i)
            page = res[offset:offset + limit]
            return jresp({"items": [issue_out(p, i) for i in page], "total": len(res),
                          "limit": limit, "offset": offset})
    with LOCK:
        get_project(pid, u)
    b = body()
    with LOCK:
        p = get_project(pid, u)
        role = role_of(p, u)
        if role == "reporter" and any(k in b for k in ("labels", "milestone_id", "assignees")):
            forbidden("reporters cannot set labels, milestone or assignees")
        bad, v = validate_issue_fields(p, b, creating=True)
        if bad:
            invalid(bad)
        ts = now()
        i = {"number": p["next_number"], "title": v["title"], "body": v.get("body", ""),
             "state": "open", "author_id": u["id"], "assignees": v.get("assignees", []),
             "labels": v.get("labels", []), "milestone_id": v.get("milestone_id"),
             "comments": [], "created_at": ts, "updated_at": ts, "closed_at": None}
        p["next_number"] += 1
        p["issues"][i["number"]] = i
        out = issue_out(p, i)
        ev = issue_event(p, i, "opened", u)
    deliver(*ev)
    return jresp(out, 201)


@app.route("/projects/<pid>/issues/<number>", methods=["GET", "PATCH"])
def issue(pid, number):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        i = get_issue(p, number)
        if request.method == "GET":
            return jresp(issue_out(p, i))
        if role_of(p, u) == "reporter" and i["author_id"] != u["id"]:
            forbidden("reporters change only issues they authored")
    b = body()
    with LOCK:
        p = get_project(pid, u)
        i = get_issue(p, number)
        role = role_of(p, u)
        if role == "reporter":
            if i["author_id"] != u["id"]:
                forbidden("reporters change only issues they authored")
            if any(k in b for k in ("state", "labels", "milestone_id", "assignees")):
                forbidden("reporters cannot change state, labels, milestone or assignees")
        bad, v = validate_issue_fields(p, b, creating=False)
        if bad:
            invalid(bad)
        action = "edited"
        for k in ("title", "body", "labels", "milestone_id", "assignees"):
            if k in v:
                i[k] = v[k]
        ts = now()
        if "state" in v and v["state"] != i["state"]:
            i["state"] = v["state"]
            if v["state"] == "closed":
                i["closed_at"] = ts
                action = "closed"
            else:
                i["closed_at"] = None
                action = "reopened"
        i["updated_at"] = ts
        out = issue_out(p, i)
        ev = issue_event(p, i, action, u)
    deliver(*ev)
    return jresp(out)


@app.route("/projects/<pid>/issues/<number>/comments", methods=["GET", "POST"])
def comments(pid, number):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        i = get_issue(p, number)
        if request.method == "GET":
            return jresp({"items": [comment_out(c) for c in i["comments"]]})
    b = body()
    with LOCK:
        p = get_project(pid, u)
        i = get_issue(p, number)
        text = b.get("body")
        if not nonblank(text) or len(text) > 65535:
            invalid(["body"])
        c = {"id": new_id(), "issue_number": i["number"], "author_id": u["id"], "body": text,
             "created_at": now()}
        i["comments"].append(c)
        ev = issue_event(p, i, "created", u, comment=c)
    deliver(*ev)
    return jresp(comment_out(c), 201)


# --------------------------------------------------------------------------- labels
COLOR_RE = re.compile(r"#[0-9a-fA-F]{6}")


def _label_fields(p, b, creating, self_id=None):
    bad, out = [], {}
    if "name" in b or creating:
        v = b.get("name")
        if not nonblank(v) or len(v) > 50:
            bad.append("name")
        else:
            out["name"] = v
    if "color" in b or creating:
        v = b.get("color")
        if not is_str(v) or not COLOR_RE.fullmatch(v):
            bad.append("color")
        else:
            out["color"] = v.lower()
    if "description" in b:
        v = b["description"]
        if not is_str(v) or len(v) > 200:
            bad.append("description")
        else:
            out["description"] = v
    return bad, out


def _manage_check(p, u):
    if role_of(p, u) not in ("owner", "maintainer"):
        forbidden("reporters cannot manage labels and milestones")


@app.route("/projects/<pid>/labels", methods=["GET", "POST"])
def labels(pid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if request.method == "GET":
            return jresp({"items": [label_out(l) for l in p["labels"].values()]})
        _manage_check(p, u)
    b = body()
    with LOCK:
        p = get_project(pid, u)
        _manage_check(p, u)
        bad, v = _label_fields(p, b, True)
        if bad:
            invalid(bad)
        key = v["name"].lower()
        if any(l["name"].lower() == key for l in p["labels"].values()):
            conflict("label name taken in this project")
        l = {"id": new_id(), "name": v["name"], "color": v["color"],
             "description": v.get("description", "")}
        p["labels"][l["id"]] = l
        return jresp(label_out(l), 201)


@app.route("/projects/<pid>/labels/<lid>", methods=["PATCH", "DELETE"])
def label(pid, lid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if lid not in p["labels"]:
            not_found("label")
        _manage_check(p, u)
        if request.method == "DELETE":
            del p["labels"][lid]
            for i in p["issues"].values():
                if lid in i["labels"]:
                    i["labels"] = [x for x in i["labels"] if x != lid]
            return no_content()
    b = body()
    with LOCK:
        p = get_project(pid, u)
        if lid not in p["labels"]:
            not_found("label")
        _manage_check(p, u)
        bad, v = _label_fields(p, b, False)
        if bad:
            invalid(bad)
        if "name" in v:
            key = v["name"].lower()
            if any(l["name"].lower() == key and l["id"] != lid for l in p["labels"].values()):
                conflict("label name taken in this project")
        l = p["labels"][lid]
        l.update(v)
        return jresp(label_out(l))


# --------------------------------------------------------------------------- milestones
def _milestone_fields(b, creating):
    bad, out = [], {}
    if "title" in b or creating:
        v = b.get("title")
        if not nonblank(v) or len(v) > 100:
            bad.append("title")
        else:
            out["title"] = v
    if "description" in b:
        v = b["description"]
        if not is_str(v) or len(v) > 1000:
            bad.append("description")
        else:
            out["description"] = v
    if "due_on" in b:
        v = b["due_on"]
        if v is not None and not valid_date(v):
            bad.append("due_on")
        else:
            out["due_on"] = v
    if not creating and "state" in b:
        v = b["state"]
        if not is_str(v) or v not in ("open", "closed"):
            bad.append("state")
        else:
            out["state"] = v
    return bad, out


@app.route("/projects/<pid>/milestones", methods=["GET", "POST"])
def milestones(pid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if request.method == "GET":
            return jresp({"items": [milestone_out(p, m) for m in p["milestones"].values()]})
        _manage_check(p, u)
    b = body()
    with LOCK:
        p = get_project(pid, u)
        _manage_check(p, u)
        bad, v = _milestone_fields(b, True)
        if bad:
            invalid(bad)
        m = {"id": new_id(), "title": v["title"], "description": v.get("description", ""),
             "due_on": v.get("due_on"), "state": "open", "created_at": now()}
        p["milestones"][m["id"]] = m
        return jresp(milestone_out(p, m), 201)


@app.route("/projects/<pid>/milestones/<mid>", methods=["GET", "PATCH", "DELETE"])
def milestone(pid, mid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if mid not in p["milestones"]:
            not_found("milestone")
        if request.method == "GET":
            return jresp(milestone_out(p, p["milestones"][mid]))
        _manage_check(p, u)
        if request.method == "DELETE":
            del p["milestones"][mid]
            for i in p["issues"].values():
                if i["milestone_id"] == mid:
                    i["milestone_id"] = None
            return no_content()
    b = body()
    with LOCK:
        p = get_project(pid, u)
        if mid not in p["milestones"]:
            not_found("milestone")
        _manage_check(p, u)
        bad, v = _milestone_fields(b, False)
        if bad:
            invalid(bad)
        m = p["milestones"][mid]
        m.update(v)
        return jresp(milestone_out(p, m))


# --------------------------------------------------------------------------- hooks
def _owner_check(p, u):
    if role_of(p, u) != "owner":
        forbidden("only the owner manages hooks")


def _hook_fields(b, creating):
    bad, out = [], {}
    if "url" in b or creating:
        v = b.get("url")
        if not valid_hook_url(v):
            bad.append("url")
        else:
            out["url"] = v
    if "secret" in b or creating:
        v = b.get("secret")
        if not is_str(v) or not (8 <= len(v) <= 200):
            bad.append("secret")
        else:
            out["secret"] = v
    if "events" in b:
        v = b["events"]
        if (not isinstance(v, list) or not v or not all(is_str(x) for x in v)
                or len(set(v)) != len(v) or not all(x in ("issues", "issue_comment") for x in v)):
            bad.append("events")
        else:
            out["events"] = list(v)
    if "active" in b:
        v = b["active"]
        if not isinstance(v, bool):
            bad.append("active")
        else:
            out["active"] = v
    return bad, out


@app.route("/projects/<pid>/hooks", methods=["GET", "POST"])
def hooks(pid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        _owner_check(p, u)
        if request.method == "GET":
            return jresp({"items": [hook_out(h) for h in p["hooks"].values()]})
    b = body()
    with LOCK:
        p = get_project(pid, u)
        _owner_check(p, u)
        bad, v = _hook_fields(b, True)
        if bad:
            invalid(bad)
        if len(p["hooks"]) >= 5:
            conflict("a project has at most 5 hooks")
        h = {"id": new_id(), "url": v["url"], "secret": v["secret"],
             "events": v.get("events", ["issues", "issue_comment"]),
             "active": v.get("active", True), "created_at": now(), "deliveries": []}
        p["hooks"][h["id"]] = h
        return jresp(hook_out(h), 201)


@app.route("/projects/<pid>/hooks/<hid>", methods=["PATCH", "DELETE"])
def hook(pid, hid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if hid not in p["hooks"]:
            not_found("hook")
        _owner_check(p, u)
        if request.method == "DELETE":
            del p["hooks"][hid]
            return no_content()
    b = body()
    with LOCK:
        p = get_project(pid, u)
        if hid not in p["hooks"]:
            not_found("hook")
        _owner_check(p, u)
        bad, v = _hook_fields(b, False)
        if bad:
            invalid(bad)
        h = p["hooks"][hid]
        h.update(v)
        return jresp(hook_out(h))


@app.get("/projects/<pid>/hooks/<hid>/deliveries")
def deliveries(pid, hid):
    u = auth()
    with LOCK:
        p = get_project(pid, u)
        if hid not in p["hooks"]:
            not_found("hook")
        _owner_check(p, u)
        return jresp({"items": [dict(d) for d in p["hooks"][hid]["deliveries"]]})


# --------------------------------------------------------------------------- start-up
def bootstrap():
    un = os.environ.get("ISSUES_ADMIN_USERNAME", "tracker_admin")
    pw = os.environ.get("ISSUES_ADMIN_PASSWORD", "")
    if not pw:
        pw = secrets.token_urlsafe(24)
    a = {"id": new_id(), "username": un, "is_admin": True, "created_at": now(),
         "pw": hash_password(pw)}
    USERS[a["id"]] = a
    USERNAMES[un] = a["id"]


bootstrap()

if __name__ == "__main__":
    from werkzeug.serving import run_simple

    run_simple("0.0.0.0", int(os.environ.get("PORT", "8000")), app, threaded=True,
               use_reloader=False, use_debugger=False)
