'use strict';
// Timesheets alternate: Node 18, node:http, CommonJS, in-memory state, no npm packages.

const http = require('node:http');
const crypto = require('node:crypto');

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1048576;
const MAX_DEPTH = 32;

// ------------------------------------------------------------------ errors
class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const unauthorized = () => new ApiError(401, 'unauthorized', 'missing or invalid credentials');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'you may not do this');
const notFound = (what) => new ApiError(404, 'not_found', (what || 'resource') + ' not found');
const invalid = (fields, m) => new ApiError(422, 'validation_error', m || 'invalid input', [...new Set(fields)]);
const conflict = (code, m) => new ApiError(409, code, m);

// ------------------------------------------------------------------ state
const users = new Map(); // id -> user (insertion order = creation order)
const tokens = new Map(); // token -> user id
const customers = new Map();
const projects = new Map();
const activities = new Map();
const entries = new Map();
const sheets = new Map(); // `${userId}|${week}` -> {status, submitted_at, decided_at, decided_by, reason}
let seq = 0;

const newId = () => crypto.randomUUID();
const nowIso = () => new Date().toISOString();

// ------------------------------------------------------------------ passwords
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
function hashPassword(pw) {
  return new Promise((resolve, reject) => {
    const salt = crypto.randomBytes(16);
    crypto.scrypt(pw, salt, 32, SCRYPT, (err, key) => {
      if (err) return reject(err);
      resolve(`scrypt$16384$8$1$${salt.toString('base64')}$${key.toString('base64')}`);
    });
  });
}
function verifyPassword(pw, stored) {
  return new Promise((resolve) => {
    const parts = stored.split('$');
    const salt = Buffer.from(parts[4], 'base64');
    const want = Buffer.from(parts[5], 'base64');
    crypto.scrypt(pw, salt, want.length, SCRYPT, (err, key) => {
      if (err) return resolve(false);
      resolve(crypto.timingSafeEqual(key, want));
    });
  });
}

// ------------------------------------------------------------------ helpers
const isStr = (v) => typeof v === 'string';
const isBool = (v) => typeof v === 'boolean';
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);
const nonBlank = (v) => isStr(v) && /\S/u.test(v);
const charLen = (s) => [...s].length;
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function validDate(s) {
  if (!isStr(s) || !/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const y = +s.slice(0, 4), m = +s.slice(5, 7), d = +s.slice(8, 10);
  if (y < 2000 || y > 2099 || m < 1 || m > 12 || d < 1) return false;
  const dim = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= dim;
}
function parseTime(s) {
  if (!isStr(s)) return null;
  const m = /^(\d{2}):(\d{2})$/.exec(s);
  if (!m) return null;
  const h = +m[1], mi = +m[2];
  if (h > 23 || mi > 59) return null;
  return h * 60 + mi;
}
function dateToUtc(s) {
  return Date.UTC(+s.slice(0, 4), +s.slice(5, 7) - 1, +s.slice(8, 10));
}
function fmtDate(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}
// ISO week of a YYYY-MM-DD date -> 'YYYY-Www'
function weekOf(dateStr) {
  const t = dateToUtc(dateStr);
  const d = new Date(t);
  const dow = (d.getUTCDay() + 6) % 7; // Monday 0
  const thursday = t + (3 - dow) * 86400000;
  const ty = new Date(thursday).getUTCFullYear();
  const jan1 = Date.UTC(ty, 0, 1);
  const wk = Math.floor((thursday - jan1) / 86400000 / 7) + 1;
  return `${ty}-W${String(wk).padStart(2, '0')}`;
}
// Monday (ms) of ISO week 1 of year y
function week1Monday(y) {
  const jan4 = Date.UTC(y, 0, 4);
  const dow = (new Date(jan4).getUTCDay() + 6) % 7;
  return jan4 - dow * 86400000;
}
const MIN_DATE = Date.UTC(2000, 0, 1);
const MAX_DATE = Date.UTC(2099, 11, 31);
// 'YYYY-Www' -> {first, last} or null
function parseWeek(s) {
  if (!isStr(s)) return null;
  const m = /^(\d{4})-W(\d{2})$/.exec(s);
  if (!m) return null;
  const y = +m[1], w = +m[2];
  if (w < 1) return null;
  const weeks = (week1Monday(y + 1) - week1Monday(y)) / (7 * 86400000);
  if (w > weeks) return null;
  const first = week1Monday(y) + (w - 1) * 7 * 86400000;
  const last = first + 6 * 86400000;
  if (last < MIN_DATE || first > MAX_DATE) return null;
  return { first: fmtDate(first), last: fmtDate(last) };
}
// ordinal comparison by code point
function cmpCodePoints(a, b) {
  const A = [...a], B = [...b];
  const n = Math.min(A.length, B.length);
  for (let i = 0; i < n; i++) {
    const x = A[i].codePointAt(0), y = B[i].codePointAt(0);
    if (x !== y) return x < y ? -1 : 1;
  }
  return A.length - B.length;
}
const cmpStr = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

function jsonDepthOk(text) {
  let depth = 0, inStr = false, esc = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (esc) esc = false;
      else if (c === 92) esc = true;
      else if (c === 34) inStr = false;
    } else if (c === 34) inStr = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_DEPTH) return false;
    } else if (c === 125 || c === 93) depth--;
  }
  return true;
}

// ------------------------------------------------------------------ serialisers
const userJson = (u) => ({ id: u.id, username: u.username, role: u.role, active: u.active, manager_id: u.manager_id, created_at: u.created_at });
const customerJson = (c) => ({ id: c.id, name: c.name, active: c.active, created_at: c.created_at });
function usedMinutes(projectId) {
  let s = 0;
  for (const e of entries.values()) if (e.project_id === projectId) s += e.duration_minutes;
  return s;
}
const projectJson = (p) => ({ id: p.id, customer_id: p.customer_id, name: p.name, budget_minutes: p.budget_minutes, used_minutes: usedMinutes(p.id), active: p.active, created_at: p.created_at });
const activityJson = (a) => ({ id: a.id, project_id: a.project_id, name: a.name, active: a.active, created_at: a.created_at });
const entryJson = (e) => ({ id: e.id, user_id: e.user_id, project_id: e.project_id, activity_id: e.activity_id, date: e.date, start: e.start, end: e.end, duration_minutes: e.duration_minutes, description: e.description, created_at: e.created_at, updated_at: e.updated_at });

function sheetState(userId, week) {
  return sheets.get(`${userId}|${week}`) || { status: 'open', submitted_at: null, decided_at: null, decided_by: null, reason: null };
}
function sheetJson(userId, week) {
  const wk = parseWeek(week);
  const st = sheetState(userId, week);
  let total = 0, count = 0;
  for (const e of entries.values()) {
    if (e.user_id === userId && e.date >= wk.first && e.date <= wk.last) { total += e.duration_minutes; count++; }
  }
  return { user_id: userId, week, status: st.status, first_date: wk.first, last_date: wk.last, total_minutes: total, entry_count: count, submitted_at: st.submitted_at, decided_at: st.decided_at, decided_by: st.decided_by, reason: st.reason };
}
const isLocked = (userId, date) => { const s = sheetState(userId, weekOf(date)).status; return s === 'submitted' || s === 'approved'; };

// ------------------------------------------------------------------ visibility
function visible(caller, u) {
  if (!u) return false;
  if (caller.role === 'admin') return true;
  if (u.id === caller.id) return true;
  return caller.role === 'manager' && u.manager_id === caller.id;
}
function visibleUsers(caller) {
  return [...users.values()].filter((u) => visible(caller, u));
}

// ------------------------------------------------------------------ request context
class Ctx {
  constructor(req, params, query, raw, oversize) {
    this.req = req;
    this.params = params;
    this.query = query;
    this.raw = raw;
    this.oversize = oversize;
    this.user = null;
  }
  body() {
    if (this.oversize) throw new ApiError(413, 'payload_too_large', 'request body larger than 1 MiB');
    let text;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(this.raw);
    } catch (e) {
      throw invalid([], 'body is not valid UTF-8');
    }
    if (!jsonDepthOk(text)) throw invalid([], 'body nested too deeply');
    let v;
    try { v = JSON.parse(text); } catch (e) { throw invalid([], 'body is not valid JSON'); }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalid([], 'body must be a JSON object');
    return v;
  }
  // one query value: undefined when absent, false when repeated
  q(name) {
    const vals = this.query.getAll(name);
    if (vals.length === 0) return undefined;
    if (vals.length > 1) return false;
    return vals[0];
  }
}

function authenticate(ctx) {
  const h = ctx.req.headers['authorization'];
  if (!h) throw unauthorized();
  const m = /^bearer[ ]+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized();
  const uid = tokens.get(m[1]);
  const u = uid && users.get(uid);
  if (!u || !u.active) throw unauthorized();
  ctx.user = u;
  return u;
}
function requireRole(u, ...roles) {
  if (!roles.includes(u.role)) throw forbidden('your role may not do this');
}

// ------------------------------------------------------------------ handlers: auth, users
async function hLogin(ctx) {
  const b = ctx.body();
  const errs = ['username', 'password'].filter((f) => !isStr(b[f]));
  if (errs.length) throw invalid(errs);
  const u = [...users.values()].find((x) => x.username === b.username);
  if (!u) throw unauthorized();
  const ok = await verifyPassword(b.password, u.password_hash);
  if (!ok || !u.active || !users.has(u.id)) throw unauthorized();
  const token = crypto.randomBytes(32).toString('base64url');
  tokens.set(token, u.id);
  return [200, { token, token_type: 'bearer', user: userJson(u) }];
}

function hMe(ctx) {
  return [200, userJson(authenticate(ctx))];
}

function hUsersList(ctx) {
  const u = authenticate(ctx);
  requireRole(u, 'admin', 'manager');
  const list = u.role === 'admin' ? [...users.values()] : [...users.values()].filter((x) => x.manager_id === u.id);
  return [200, { items: list.map(userJson) }];
}

function checkManagerId(v, selfId) {
  if (v === null) return true;
  if (!isStr(v)) return false;
  if (selfId !== undefined && v === selfId) return false;
  const m = users.get(v);
  return !!m && m.role === 'manager';
}

function validateUserCreate(b) {
  const errs = [];
  if (!isStr(b.username) || !/^[a-z0-9_]{3,32}$/.test(b.username)) errs.push('username');
  if (!isStr(b.password) || charLen(b.password) < 8 || charLen(b.password) > 128) errs.push('password');
  if (!['admin', 'manager', 'employee'].includes(b.role)) errs.push('role');
  const mid = has(b, 'manager_id') ? b.manager_id : null;
  if (!checkManagerId(mid)) errs.push('manager_id');
  if (errs.length) throw invalid(errs);
  if ([...users.values()].some((x) => x.username === b.username)) throw conflict('conflict', 'username already taken');
  return mid;
}

async function hUsersCreate(ctx) {
  const u = authenticate(ctx);
  requireRole(u, 'admin');
  const b = ctx.body();
  validateUserCreate(b);
  const hash = await hashPassword(b.password);
  // state may have changed while hashing: check again, then apply synchronously
  const caller = authenticate(ctx);
  requireRole(caller, 'admin');
  const mid = validateUserCreate(b);
  const nu = { id: newId(), username: b.username, role: b.role, active: true, manager_id: mid, created_at: nowIso(), password_hash: hash };
  users.set(nu.id, nu);
  return [201, userJson(nu)];
}

function hUserPatch(ctx) {
  const u = authenticate(ctx);
  requireRole(u, 'admin');
  const t = users.get(ctx.params.id);
  if (!t) throw notFound('user');
  const b = ctx.body();
  const errs = [];
  if (has(b, 'role') && !['admin', 'manager', 'employee'].includes(b.role)) errs.push('role');
  if (has(b, 'active') && !isBool(b.active)) errs.push('active');
  if (has(b, 'manager_id') && !checkManagerId(b.manager_id, t.id)) errs.push('manager_id');
  if (errs.length) throw invalid(errs);
  const roleChange = has(b, 'role') && b.role !== t.role;
  if (t.id === u.id && roleChange) throw conflict('conflict', 'an admin may not change their own role');
  if (t.id === u.id && b.active === false) throw conflict('conflict', 'an admin may not deactivate themselves');
  if (roleChange && t.role === 'manager' && [...users.values()].some((x) => x.manager_id === t.id)) {
    throw conflict('conflict', 'the manager still has team members');
  }
  if (has(b, 'role')) t.role = b.role;
  if (has(b, 'manager_id')) t.manager_id = b.manager_id;
  if (has(b, 'active')) {
    if (b.active === false && t.active) {
      for (const [tok, uid] of tokens) if (uid === t.id) tokens.delete(tok);
    }
    t.active = b.active;
  }
  return [200, userJson(t)];
}

// ------------------------------------------------------------------ catalogue
const validName = (v) => nonBlank(v) && charLen(v) <= 120;
const nameTaken = (name, exceptId) => {
  const l = name.toLowerCase();
  for (const c of customers.values()) if (c.id !== exceptId && c.name.toLowerCase() === l) return true;
  return false;
};

function hCustomersList(ctx) {
  authenticate(ctx);
  const list = [...customers.values()].sort((a, b) => cmpCodePoints(a.name, b.name) || cmpStr(a.id, b.id));
  return [200, { items: list.map(customerJson) }];
}
function hCustomersCreate(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const b = ctx.body();
  if (!validName(b.name)) throw invalid(['name']);
  if (nameTaken(b.name)) throw conflict('conflict', 'customer name already taken');
  const c = { id: newId(), name: b.name, active: true, created_at: nowIso() };
  customers.set(c.id, c);
  return [201, customerJson(c)];
}
function hCustomerGet(ctx) {
  authenticate(ctx);
  const c = customers.get(ctx.params.id);
  if (!c) throw notFound('customer');
  return [200, customerJson(c)];
}
function hCustomerPatch(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const c = customers.get(ctx.params.id);
  if (!c) throw notFound('customer');
  const b = ctx.body();
  const errs = [];
  if (has(b, 'name') && !validName(b.name)) errs.push('name');
  if (has(b, 'active') && !isBool(b.active)) errs.push('active');
  if (errs.length) throw invalid(errs);
  if (has(b, 'name') && nameTaken(b.name, c.id)) throw conflict('conflict', 'customer name already taken');
  if (has(b, 'name')) c.name = b.name;
  if (has(b, 'active')) c.active = b.active;
  return [200, customerJson(c)];
}

const validBudget = (v) => v === null || (isInt(v) && v >= 1 && v <= 10000000);

function hProjectsList(ctx) {
  authenticate(ctx);
  const cid = ctx.q('customer_id');
  if (cid === false) throw invalid(['customer_id']);
  let list = [...projects.values()];
  if (cid !== undefined) list = list.filter((p) => p.customer_id === cid);
  return [200, { items: list.map(projectJson) }];
}
function hProjectsCreate(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const b = ctx.body();
  const errs = [];
  if (!isStr(b.customer_id) || !customers.has(b.customer_id)) errs.push('customer_id');
  if (!validName(b.name)) errs.push('name');
  const budget = has(b, 'budget_minutes') ? b.budget_minutes : null;
  if (!validBudget(budget)) errs.push('budget_minutes');
  if (errs.length) throw invalid(errs);
  const p = { id: newId(), customer_id: b.customer_id, name: b.name, budget_minutes: budget, active: true, created_at: nowIso() };
  projects.set(p.id, p);
  return [201, projectJson(p)];
}
function hProjectGet(ctx) {
  authenticate(ctx);
  const p = projects.get(ctx.params.id);
  if (!p) throw notFound('project');
  return [200, projectJson(p)];
}
function hProjectPatch(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const p = projects.get(ctx.params.id);
  if (!p) throw notFound('project');
  const b = ctx.body();
  const errs = [];
  if (has(b, 'name') && !validName(b.name)) errs.push('name');
  if (has(b, 'budget_minutes') && !validBudget(b.budget_minutes)) errs.push('budget_minutes');
  if (has(b, 'active') && !isBool(b.active)) errs.push('active');
  if (errs.length) throw invalid(errs);
  if (has(b, 'name')) p.name = b.name;
  if (has(b, 'budget_minutes')) p.budget_minutes = b.budget_minutes;
  if (has(b, 'active')) p.active = b.active;
  return [200, projectJson(p)];
}

function hActivitiesList(ctx) {
  authenticate(ctx);
  const pid = ctx.q('project_id');
  if (pid === false) throw invalid(['project_id']);
  let list = [...activities.values()];
  if (pid !== undefined) list = list.filter((a) => a.project_id === pid);
  return [200, { items: list.map(activityJson) }];
}
function hActivitiesCreate(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const b = ctx.body();
  const errs = [];
  if (!isStr(b.project_id) || !projects.has(b.project_id)) errs.push('project_id');
  if (!validName(b.name)) errs.push('name');
  if (errs.length) throw invalid(errs);
  const a = { id: newId(), project_id: b.project_id, name: b.name, active: true, created_at: nowIso() };
  activities.set(a.id, a);
  return [201, activityJson(a)];
}
function hActivityGet(ctx) {
  authenticate(ctx);
  const a = activities.get(ctx.params.id);
  if (!a) throw notFound('activity');
  return [200, activityJson(a)];
}
function hActivityPatch(ctx) {
  requireRole(authenticate(ctx), 'admin');
  const a = activities.get(ctx.params.id);
  if (!a) throw notFound('activity');
  const b = ctx.body();
  const errs = [];
  if (has(b, 'name') && !validName(b.name)) errs.push('name');
  if (has(b, 'active') && !isBool(b.active)) errs.push('active');
  if (errs.length) throw invalid(errs);
  if (has(b, 'name')) a.name = b.name;
  if (has(b, 'active')) a.active = b.active;
  return [200, activityJson(a)];
}

// ------------------------------------------------------------------ entries
function usableProject(id) {
  if (!isStr(id)) return false;
  const p = projects.get(id);
  if (!p || !p.active) return false;
  const c = customers.get(p.customer_id);
  return !!c && c.active;
}
function activityOf(aid, pid) {
  if (!isStr(aid)) return false;
  const a = activities.get(aid);
  return !!a && a.active && a.project_id === pid;
}
// time fields -> {start, end, duration} ; pushes invalid field names
function validateTime(b, errs) {
  const s = has(b, 'start') ? b.start : null;
  const e = has(b, 'end') ? b.end : null;
  const d = has(b, 'duration_minutes') ? b.duration_minutes : null;
  let sm = null, em = null;
  if (s !== null) { sm = parseTime(s); if (sm === null) errs.push('start'); }
  if (e !== null) { em = parseTime(e); if (em === null) errs.push('end'); }
  if (d !== null && !(isInt(d) && d >= 1 && d <= 1440)) errs.push('duration_minutes');
  if (d !== null && (s !== null || e !== null)) errs.push('duration_minutes');
  if (s === null && e === null && d === null) errs.push('duration_minutes');
  if (s !== null && e === null) errs.push('end');
  if (e !== null && s === null) errs.push('start');
  if (sm !== null && em !== null && em <= sm) errs.push('end');
  if (d !== null) return { start: null, end: null, duration: d };
  if (sm !== null && em !== null) return { start: s, end: e, duration: em - sm };
  return null;
}
function checkEntryState(userId, cand, exceptId, oldEntry) {
  // locked
  if (oldEntry && isLocked(oldEntry.user_id, oldEntry.date)) throw conflict('locked', 'the entry\'s week is locked');
  if (isLocked(userId, cand.date)) throw conflict('locked', 'the week is locked');
  const others = [...entries.values()].filter((x) => x.user_id === userId && x.date === cand.date && x.id !== exceptId);
  if (cand.start !== null) {
    const a0 = parseTime(cand.start), a1 = parseTime(cand.end);
    for (const o of others) {
      if (o.start === null) continue;
      const b0 = parseTime(o.start), b1 = parseTime(o.end);
      if (a0 < b1 && b0 < a1) throw conflict('overlap', 'the entry overlaps another entry');
    }
  }
  const daySum = others.reduce((s, x) => s + x.duration_minutes, 0) + cand.duration_minutes;
  if (daySum > 1440) throw conflict('daily_limit', 'more than 1440 minutes on one date');
  const p = projects.get(cand.project_id);
  if (p && p.budget_minutes !== null) {
    const before = usedMinutes(p.id);
    let after = before + cand.duration_minutes;
    if (oldEntry && oldEntry.project_id === p.id) after -= oldEntry.duration_minutes;
    if (after > before && after > p.budget_minutes) throw conflict('over_budget', 'the project budget would be exceeded');
  }
}

function hEntriesCreate(ctx) {
  const u = authenticate(ctx);
  const b = ctx.body();
  const errs = [];
  if (!usableProject(b.project_id)) errs.push('project_id');
  if (!activityOf(b.activity_id, b.project_id)) errs.push('activity_id');
  if (!validDate(b.date)) errs.push('date');
  const time = validateTime(b, errs);
  const desc = has(b, 'description') ? b.description : '';
  if (!isStr(desc) || charLen(desc) > 1000) errs.push('description');
  if (errs.length) throw invalid(errs);
  const cand = { project_id: b.project_id, date: b.date, start: time.start, end: time.end, duration_minutes: time.duration };
  checkEntryState(u.id, cand, null, null);
  const now = nowIso();
  const e = { id: newId(), seq: ++seq, user_id: u.id, project_id: b.project_id, activity_id: b.activity_id, date: b.date, start: time.start, end: time.end, duration_minutes: time.duration, description: desc, created_at: now, updated_at: now };
  entries.set(e.id, e);
  return [201, entryJson(e)];
}

function visibleEntry(ctx, u) {
  const e = entries.get(ctx.params.id);
  if (!e || !visible(u, users.get(e.user_id))) throw notFound('entry');
  return e;
}
function hEntryGet(ctx) {
  const u = authenticate(ctx);
  return [200, entryJson(visibleEntry(ctx, u))];
}
function hEntryPatch(ctx) {
  const u = authenticate(ctx);
  const e = visibleEntry(ctx, u);
  if (e.user_id !== u.id) throw forbidden('only the owner may change an entry');
  const b = ctx.body();
  const errs = [];
  const pid = has(b, 'project_id') ? b.project_id : e.project_id;
  if (has(b, 'project_id') && !usableProject(b.project_id)) errs.push('project_id');
  const aid = has(b, 'activity_id') ? b.activity_id : e.activity_id;
  if (has(b, 'activity_id')) {
    if (!activityOf(b.activity_id, pid)) errs.push('activity_id');
  } else {
    const a = activities.get(aid);
    if (!a || a.project_id !== pid) errs.push('activity_id');
  }
  const date = has(b, 'date') ? b.date : e.date;
  if (has(b, 'date') && !validDate(b.date)) errs.push('date');
  let time = { start: e.start, end: e.end, duration: e.duration_minutes };
  if (has(b, 'start') || has(b, 'end') || has(b, 'duration_minutes')) time = validateTime(b, errs);
  const desc = has(b, 'description') ? b.description : e.description;
  if (!isStr(desc) || charLen(desc) > 1000) errs.push('description');
  if (errs.length) throw invalid(errs);
  const cand = { project_id: pid, date, start: time.start, end: time.end, duration_minutes: time.duration };
  checkEntryState(u.id, cand, e.id, e);
  Object.assign(e, { project_id: pid, activity_id: aid, date, start: time.start, end: time.end, duration_minutes: time.duration, description: desc, updated_at: nowIso() });
  return [200, entryJson(e)];
}
function hEntryDelete(ctx) {
  const u = authenticate(ctx);
  const e = visibleEntry(ctx, u);
  if (e.user_id !== u.id) throw forbidden('only the owner may delete an entry');
  if (isLocked(e.user_id, e.date)) throw conflict('locked', 'the entry\'s week is locked');
  entries.delete(e.id);
  return [204, null];
}

function parsePaging(ctx, errs, defLimit) {
  let limit = defLimit, offset = 0;
  const l = ctx.q('limit');
  if (l !== undefined) {
    if (l === false || !/^\d{1,3}$/.test(l) || +l < 1 || +l > 100) errs.push('limit'); else limit = +l;
  }
  const o = ctx.q('offset');
  if (o !== undefined) {
    if (o === false || !/^\d{1,15}$/.test(o)) errs.push('offset'); else offset = +o;
  }
  return { limit, offset };
}
// user_id query filter: undefined (absent) or a visible user; 403 otherwise
function userFilter(ctx, u) {
  const v = ctx.q('user_id');
  if (v === undefined) return undefined;
  if (v === false) throw forbidden('user not visible');
  const t = users.get(v);
  if (!t || !visible(u, t)) throw forbidden('user not visible');
  return t;
}

function hEntriesList(ctx) {
  const u = authenticate(ctx);
  const target = userFilter(ctx, u) || u;
  const errs = [];
  const from = ctx.q('from'), to = ctx.q('to');
  if (from !== undefined && !validDate(from)) errs.push('from');
  if (to !== undefined && !validDate(to)) errs.push('to');
  const pid = ctx.q('project_id'), aid = ctx.q('activity_id'), q = ctx.q('q');
  if (pid === false) errs.push('project_id');
  if (aid === false) errs.push('activity_id');
  if (q === false || (q !== undefined && charLen(q) > 100)) errs.push('q');
  const { limit, offset } = parsePaging(ctx, errs, 20);
  if (errs.length) throw invalid(errs);
  const ql = q !== undefined ? q.toLowerCase() : undefined;
  const list = [...entries.values()].filter((e) => e.user_id === target.id
    && (from === undefined || e.date >= from) && (to === undefined || e.date <= to)
    && (pid === undefined || e.project_id === pid) && (aid === undefined || e.activity_id === aid)
    && (ql === undefined || e.description.toLowerCase().includes(ql)))
    .sort((a, b) => cmpStr(a.date, b.date) || a.seq - b.seq);
  return [200, { items: list.slice(offset, offset + limit).map(entryJson), total: list.length, limit, offset }];
}

// ------------------------------------------------------------------ timesheets
function sheetTarget(ctx, u) {
  const t = users.get(ctx.params.uid);
  if (!t || !visible(u, t)) throw notFound('timesheet');
  if (!parseWeek(ctx.params.week)) throw notFound('timesheet');
  return t;
}
function putSheet(userId, week, st) {
  sheets.set(`${userId}|${week}`, st);
}
function hSheetGet(ctx) {
  const u = authenticate(ctx);
  const t = sheetTarget(ctx, u);
  return [200, sheetJson(t.id, ctx.params.week)];
}
function hSheetSubmit(ctx) {
  const u = authenticate(ctx);
  const t = sheetTarget(ctx, u);
  if (t.id !== u.id) throw forbidden('only the user may submit their week');
  const week = ctx.params.week;
  const st = sheetState(t.id, week);
  if (st.status !== 'open' && st.status !== 'rejected') throw conflict('invalid_state', `cannot submit a ${st.status} week`);
  if (sheetJson(t.id, week).entry_count === 0) throw conflict('empty_week', 'the week has no entries');
  putSheet(t.id, week, { status: 'submitted', submitted_at: nowIso(), decided_at: null, decided_by: null, reason: null });
  return [200, sheetJson(t.id, week)];
}
function hSheetWithdraw(ctx) {
  const u = authenticate(ctx);
  const t = sheetTarget(ctx, u);
  if (t.id !== u.id) throw forbidden('only the user may withdraw their week');
  const week = ctx.params.week;
  const st = sheetState(t.id, week);
  if (st.status !== 'submitted') throw conflict('invalid_state', `cannot withdraw a ${st.status} week`);
  putSheet(t.id, week, { status: 'open', submitted_at: null, decided_at: null, decided_by: null, reason: null });
  return [200, sheetJson(t.id, week)];
}
function decide(ctx, approve) {
  const u = authenticate(ctx);
  requireRole(u, 'admin', 'manager');
  const t = sheetTarget(ctx, u);
  if (t.id === u.id) throw forbidden('one may not decide one\'s own week');
  let reason = null;
  if (!approve) {
    const b = ctx.body();
    if (!nonBlank(b.reason) || charLen(b.reason) > 500) throw invalid(['reason']);
    reason = b.reason;
  }
  const week = ctx.params.week;
  const st = sheetState(t.id, week);
  if (st.status !== 'submitted') throw conflict('invalid_state', `cannot decide a ${st.status} week`);
  putSheet(t.id, week, { status: approve ? 'approved' : 'rejected', submitted_at: st.submitted_at, decided_at: nowIso(), decided_by: u.id, reason });
  return [200, sheetJson(t.id, week)];
}
const hSheetApprove = (ctx) => decide(ctx, true);
const hSheetReject = (ctx) => decide(ctx, false);

function hSheetsList(ctx) {
  const u = authenticate(ctx);
  const target = userFilter(ctx, u);
  const status = ctx.q('status');
  if (status !== undefined && !['submitted', 'approved', 'rejected'].includes(status)) throw invalid(['status']);
  const items = [];
  for (const [key, st] of sheets) {
    if (st.status === 'open') continue;
    const i = key.lastIndexOf('|');
    const uid = key.slice(0, i), week = key.slice(i + 1);
    if (!visible(u, users.get(uid))) continue;
    if (target && uid !== target.id) continue;
    if (status !== undefined && st.status !== status) continue;
    items.push(sheetJson(uid, week));
  }
  return [200, { items }];
}

// ------------------------------------------------------------------ reports
function hReport(ctx) {
  const u = authenticate(ctx);
  const target = userFilter(ctx, u);
  const errs = [];
  const from = ctx.q('from'), to = ctx.q('to');
  const fromOk = from !== undefined && from !== false && validDate(from);
  const toOk = to !== undefined && to !== false && validDate(to);
  if (!fromOk) errs.push('from');
  if (!toOk) errs.push('to');
  if (fromOk && toOk && (from > to || (dateToUtc(to) - dateToUtc(from)) / 86400000 + 1 > 366)) errs.push('to');
  const groupBy = ctx.q('group_by');
  if (!['project', 'activity', 'user'].includes(groupBy)) errs.push('group_by');
  const pid = ctx.q('project_id');
  if (pid === false) errs.push('project_id');
  const approved = ctx.q('approved');
  if (approved !== undefined && approved !== 'true' && approved !== 'false') errs.push('approved');
  if (errs.length) throw invalid(errs);
  const groups = new Map();
  for (const e of entries.values()) {
    if (e.date < from || e.date > to) continue;
    if (target ? e.user_id !== target.id : !visible(u, users.get(e.user_id))) continue;
    if (pid !== undefined && e.project_id !== pid) continue;
    if (approved !== undefined) {
      const isApproved = sheetState(e.user_id, weekOf(e.date)).status === 'approved';
      if ((approved === 'true') !== isApproved) continue;
    }
    const key = groupBy === 'project' ? e.project_id : groupBy === 'activity' ? e.activity_id : e.user_id;
    let g = groups.get(key);
    if (!g) {
      const src = groupBy === 'project' ? projects.get(key) : groupBy === 'activity' ? activities.get(key) : users.get(key);
      g = { key, name: src ? (groupBy === 'user' ? src.username : src.name) : '', entry_count: 0, minutes: 0, rounded_minutes: 0 };
      groups.set(key, g);
    }
    g.entry_count++;
    g.minutes += e.duration_minutes;
    g.rounded_minutes += Math.ceil(e.duration_minutes / 15) * 15;
  }
  const list = [...groups.values()].sort((a, b) => b.minutes - a.minutes || cmpStr(a.key, b.key));
  const total = list.reduce((t, g) => ({ entry_count: t.entry_count + g.entry_count, minutes: t.minutes + g.minutes, rounded_minutes: t.rounded_minutes + g.rounded_minutes }), { entry_count: 0, minutes: 0, rounded_minutes: 0 });
  return [200, { from, to, group_by: groupBy, groups: list, total }];
}

// ------------------------------------------------------------------ routing
function route(segs) {
  const n = segs.length;
  const s0 = segs[0];
  if (n === 1 && s0 === 'health') return [{ GET: () => [200, { status: 'ok' }] }, {}];
  if (n === 2 && s0 === 'auth' && segs[1] === 'token') return [{ POST: hLogin }, {}];
  if (n === 1 && s0 === 'me') return [{ GET: hMe }, {}];
  if (s0 === 'users') {
    if (n === 1) return [{ GET: hUsersList, POST: hUsersCreate }, {}];
    if (n === 2) return [{ PATCH: hUserPatch }, { id: segs[1] }];
  }
  if (s0 === 'customers') {
    if (n === 1) return [{ GET: hCustomersList, POST: hCustomersCreate }, {}];
    if (n === 2) return [{ GET: hCustomerGet, PATCH: hCustomerPatch }, { id: segs[1] }];
  }
  if (s0 === 'projects') {
    if (n === 1) return [{ GET: hProjectsList, POST: hProjectsCreate }, {}];
    if (n === 2) return [{ GET: hProjectGet, PATCH: hProjectPatch }, { id: segs[1] }];
  }
  if (s0 === 'activities') {
    if (n === 1) return [{ GET: hActivitiesList, POST: hActivitiesCreate }, {}];
    if (n === 2) return [{ GET: hActivityGet, PATCH: hActivityPatch }, { id: segs[1] }];
  }
  if (s0 === 'entries') {
    if (n === 1) return [{ GET: hEntriesList, POST: hEntriesCreate }, {}];
    if (n === 2) return [{ GET: hEntryGet, PATCH: hEntryPatch, DELETE: hEntryDelete }, { id: segs[1] }];
  }
  if (s0 === 'timesheets') {
    if (n === 1) return [{ GET: hSheetsList }, {}];
    const p = { uid: segs[1], week: segs[2] };
    if (n === 3) return [{ GET: hSheetGet }, p];
    if (n === 4) {
      const h = { submit: hSheetSubmit, withdraw: hSheetWithdraw, approve: hSheetApprove, reject: hSheetReject }[segs[3]];
      if (h && Object.prototype.hasOwnProperty.call({ submit: 1, withdraw: 1, approve: 1, reject: 1 }, segs[3])) return [{ POST: h }, p];
    }
  }
  if (n === 2 && s0 === 'reports' && segs[1] === 'summary') return [{ GET: hReport }, {}];
  return [null, null];
}

function send(res, status, body) {
  if (status === 204) {
    res.writeHead(204);
    res.end();
    return;
  }
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}
function sendError(res, e) {
  const body = { error: e.code, message: e.message };
  if (e.status === 422) body.fields = e.fields || [];
  send(res, e.status, body);
}

const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  let oversize = false;
  const cl = req.headers['content-length'];
  if (cl !== undefined && /^\d+$/.test(cl) && +cl > MAX_BODY) oversize = true;
  req.on('data', (c) => {
    size += c.length;
    if (size > MAX_BODY) { oversize = true; chunks.length = 0; } else if (!oversize) chunks.push(c);
  });
  req.on('error', () => {});
  req.on('end', async () => {
    try {
      const rawUrl = req.url || '/';
      const qi = rawUrl.indexOf('?');
      const pathPart = qi >= 0 ? rawUrl.slice(0, qi) : rawUrl;
      const query = new URLSearchParams(qi >= 0 ? rawUrl.slice(qi + 1) : '');
      let segs = pathPart.split('/').slice(1);
      let decodeOk = true;
      segs = segs.map((s) => { try { return decodeURIComponent(s); } catch (e) { decodeOk = false; return s; } });
      const [methods, params] = route(segs);
      if (!methods) throw notFound('path');
      const handler = Object.prototype.hasOwnProperty.call(methods, req.method) ? methods[req.method] : null;
      if (!handler) throw new ApiError(405, 'method_not_allowed', 'method not allowed');
      if (!decodeOk) for (const k of Object.keys(params)) params[k] = '\u0000invalid';
      const ctx = new Ctx(req, params, query, Buffer.concat(chunks), oversize);
      const [status, body] = await handler(ctx);
      send(res, status, body);
    } catch (e) {
      if (e instanceof ApiError) sendError(res, e);
      else {
        console.error(e);
        send(res, 500, { error: 'internal_error', message: 'unexpected failure' });
      }
    }
  });
});

async function bootstrap() {
  const name = process.env.ADMIN_USERNAME || 'admin';
  const pw = process.env.ADMIN_PASSWORD || 'admin-password';
  const u = { id: newId(), username: name, role: 'admin', active: true, manager_id: null, created_at: nowIso(), password_hash: await hashPassword(pw) };
  users.set(u.id, u);
  server.listen(PORT, '0.0.0.0');
}
bootstrap();
