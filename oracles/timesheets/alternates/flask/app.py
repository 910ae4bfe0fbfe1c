"""Timesheets service (Flask, in-memory state)."""
import datetime as dt
import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import uuid

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

MAX_BODY = 1024 * 1024
app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_BODY

LOCK = threading.RLock()
USERS = {}          # id -> dict (with private _pw, _salt)
USER_ORDER = []     # ids in creation order
TOKENS = {}         # token -> user id
CUSTOMERS = {}
CUST_ORDER = []
PROJECTS = {}
PROJ_ORDER = []
ACTIVITIES = {}
ACT_ORDER = []
ENTRIES = {}        # id -> entry (with _seq)
SEQ = [0]
SHEETS = {}         # (user_id, week) -> dict(status, submitted_at, decided_at, decided_by, reason)

PBKDF2_ITER = 120_000
USERNAME_RE = re.compile(r"^[a-z0-9_]{3,32}$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TIME_RE = re.compile(r"^(\d{2}):(\d{2})$")
WEEK_RE = re.compile(r"^(\d{4})-W(\d{2})$")
INT_RE = re.compile(r"^[0-9]+$")


class ApiError(Exception):
    def __init__(self, status, code, message, fields=None):
        super().__init__(message)
        self.status, self.code, self.message, self.fields = status, code, message, fields


def err(status, code, message, fields=None):
    return ApiError(status, code, message, fields)


def V(fields, message="validation failed"):
    seen = []
    for f in fields:
        if f not in seen:
            seen.append(f)
    return ApiError(422, "validation_error", message, seen)


def jresp(obj, status=200):
    if status == 204:
        return Response(status=204)
    return Response(json.dumps(obj, ensure_ascii=False), status=status, mimetype="application/json")


def now():
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id():
    return uuid.uuid4().hex


def hash_pw(pw, salt=None):
    salt = salt or secrets.token_bytes(16)
    return salt, hashlib.pbkdf2_hmac("sha256", pw.encode("utf-8"), salt, PBKDF2_ITER)


def pub_user(u):
    return {k: v for k, v in u.items() if not k.startswith("_")}


def pub(o):
    return {k: v for k, v in o.items() if not k.startswith("_")}


def is_int(v):
    return type(v) is int


def nonblank(s):
    return isinstance(s, str) and s.strip() != ""


def parse_date(s):
    if not isinstance(s, str) or not DATE_RE.match(s):
        return None
    try:
        d = dt.date.fromisoformat(s)
    except ValueError:
        return None
    if d < dt.date(2000, 1, 1) or d > dt.date(2099, 12, 31):
        return None
    return d


def parse_time(s):
    if not isinstance(s, str):
        return None
    m = TIME_RE.match(s)
    if not m:
        return None
    h, mi = int(m.group(1)), int(m.group(2))
    if h > 23 or mi > 59:
        return None
    return h * 60 + mi


def parse_week(s):
    m = WEEK_RE.match(s or "")
    if not m:
        return None
    y, w = int(m.group(1)), int(m.group(2))
    if y < 2000 or y > 2099 or w < 1:
        return None
    try:
        monday = dt.date.fromisocalendar(y, w, 1)
    except ValueError:
        return None
    return monday


def week_of(datestr):
    d = dt.date.fromisoformat(datestr)
    y, w, _ = d.isocalendar()
    return "%04d-W%02d" % (y, w)


# ---------- body parsing ----------

def json_depth_ok(text, limit=32):
    depth = 0
    in_str = False
    esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        else:
            if ch == '"':
                in_str = True
            elif ch in "[{":
                depth += 1
                if depth > limit:
                    return False
            elif ch in "]}":
                depth -= 1
    return True


def _bad_const(c):
    raise ValueError("bad constant")


def body():
    raw = request.get_data(cache=True)
    if len(raw) > MAX_BODY:
        raise err(413, "validation_error", "body too large", [])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise V([], "body is not valid UTF-8 JSON")
    if not json_depth_ok(text):
        raise V([], "body nested too deeply")
    try:
        data = json.loads(text, parse_constant=_bad_const)
    except (ValueError, RecursionError):
        raise V([], "body is not valid JSON")
    if not isinstance(data, dict):
        raise V([], "body must be a JSON object")
    return data


# ---------- auth ----------

def current_user():
    h = request.headers.get("Authorization", "")
    parts = h.split(" ", 1)
    if len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].strip():
        raise err(401, "unauthorized", "missing or malformed bearer token")
    uid = TOKENS.get(parts[1].strip())
    if uid is None or uid not in USERS or not USERS[uid]["active"]:
        raise err(401, "unauthorized", "invalid token")
    return USERS[uid]


def require_admin(u):
    if u["role"] != "admin":
        raise err(403, "forbidden", "admin only")


def team_ids(mgr_id):
    return [i for i in USER_ORDER if USERS[i]["manager_id"] == mgr_id]


def visible_ids(u):
    if u["role"] == "admin":
        return set(USER_ORDER)
    if u["role"] == "manager":
        return {u["id"]} | set(team_ids(u["id"]))
    return {u["id"]}


def is_visible(u, uid):
    return isinstance(uid, str) and uid in USERS and uid in visible_ids(u)


# ---------- error handling ----------

@app.errorhandler(ApiError)
def _api_error(e):
    b = {"error": e.code, "message": e.message}
    if e.status == 422 or e.fields is not None:
        b["fields"] = e.fields or []
    return jresp(b, e.status)


@app.errorhandler(RequestEntityTooLarge)
def _too_large(e):
    return jresp({"error": "validation_error", "message": "body too large", "fields": []}, 413)


@app.errorhandler(HTTPException)
def _http(e):
    if e.code == 404:
        return jresp({"error": "not_found", "message": "not found"}, 404)
    if e.code == 405:
        return jresp({"error": "method_not_allowed", "message": "method not allowed"}, 405)
    if e.code == 413:
        return _too_large(e)
    if e.code == 400:
        return jresp({"error": "validation_error", "message": "bad request", "fields": []}, 422)
    return jresp({"error": "internal_error", "message": e.description or "error"}, e.code or 500)


@app.errorhandler(Exception)
def _unexpected(e):
    app.logger.exception("unexpected")
    return jresp({"error": "internal_error", "message": "internal error"}, 500)


def locked(fn):
    def wrapper(*a, **kw):
        with LOCK:
            return fn(*a, **kw)
    wrapper.__name__ = fn.__name__
    return wrapper


# ---------- bootstrap ----------

def make_user(username, password, role, manager_id):
    salt, h = hash_pw(password)
    u = {"id": new_id(), "username": username, "role": role, "active": True,
         "manager_id": manager_id, "created_at": now(), "_salt": salt, "_pw": h}
    USERS[u["id"]] = u
    USER_ORDER.append(u["id"])
    return u


make_user(os.environ.get("ADMIN_USERNAME", "admin"), os.environ.get("ADMIN_PASSWORD", "admin-password"), "admin", None)


# ---------- system / auth ----------

@app.get("/health")
def health():
    return jresp({"status": "ok"})


@app.post("/auth/token")
@locked
def login():
    b = body()
    bad = [f for f in ("username", "password") if not isinstance(b.get(f), str)]
    if bad:
        raise V(bad)
    u = next((USERS[i] for i in USER_ORDER if USERS[i]["username"] == b["username"]), None)
    if u is None:
        hash_pw(b["password"])  # equalise timing
        raise err(401, "unauthorized", "invalid credentials")
    _, h = hash_pw(b["password"], u["_salt"])
    if not hmac.compare_digest(h, u["_pw"]) or not u["active"]:
        raise err(401, "unauthorized", "invalid credentials")
    tok = secrets.token_urlsafe(32)
    TOKENS[tok] = u["id"]
    return jresp({"token": tok, "token_type": "bearer", "user": pub_user(u)})


@app.get("/me")
@locked
def me():
    return jresp(pub_user(current_user()))


# ---------- users ----------

def check_manager_id(v, fields, self_id=None):
    if v is None:
        return
    if not isinstance(v, str) or v not in USERS or USERS[v]["role"] != "manager" or v == self_id:
        fields.append("manager_id")


@app.get("/users")
@locked
def list_users():
    u = current_user()
    if u["role"] == "admin":
        ids = USER_ORDER
    elif u["role"] == "manager":
        ids = team_ids(u["id"])
    else:
        raise err(403, "forbidden", "employees may not list users")
    return jresp({"items": [pub_user(USERS[i]) for i in ids]})


@app.post("/users")
@locked
def create_user():
    u = current_user()
    require_admin(u)
    b = body()
    f = []
    un = b.get("username")
    if not isinstance(un, str) or not USERNAME_RE.match(un):
        f.append("username")
    pw = b.get("password")
    if not isinstance(pw, str) or not (8 <= len(pw) <= 128):
        f.append("password")
    if b.get("role") not in ("admin", "manager", "employee") or not isinstance(b.get("role"), str):
        f.append("role")
    check_manager_id(b.get("manager_id"), f)
    if f:
        raise V(f)
    if any(USERS[i]["username"] == un for i in USER_ORDER):
        raise err(409, "conflict", "username taken")
    nu = make_user(un, pw, b["role"], b.get("manager_id"))
    return jresp(pub_user(nu), 201)


@app.patch("/users/<uid>")
@locked
def patch_user(uid):
    u = current_user()
    require_admin(u)
    t = USERS.get(uid)
    if t is None:
        raise err(404, "not_found", "user not found")
    b = body()
    f = []
    if "role" in b and (not isinstance(b["role"], str) or b["role"] not in ("admin", "manager", "employee")):
        f.append("role")
    if "active" in b and type(b["active"]) is not bool:
        f.append("active")
    if "manager_id" in b:
        check_manager_id(b["manager_id"], f, self_id=t["id"])
    if f:
        raise V(f)
    new_role = b.get("role", t["role"])
    if t["id"] == u["id"]:
        if new_role != t["role"]:
            raise err(409, "conflict", "an admin cannot change their own role")
        if b.get("active") is False:
            raise err(409, "conflict", "an admin cannot deactivate themselves")
    if t["role"] == "manager" and new_role != "manager" and team_ids(t["id"]):
        raise err(409, "conflict", "manager still has team members")
    t["role"] = new_role
    if "manager_id" in b:
        t["manager_id"] = b["manager_id"]
    if "active" in b:
        if t["active"] and not b["active"]:
            for tok in [k for k, v in TOKENS.items() if v == t["id"]]:
                del TOKENS[tok]
        t["active"] = b["active"]
    return jresp(pub_user(t))


# ---------- customers / projects / activities ----------

def name_ok(v):
    return isinstance(v, str) and v.strip() != "" and len(v) <= 120


@app.get("/customers")
@locked
def list_customers():
    current_user()
    items = sorted((CUSTOMERS[i] for i in CUST_ORDER), key=lambda c: c["name"])
    return jresp({"items": [pub(c) for c in items]})


@app.post("/customers")
@locked
def create_customer():
    require_admin(current_user())
    b = body()
    if not name_ok(b.get("name")):
        raise V(["name"])
    low = b["name"].lower()
    if any(CUSTOMERS[i]["name"].lower() == low for i in CUST_ORDER):
        raise err(409, "conflict", "customer name taken")
    c = {"id": new_id(), "name": b["name"], "active": True, "created_at": now()}
    CUSTOMERS[c["id"]] = c
    CUST_ORDER.append(c["id"])
    return jresp(pub(c), 201)


@app.get("/customers/<cid>")
@locked
def get_customer(cid):
    current_user()
    c = CUSTOMERS.get(cid)
    if c is None:
        raise err(404, "not_found", "customer not found")
    return jresp(pub(c))


@app.patch("/customers/<cid>")
@locked
def patch_customer(cid):
    require_admin(current_user())
    c = CUSTOMERS.get(cid)
    if c is None:
        raise err(404, "not_found", "customer not found")
    b = body()
    f = []
    if "name" in b and not name_ok(b["name"]):
        f.append("name")
    if "active" in b and type(b["active"]) is not bool:
        f.append("active")
    if f:
        raise V(f)
    if "name" in b:
        low = b["name"].lower()
        if any(CUSTOMERS[i]["name"].lower() == low for i in CUST_ORDER if i != cid):
            raise err(409, "conflict", "customer name taken")
        c["name"] = b["name"]
    if "active" in b:
        c["active"] = b["active"]
    return jresp(pub(c))


def used_minutes(pid):
    return sum(e["duration_minutes"] for e in ENTRIES.values() if e["project_id"] == pid)


def pub_project(p):
    d = pub(p)
    d["used_minutes"] = used_minutes(p["id"])
    return d


def budget_bad(v):
    return v is not None and (not is_int(v) or not (1 <= v <= 10_000_000))


@app.get("/projects")
@locked
def list_projects():
    current_user()
    cid = request.args.get("customer_id")
    items = [PROJECTS[i] for i in PROJ_ORDER if cid is None or PROJECTS[i]["customer_id"] == cid]
    return jresp({"items": [pub_project(p) for p in items]})


@app.post("/projects")
@locked
def create_project():
    require_admin(current_user())
    b = body()
    f = []
    if not isinstance(b.get("customer_id"), str) or b["customer_id"] not in CUSTOMERS:
        f.append("customer_id")
    if not name_ok(b.get("name")):
        f.append("name")
    if budget_bad(b.get("budget_minutes")):
        f.append("budget_minutes")
    if f:
        raise V(f)
    p = {"id": new_id(), "customer_id": b["customer_id"], "name": b["name"],
         "budget_minutes": b.get("budget_minutes"), "active": True, "created_at": now()}
    PROJECTS[p["id"]] = p
    PROJ_ORDER.append(p["id"])
    return jresp(pub_project(p), 201)


@app.get("/projects/<pid>")
@locked
def get_project(pid):
    current_user()
    p = PROJECTS.get(pid)
    if p is None:
        raise err(404, "not_found", "project not found")
    return jresp(pub_project(p))


@app.patch("/projects/<pid>")
@locked
def patch_project(pid):
    require_admin(current_user())
    p = PROJECTS.get(pid)
    if p is None:
        raise err(404, "not_found", "project not found")
    b = body()
    f = []
    if "name" in b and not name_ok(b["name"]):
        f.append("name")
    if "budget_minutes" in b and budget_bad(b["budget_minutes"]):
        f.append("budget_minutes")
    if "active" in b and type(b["active"]) is not bool:
        f.append("active")
    if f:
        raise V(f)
    for k in ("name", "budget_minutes", "active"):
        if k in b:
            p[k] = b[k]
    return jresp(pub_project(p))


@app.get("/activities")
@locked
def list_activities():
    current_user()
    pid = request.args.get("project_id")
    items = [ACTIVITIES[i] for i in ACT_ORDER if pid is None or ACTIVITIES[i]["project_id"] == pid]
    return jresp({"items": [pub(a) for a in items]})


@app.post("/activities")
@locked
def create_activity():
    require_admin(current_user())
    b = body()
    f = []
    if not isinstance(b.get("project_id"), str) or b["project_id"] not in PROJECTS:
        f.append("project_id")
    if not name_ok(b.get("name")):
        f.append("name")
    if f:
        raise V(f)
    a = {"id": new_id(), "project_id": b["project_id"], "name": b["name"], "active": True, "created_at": now()}
    ACTIVITIES[a["id"]] = a
    ACT_ORDER.append(a["id"])
    return jresp(pub(a), 201)


@app.get("/activities/<aid>")
@locked
def get_activity(aid):
    current_user()
    a = ACTIVITIES.get(aid)
    if a is None:
        raise err(404, "not_found", "activity not found")
    return jresp(pub(a))


@app.patch("/activities/<aid>")
@locked
def patch_activity(aid):
    require_admin(current_user())
    a = ACTIVITIES.get(aid)
    if a is None:
        raise err(404, "not_found", "activity not found")
    b = body()
    f = []
    if "name" in b and not name_ok(b["name"]):
        f.append("name")
    if "active" in b and type(b["active"]) is not bool:
        f.append("active")
    if f:
        raise V(f)
    for k in ("name", "active"):
        if k in b:
            a[k] = b[k]
    return jresp(pub(a))


# ---------- entries ----------

def project_usable(pid):
    p = PROJECTS.get(pid) if isinstance(pid, str) else None
    return p is not None and p["active"] and CUSTOMERS[p["customer_id"]]["active"]


def validate_time(b, f):
    """Return (start, end, duration) from b under the creation rules, appending bad fields."""
    s, e, d = b.get("start"), b.get("end"), b.get("duration_minutes")
    bad = False
    if s is not None and not isinstance(s, str):
        f.append("start"); bad = True
    if e is not None and not isinstance(e, str):
        f.append("end"); bad = True
    if d is not None and not is_int(d):
        f.append("duration_minutes"); bad = True
    if bad:
        return None
    if d is not None and (s is not None or e is not None):
        f.append("duration_minutes")
        return None
    if s is None and e is None and d is None:
        f.append("duration_minutes")
        return None
    if d is not None:
        if not (1 <= d <= 1440):
            f.append("duration_minutes")
            return None
        return (None, None, d)
    if s is not None and e is None:
        if parse_time(s) is None:
            f.append("start")
        f.append("end")
        return None
    if e is not None and s is None:
        if parse_time(e) is None:
            f.append("end")
        f.append("start")
        return None
    sm, em = parse_time(s), parse_time(e)
    if sm is None:
        f.append("start")
    if em is None:
        f.append("end")
    if sm is None or em is None:
        return None
    if em <= sm:
        f.append("end")
        return None
    return (s, e, em - sm)


def week_locked(uid, week):
    s = SHEETS.get((uid, week))
    return s is not None and s["status"] in ("submitted", "approved")


def check_state(uid, date, start, end, dur, project_id, exclude=None, old=None):
    # overlap
    others = [x for x in ENTRIES.values() if x["user_id"] == uid and x["date"] == date and x["id"] != exclude]
    if start is not None:
        sm, em = parse_time(start), parse_time(end)
        for o in others:
            if o["start"] is not None:
                os_, oe = parse_time(o["start"]), parse_time(o["end"])
                if sm < oe and os_ < em:
                    raise err(409, "overlap", "entry overlaps another entry")
    if sum(o["duration_minutes"] for o in others) + dur > 1440:
        raise err(409, "daily_limit", "daily limit of 1440 minutes exceeded")
    p = PROJECTS[project_id]
    if p["budget_minutes"] is not None:
        cur = used_minutes(project_id)
        new = cur - (old["duration_minutes"] if old and old["project_id"] == project_id else 0) + dur
        if new > cur and new > p["budget_minutes"]:
            raise err(409, "over_budget", "project budget exceeded")


def entry_visible(u, eid):
    e = ENTRIES.get(eid)
    if e is None or not is_visible(u, e["user_id"]):
        raise err(404, "not_found", "entry not found")
    return e


@app.post("/entries")
@locked
def create_entry():
    u = current_user()
    b = body()
    f = []
    pid, aid = b.get("project_id"), b.get("activity_id")
    if not project_usable(pid):
        f.append("project_id")
    a = ACTIVITIES.get(aid) if isinstance(aid, str) else None
    if a is None or not a["active"] or a["project_id"] != pid:
        f.append("activity_id")
    if parse_date(b.get("date")) is None:
        f.append("date")
    t = validate_time(b, f)
    desc = b.get("description", "")
    if not isinstance(desc, str) or len(desc) > 1000:
        f.append("description")
    if f:
        raise V(f)
    start, end, dur = t
    if week_locked(u["id"], week_of(b["date"])):
        raise err(409, "locked", "week is locked")
    check_state(u["id"], b["date"], start, end, dur, pid)
    ts = now()
    SEQ[0] += 1
    e = {"id": new_id(), "user_id": u["id"], "project_id": pid, "activity_id": aid, "date": b["date"],
         "start": start, "end": end, "duration_minutes": dur, "description": desc,
         "created_at": ts, "updated_at": ts, "_seq": SEQ[0]}
    ENTRIES[e["id"]] = e
    return jresp(pub(e), 201)


def qint(name, lo, hi, default, f):
    v = request.args.get(name)
    if v is None:
        return default
    if not INT_RE.match(v) or len(v) > 9 or not (lo <= int(v) <= hi):
        f.append(name)
        return default
    return int(v)


@app.get("/entries")
@locked
def list_entries():
    u = current_user()
    a = request.args
    uid = a.get("user_id", u["id"])
    if not is_visible(u, uid):
        raise err(403, "forbidden", "user not visible")
    f = []
    limit = qint("limit", 1, 100, 20, f)
    offset = qint("offset", 0, 10 ** 9, 0, f)
    frm = to = None
    if "from" in a:
        frm = parse_date(a["from"])
        if frm is None:
            f.append("from")
    if "to" in a:
        to = parse_date(a["to"])
        if to is None:
            f.append("to")
    q = a.get("q")
    if q is not None and len(q) > 100:
        f.append("q")
    if f:
        raise V(f)
    items = [e for e in ENTRIES.values() if e["user_id"] == uid]
    if frm:
        items = [e for e in items if e["date"] >= frm.isoformat()]
    if to:
        items = [e for e in items if e["date"] <= to.isoformat()]
    if "project_id" in a:
        items = [e for e in items if e["project_id"] == a["project_id"]]
    if "activity_id" in a:
        items = [e for e in items if e["activity_id"] == a["activity_id"]]
    if q:
        ql = q.lower()
        items = [e for e in items if ql in e["description"].lower()]
    items.sort(key=lambda e: (e["date"], e["_seq"]))
    return jresp({"items": [pub(e) for e in items[offset:offset + limit]], "total": len(items),
                  "limit": limit, "offset": offset})


@app.get("/entries/<eid>")
@locked
def get_entry(eid):
    u = current_user()
    return jresp(pub(entry_visible(u, eid)))


@app.patch("/entries/<eid>")
@locked
def patch_entry(eid):
    u = current_user()
    e = entry_visible(u, eid)
    if e["user_id"] != u["id"]:
        raise err(403, "forbidden", "only the owner may change an entry")
    b = body()
    f = []
    pid = b["project_id"] if "project_id" in b else e["project_id"]
    aid = b["activity_id"] if "activity_id" in b else e["activity_id"]
    if "project_id" in b and not project_usable(b["project_id"]):
        f.append("project_id")
    if "activity_id" in b:
        a = ACTIVITIES.get(aid) if isinstance(aid, str) else None
        if a is None or not a["active"] or a["project_id"] != pid:
            f.append("activity_id")
    elif ACTIVITIES[aid]["project_id"] != pid:
        f.append("activity_id")
    date = e["date"]
    if "date" in b:
        if parse_date(b["date"]) is None:
            f.append("date")
        else:
            date = b["date"]
    if any(k in b for k in ("start", "end", "duration_minutes")):
        t = validate_time(b, f)
    else:
        t = (e["start"], e["end"], e["duration_minutes"])
    desc = e["description"]
    if "description" in b:
        desc = b["description"]
        if not isinstance(desc, str) or len(desc) > 1000:
            f.append("description")
    if f:
        raise V(f)
    start, end, dur = t
    if week_locked(u["id"], week_of(e["date"])) or week_locked(u["id"], week_of(date)):
        raise err(409, "locked", "week is locked")
    check_state(u["id"], date, start, end, dur, pid, exclude=e["id"], old=e)
    e.update({"project_id": pid, "activity_id": aid, "date": date, "start": start, "end": end,
              "duration_minutes": dur, "description": desc, "updated_at": now()})
    return jresp(pub(e))


@app.delete("/entries/<eid>")
@locked
def delete_entry(eid):
    u = current_user()
    e = entry_visible(u, eid)
    if e["user_id"] != u["id"]:
        raise err(403, "forbidden", "only the owner may delete an entry")
    if week_locked(u["id"], week_of(e["date"])):
        raise err(409, "locked", "week is locked")
    del ENTRIES[eid]
    return jresp(None, 204)


# ---------- timesheets ----------

def sheet_view(uid, week):
    monday = parse_week(week)
    sunday = monday + dt.timedelta(days=6)
    s = SHEETS.get((uid, week)) or {}
    es = [e for e in ENTRIES.values() if e["user_id"] == uid
          and monday.isoformat() <= e["date"] <= sunday.isoformat()]
    return {"user_id": uid, "week": week, "status": s.get("status", "open"),
            "first_date": monday.isoformat(), "last_date": sunday.isoformat(),
            "total_minutes": sum(e["duration_minutes"] for e in es), "entry_count": len(es),
            "submitted_at": s.get("submitted_at"), "decided_at": s.get("decided_at"),
            "decided_by": s.get("decided_by"), "reason": s.get("reason")}


def sheet_target(u, uid, week):
    if not is_visible(u, uid) or parse_week(week) is None:
        raise err(404, "not_found", "timesheet not found")


def sheet_rec(uid, week):
    return SHEETS.setdefault((uid, week), {"status": "open", "submitted_at": None, "decided_at": None,
                                            "decided_by": None, "reason": None})


@app.get("/timesheets/<uid>/<week>")
@locked
def get_sheet(uid, week):
    u = current_user()
    sheet_target(u, uid, week)
    return jresp(sheet_view(uid, week))


@app.post("/timesheets/<uid>/<week>/submit")
@locked
def submit_sheet(uid, week):
    u = current_user()
    sheet_target(u, uid, week)
    if uid != u["id"]:
        raise err(403, "forbidden", "only the user may submit their week")
    v = sheet_view(uid, week)
    if v["status"] not in ("open", "rejected"):
        raise err(409, "invalid_state", "week cannot be submitted in status " + v["status"])
    if v["entry_count"] == 0:
        raise err(409, "empty_week", "week has no entries")
    r = sheet_rec(uid, week)
    r.update({"status": "submitted", "submitted_at": now(), "decided_at": None, "decided_by": None, "reason": None})
    return jresp(sheet_view(uid, week))


@app.post("/timesheets/<uid>/<week>/withdraw")
@locked
def withdraw_sheet(uid, week):
    u = current_user()
    sheet_target(u, uid, week)
    if uid != u["id"]:
        raise err(403, "forbidden", "only the user may withdraw their week")
    v = sheet_view(uid, week)
    if v["status"] != "submitted":
        raise err(409, "invalid_state", "only a submitted week can be withdrawn")
    sheet_rec(uid, week).update({"status": "open"})
    return jresp(sheet_view(uid, week))


def decider_checks(u, uid, week):
    if u["role"] == "employee":
        raise err(403, "forbidden", "employees may not decide timesheets")
    sheet_target(u, uid, week)
    if uid == u["id"]:
        raise err(403, "forbidden", "one cannot decide one's own week")
    if u["role"] == "manager" and USERS[uid]["manager_id"] != u["id"]:
        raise err(403, "forbidden", "not your team")


@app.post("/timesheets/<uid>/<week>/approve")
@locked
def approve_sheet(uid, week):
    u = current_user()
    decider_checks(u, uid, week)
    v = sheet_view(uid, week)
    if v["status"] != "submitted":
        raise err(409, "invalid_state", "only a submitted week can be approved")
    sheet_rec(uid, week).update({"status": "approved", "decided_at": now(), "decided_by": u["id"], "reason": None})
    return jresp(sheet_view(uid, week))


@app.post("/timesheets/<uid>/<week>/reject")
@locked
def reject_sheet(uid, week):
    u = current_user()
    decider_checks(u, uid, week)
    b = body()
    r = b.get("reason")
    if not isinstance(r, str) or r.strip() == "" or len(r) > 500:
        raise V(["reason"])
    v = sheet_view(uid, week)
    if v["status"] != "submitted":
        raise err(409, "invalid_state", "only a submitted week can be rejected")
    sheet_rec(uid, week).update({"status": "rejected", "decided_at": now(), "decided_by": u["id"], "reason": r})
    return jresp(sheet_view(uid, week))


@app.get("/timesheets")
@locked
def list_sheets():
    u = current_user()
    uid = request.args.get("user_id")
    if uid is not None and not is_visible(u, uid):
        raise err(403, "forbidden", "user not visible")
    st = request.args.get("status")
    if st is not None and st not in ("submitted", "approved", "rejected"):
        raise V(["status"])
    vis = visible_ids(u)
    out = []
    for (su, wk), rec in SHEETS.items():
        if rec["status"] == "open" or su not in vis:
            continue
        if uid is not None and su != uid:
            continue
        if st is not None and rec["status"] != st:
            continue
        out.append(sheet_view(su, wk))
    return jresp({"items": out})


# ---------- reports ----------

@app.get("/reports/summary")
@locked
def report():
    u = current_user()
    a = request.args
    uid = a.get("user_id")
    if uid is not None and not is_visible(u, uid):
        raise err(403, "forbidden", "user not visible")
    f = []
    frm = parse_date(a.get("from"))
    if frm is None:
        f.append("from")
    to = parse_date(a.get("to"))
    if to is None:
        f.append("to")
    elif frm is not None and (to < frm or (to - frm).days + 1 > 366):
        f.append("to")
    gb = a.get("group_by")
    if gb not in ("project", "activity", "user"):
        f.append("group_by")
    appr = a.get("approved")
    if appr is not None and appr not in ("true", "false"):
        f.append("approved")
    if f:
        raise V(f)
    users = {uid} if uid is not None else visible_ids(u)
    fs, ts = frm.isoformat(), to.isoformat()
    groups = {}
    for e in ENTRIES.values():
        if e["user_id"] not in users or not (fs <= e["date"] <= ts):
            continue
        if "project_id" in a and e["project_id"] != a["project_id"]:
            continue
        if appr is not None:
            s = SHEETS.get((e["user_id"], week_of(e["date"])))
            is_appr = s is not None and s["status"] == "approved"
            if is_appr != (appr == "true"):
                continue
        if gb == "project":
            key, name = e["project_id"], PROJECTS[e["project_id"]]["name"]
        elif gb == "activity":
            key, name = e["activity_id"], ACTIVITIES[e["activity_id"]]["name"]
        else:
            key, name = e["user_id"], USERS[e["user_id"]]["username"]
        g = groups.setdefault(key, {"key": key, "name": name, "entry_count": 0, "minutes": 0, "rounded_minutes": 0})
        g["entry_count"] += 1
        g["minutes"] += e["duration_minutes"]
        g["rounded_minutes"] += -(-e["duration_minutes"] // 15) * 15
    gl = sorted(groups.values(), key=lambda g: (-g["minutes"], g["key"]))
    total = {k: sum(g[k] for g in gl) for k in ("entry_count", "minutes", "rounded_minutes")}
    return jresp({"from": fs, "to": ts, "group_by": gb, "groups": gl, "total": total})


if __name__ == "__main__":
    from werkzeug.serving import run_simple
    run_simple("0.0.0.0", int(os.environ.get("PORT", "8000")), app, threaded=True)
