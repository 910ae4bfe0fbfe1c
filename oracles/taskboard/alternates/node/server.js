'use strict';
// Taskboard — projects, members, tasks. Node standard library only (node:http), in-memory state.
const http = require('node:http');
const crypto = require('node:crypto');

// ---------------------------------------------------------------- helpers

class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const unauthorized = (m) => new ApiError(401, 'unauthorized', m || 'authentication required');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'your role does not allow this action');
const notFound = (m) => new ApiError(404, 'not_found', m || 'not found');
const conflict = (m) => new ApiError(409, 'conflict', m || 'conflict');
const invalidTransition = (m) => new ApiError(409, 'invalid_transition', m || 'status change not allowed');
const validation = (fields, m) => {
  const uniq = [];
  for (const f of fields) if (!uniq.includes(f)) uniq.push(f);
  return new ApiError(422, 'validation_error', m || ('invalid: ' + (uniq.join(', ') || 'body')), uniq);
};

const now = () => new Date().toISOString();
const newId = () => crypto.randomUUID();
const ulen = (s) => { let n = 0; for (const _ of s) n++; return n; }; // Unicode code points
const isStr = (v) => typeof v === 'string';
const nonBlank = (s) => /\S/u.test(s);

function send(res, status, body) {
  if (status === 204 || body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const data = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(data),
  });
  res.end(data);
}

function sendError(res, err) {
  const body = { error: err.code, message: err.message };
  if (err.status === 422) body.fields = err.fields || [];
  send(res, err.status, body);
}

// Parses the raw request body; throws 422 if not a JSON object.
function parseObject(raw) {
  // Spec: a body over 1 MiB gets 413 or 422.
  if (Buffer.byteLength(raw, 'utf8') > 1048576) throw validation([], 'request body is larger than 1 MiB');
  let v;
  try {
    v = JSON.parse(raw.length ? raw : '');
  } catch (e) {
    throw validation([], 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw validation([], 'request body must be a JSON object');
  }
  if (tooDeep(v, 32)) throw validation([], 'request body is nested more than 32 levels deep');
  return v;
}

// Spec: a body nested more than 32 levels (objects and arrays together) gets 422.
function tooDeep(value, limit) {
  const stack = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop();
    if (v !== null && typeof v === 'object') {
      if (depth > limit) return true;
      for (const c of Array.isArray(v) ? v : Object.values(v)) stack.push([c, depth + 1]);
    }
  }
  return false;
}
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

// Pagination query parameters
function parseIntParam(q, name, def, min, max, bad) {
  if (!q.has(name)) return def;
  const s = q.get(name);
  if (!/^[+-]?\d+$/.test(s)) { bad.push(name); return def; }
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) { bad.push(name); return def; }
  return n;
}
function pageParams(q, bad) {
  const limit = parseIntParam(q, 'limit', 20, 1, 100, bad);
  const offset = parseIntParam(q, 'offset', 0, 0, undefined, bad);
  return { limit, offset };
}
function page(all, p) {
  return { items: all.slice(p.offset, p.offset + p.limit), total: all.length, limit: p.limit, offset: p.offset };
}

// ---------------------------------------------------------------- state

const users = new Map();        // id -> {id, username, display_name, created_at, salt, hash}
const usersByName = new Map();  // username -> id
const tokens = new Map();       // token -> user id
const projects = new Map();     // id -> project (Map keeps creation order)

function hashPassword(pw, salt) {
  return crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
}
const userView = (u) => ({ id: u.id, username: u.username, display_name: u.display_name, created_at: u.created_at });
function projectView(p, uid) {
  const m = p.members.get(uid);
  return {
    id: p.id, name: p.name, description: p.description, created_by: p.created_by,
    created_at: p.created_at, role: m ? m.role : null,
  };
}
function memberView(uid, m) {
  const u = users.get(uid);
  return { user_id: uid, username: u.username, display_name: u.display_name, role: m.role, joined_at: m.joined_at };
}
const taskView = (t) => ({
  id: t.id, project_id: t.project_id, title: t.title, description: t.description, status: t.status,
  priority: t.priority, assignee_id: t.assignee_id, created_by: t.created_by, created_at: t.created_at,
  updated_at: t.updated_at, completed_at: t.completed_at,
});
const commentView = (c) => ({ id: c.id, task_id: c.task_id, author_id: c.author_id, body: c.body, created_at: c.created_at });
const activityView = (a) => ({ id: a.id, type: a.type, actor_id: a.actor_id, task_id: a.task_id, data: a.data, created_at: a.created_at });

function addActivity(p, type, actorId, taskId, data) {
  p.activity.push({ id: newId(), type, actor_id: actorId, task_id: taskId, data, created_at: now() });
}

const ROLES = ['owner', 'member', 'viewer'];
const STATUSES = ['todo', 'in_progress', 'done', 'cancelled'];
const PRIORITIES = ['low', 'medium', 'high'];
const TRANSITIONS = {
  todo: ['in_progress', 'cancelled'],
  in_progress: ['todo', 'done', 'cancelled'],
  done: ['in_progress'],
  cancelled: ['todo'],
};

// ---------------------------------------------------------------- request context helpers

function authenticate(req) {
  const h = req.headers['authorization'];
  if (!isStr(h)) throw unauthorized('missing bearer token');
  const m = /^Bearer +(\S+) *$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  const uid = tokens.get(m[1]);
  if (!uid || !users.has(uid)) throw unauthorized('unknown or revoked token');
  return { user: users.get(uid), token: m[1] };
}

// Visibility: project exists and caller is a member; otherwise 404.
function visibleProject(pid, uid) {
  const p = projects.get(pid);
  if (!p || !p.members.has(uid)) throw notFound('project not found');
  return p;
}
function projectTask(p, tid) {
  const t = p.tasks.get(tid);
  if (!t) throw notFound('task not found');
  return t;
}
const roleOf = (p, uid) => p.members.get(uid).role;

// assignee must be a current owner or member of the project
function validAssignee(p, v) {
  if (v === null) return true;
  if (!isStr(v)) return false;
  const m = p.members.get(v);
  return !!m && (m.role === 'owner' || m.role === 'member');
}

function validateTaskFields(body, p, fields, creating) {
  const out = {};
  if (creating) {
    if (!has(body, 'title')) fields.push('title');
  }
  if (has(body, 'title')) {
    const v = body.title;
    if (!isStr(v) || !nonBlank(v) || ulen(v) > 200) fields.push('title'); else out.title = v;
  }
  if (has(body, 'description')) {
    const v = body.description;
    if (!isStr(v) || ulen(v) > 5000) fields.push('description'); else out.description = v;
  }
  if (has(body, 'priority')) {
    const v = body.priority;
    if (!isStr(v) || !PRIORITIES.includes(v)) fields.push('priority'); else out.priority = v;
  }
  if (has(body, 'assignee_id')) {
    const v = body.assignee_id;
    if (!validAssignee(p, v)) fields.push('assignee_id'); else out.assignee_id = v;
  }
  if (!creating && has(body, 'status')) {
    const v = body.status;
    if (!isStr(v) || !STATUSES.includes(v)) fields.push('status'); else out.status = v;
  }
  return out;
}

function unassignUser(p, uid) {
  for (const t of p.tasks.values()) {
    if (t.assignee_id === uid) {
      t.assignee_id = null;
      t.updated_at = now();
    }
  }
}

// ---------------------------------------------------------------- handlers

function register(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  const { username, password } = body;
  if (!isStr(username) || !/^[a-z0-9_]{3,32}$/.test(username)) fields.push('username');
  if (!isStr(password) || ulen(password) < 8 || ulen(password) > 128) fields.push('password');
  let displayName = isStr(username) ? username : '';
  if (has(body, 'display_name')) {
    const d = body.display_name;
    if (!isStr(d) || !nonBlank(d) || ulen(d) > 64) fields.push('display_name'); else displayName = d;
  }
  if (fields.length) throw validation(fields);
  if (usersByName.has(username)) throw conflict('username already registered');
  const salt = crypto.randomBytes(16).toString('hex');
  const u = { id: newId(), username, display_name: displayName, created_at: now(), salt, hash: hashPassword(password, salt) };
  users.set(u.id, u);
  usersByName.set(username, u.id);
  return [201, userView(u)];
}

function login(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.username)) fields.push('username');
  if (!isStr(body.password)) fields.push('password');
  if (fields.length) throw validation(fields);
  const uid = usersByName.get(body.username);
  const u = uid && users.get(uid);
  if (!u) throw unauthorized('invalid credentials');
  const h = hashPassword(body.password, u.salt);
  if (!crypto.timingSafeEqual(Buffer.from(h, 'hex'), Buffer.from(u.hash, 'hex'))) throw unauthorized('invalid credentials');
  const token = crypto.randomBytes(32).toString('base64url');
  tokens.set(token, u.id);
  return [200, { token, token_type: 'bearer', user: userView(u) }];
}

function logout(ctx) {
  tokens.delete(ctx.token);
  return [204];
}

function me(ctx) { return [200, userView(ctx.user)]; }

function listProjects(ctx) {
  const bad = [];
  const p = pageParams(ctx.query, bad);
  if (bad.length) throw validation(bad);
  const uid = ctx.user.id;
  const mine = [];
  for (const pr of projects.values()) if (pr.members.has(uid)) mine.push(projectView(pr, uid));
  return [200, page(mine, p)];
}

function validateProjectBody(body, creating) {
  const fields = [];
  const out = {};
  if (creating && !has(body, 'name')) fields.push('name');
  if (has(body, 'name')) {
    const v = body.name;
    if (!isStr(v) || !nonBlank(v) || ulen(v) > 100) fields.push('name'); else out.name = v;
  }
  if (has(body, 'description')) {
    const v = body.description;
    if (!isStr(v) || ulen(v) > 2000) fields.push('description'); else out.description = v;
  }
  if (fields.length) throw validation(fields);
  return out;
}

function createProject(ctx) {
  const body = parseObject(ctx.raw);
  const v = validateProjectBody(body, true);
  const ts = now();
  const p = {
    id: newId(), name: v.name, description: has(v, 'description') ? v.description : '',
    created_by: ctx.user.id, created_at: ts,
    members: new Map(), tasks: new Map(), activity: [],
  };
  p.members.set(ctx.user.id, { role: 'owner', joined_at: ts });
  projects.set(p.id, p);
  addActivity(p, 'project_created', ctx.user.id, null, { name: p.name });
  return [201, projectView(p, ctx.user.id)];
}

function getProject(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  return [200, projectView(p, ctx.user.id)];
}

function updateProject(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  if (roleOf(p, ctx.user.id) !== 'owner') throw forbidden('only owners may edit the project');
  const body = parseObject(ctx.raw);
  const v = validateProjectBody(body, false);
  if (has(v, 'name')) p.name = v.name;
  if (has(v, 'description')) p.description = v.description;
  return [200, projectView(p, ctx.user.id)];
}

function deleteProject(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  if (roleOf(p, ctx.user.id) !== 'owner') throw forbidden('only owners may delete the project');
  projects.delete(p.id);
  return [204];
}

function listMembers(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const items = [];
  for (const [uid, m] of p.members) items.push(memberView(uid, m));
  return [200, { items }];
}

function addMember(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  if (roleOf(p, ctx.user.id) !== 'owner') throw forbidden('only owners may add members');
  const body = parseObject(ctx.raw);
  const fields = [];
  let targetId = null;
  if (!isStr(body.username) || !usersByName.has(body.username)) fields.push('username');
  else targetId = usersByName.get(body.username);
  let role = 'member';
  if (has(body, 'role')) {
    if (!isStr(body.role) || !ROLES.includes(body.role)) fields.push('role'); else role = body.role;
  }
  if (fields.length) throw validation(fields);
  if (p.members.has(targetId)) throw conflict('user is already a member');
  const m = { role, joined_at: now() };
  p.members.set(targetId, m);
  addActivity(p, 'member_added', ctx.user.id, null, { user_id: targetId, role });
  return [201, memberView(targetId, m)];
}

function ownerCount(p) {
  let n = 0;
  for (const m of p.members.values()) if (m.role === 'owner') n++;
  return n;
}

function changeMemberRole(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const targetId = ctx.params.user_id;
  const m = p.members.get(targetId);
  if (!m) throw notFound('member not found');
  if (roleOf(p, ctx.user.id) !== 'owner') throw forbidden('only owners may change roles');
  const body = parseObject(ctx.raw);
  if (!isStr(body.role) || !ROLES.includes(body.role)) throw validation(['role']);
  const role = body.role;
  if (role === m.role) return [200, memberView(targetId, m)];
  if (m.role === 'owner' && ownerCount(p) <= 1) throw conflict('a project must keep at least one owner');
  const from = m.role;
  m.role = role;
  addActivity(p, 'member_role_changed', ctx.user.id, null, { user_id: targetId, from, to: role });
  if (role === 'viewer') unassignUser(p, targetId);
  return [200, memberView(targetId, m)];
}

function removeMember(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const targetId = ctx.params.user_id;
  const m = p.members.get(targetId);
  if (!m) throw notFound('member not found');
  if (targetId !== ctx.user.id && roleOf(p, ctx.user.id) !== 'owner') throw forbidden('only owners may remove other members');
  if (m.role === 'owner' && ownerCount(p) <= 1) throw conflict('a project must keep at least one owner');
  p.members.delete(targetId);
  unassignUser(p, targetId);
  addActivity(p, 'member_removed', ctx.user.id, null, { user_id: targetId });
  return [204];
}

function listTasks(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const bad = [];
  const q = ctx.query;
  let status;
  if (q.has('status')) {
    status = q.get('status');
    if (!STATUSES.includes(status)) bad.push('status');
  }
  let assignee;
  if (q.has('assignee_id')) assignee = q.get('assignee_id');
  const pg = pageParams(q, bad);
  if (bad.length) throw validation(bad);
  const all = [];
  for (const t of p.tasks.values()) {
    if (status !== undefined && t.status !== status) continue;
    if (assignee !== undefined) {
      if (assignee === 'none') { if (t.assignee_id !== null) continue; }
      else if (t.assignee_id !== assignee) continue;
    }
    all.push(taskView(t));
  }
  return [200, page(all, pg)];
}

function canWrite(role) { return role === 'owner' || role === 'member'; }

function createTask(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  if (!canWrite(roleOf(p, ctx.user.id))) throw forbidden('viewers may not create tasks');
  const body = parseObject(ctx.raw);
  const fields = [];
  const v = validateTaskFields(body, p, fields, true);
  if (fields.length) throw validation(fields);
  const ts = now();
  const t = {
    id: newId(), project_id: p.id, title: v.title,
    description: has(v, 'description') ? v.description : '',
    status: 'todo', priority: has(v, 'priority') ? v.priority : 'medium',
    assignee_id: has(v, 'assignee_id') ? v.assignee_id : null,
    created_by: ctx.user.id, created_at: ts, updated_at: ts, completed_at: null,
    comments: [],
  };
  p.tasks.set(t.id, t);
  addActivity(p, 'task_created', ctx.user.id, t.id, { title: t.title, assignee_id: t.assignee_id });
  return [201, taskView(t)];
}

function getTask(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  return [200, taskView(t)];
}

function updateTask(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  if (!canWrite(roleOf(p, ctx.user.id))) throw forbidden('viewers may not edit tasks');
  const body = parseObject(ctx.raw);
  const fields = [];
  const v = validateTaskFields(body, p, fields, false);
  if (fields.length) throw validation(fields);
  const statusChange = has(v, 'status') && v.status !== t.status;
  if (statusChange && !TRANSITIONS[t.status].includes(v.status)) {
    throw invalidTransition(`cannot change status from ${t.status} to ${v.status}`);
  }
  const assigneeChange = has(v, 'assignee_id') && v.assignee_id !== t.assignee_id;
  let changed = false;
  for (const k of ['title', 'description', 'priority']) {
    if (has(v, k) && v[k] !== t[k]) { t[k] = v[k]; changed = true; }
  }
  const ts = now();
  if (statusChange) {
    const from = t.status;
    t.status = v.status;
    t.completed_at = v.status === 'done' ? ts : null;
    addActivity(p, 'task_status_changed', ctx.user.id, t.id, { from, to: v.status });
    changed = true;
  }
  if (assigneeChange) {
    const prev = t.assignee_id;
    t.assignee_id = v.assignee_id;
    addActivity(p, 'task_assigned', ctx.user.id, t.id, { assignee_id: v.assignee_id, previous_assignee_id: prev });
    changed = true;
  }
  if (changed) t.updated_at = ts;
  return [200, taskView(t)];
}

function deleteTask(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  const role = roleOf(p, ctx.user.id);
  if (!(role === 'owner' || (role === 'member' && t.created_by === ctx.user.id))) {
    throw forbidden('you may not delete this task');
  }
  p.tasks.delete(t.id);
  addActivity(p, 'task_deleted', ctx.user.id, t.id, { title: t.title });
  return [204];
}

function listComments(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  const bad = [];
  const pg = pageParams(ctx.query, bad);
  if (bad.length) throw validation(bad);
  return [200, page(t.comments.map(commentView), pg)];
}

function addComment(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  if (!canWrite(roleOf(p, ctx.user.id))) throw forbidden('viewers may not comment');
  const body = parseObject(ctx.raw);
  const b = body.body;
  if (!isStr(b) || !nonBlank(b) || ulen(b) > 2000) throw validation(['body']);
  const c = { id: newId(), task_id: t.id, author_id: ctx.user.id, body: b, created_at: now() };
  t.comments.push(c);
  addActivity(p, 'comment_added', ctx.user.id, t.id, { comment_id: c.id });
  return [201, commentView(c)];
}

function deleteComment(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const t = projectTask(p, ctx.params.task_id);
  const idx = t.comments.findIndex((c) => c.id === ctx.params.comment_id);
  if (idx < 0) throw notFound('comment not found');
  const c = t.comments[idx];
  const role = roleOf(p, ctx.user.id);
  const allowed = role === 'owner' || (c.author_id === ctx.user.id && role === 'member');
  if (!allowed) throw forbidden('you may not delete this comment');
  t.comments.splice(idx, 1);
  return [204];
}

function listActivity(ctx) {
  const p = visibleProject(ctx.params.project_id, ctx.user.id);
  const bad = [];
  const pg = pageParams(ctx.query, bad);
  if (bad.length) throw validation(bad);
  const all = [];
  for (let i = p.activity.length - 1; i >= 0; i--) all.push(activityView(p.activity[i]));
  return [200, page(all, pg)];
}

function health() { return [200, { status: 'ok' }]; }

// ---------------------------------------------------------------- routing

const routes = [
  ['GET', '/health', health, false],
  ['POST', '/users', register, false],
  ['POST', '/auth/token', login, false],
  ['POST', '/auth/logout', logout, true],
  ['GET', '/me', me, true],
  ['GET', '/projects', listProjects, true],
  ['POST', '/projects', createProject, true],
  ['GET', '/projects/:project_id', getProject, true],
  ['PATCH', '/projects/:project_id', updateProject, true],
  ['DELETE', '/projects/:project_id', deleteProject, true],
  ['GET', '/projects/:project_id/members', listMembers, true],
  ['POST', '/projects/:project_id/members', addMember, true],
  ['PATCH', '/projects/:project_id/members/:user_id', changeMemberRole, true],
  ['DELETE', '/projects/:project_id/members/:user_id', removeMember, true],
  ['GET', '/projects/:project_id/tasks', listTasks, true],
  ['POST', '/projects/:project_id/tasks', createTask, true],
  ['GET', '/projects/:project_id/tasks/:task_id', getTask, true],
  ['PATCH', '/projects/:project_id/tasks/:task_id', updateTask, true],
  ['DELETE', '/projects/:project_id/tasks/:task_id', deleteTask, true],
  ['GET', '/projects/:project_id/tasks/:task_id/comments', listComments, true],
  ['POST', '/projects/:project_id/tasks/:task_id/comments', addComment, true],
  ['DELETE', '/projects/:project_id/tasks/:task_id/comments/:comment_id', deleteComment, true],
  ['GET', '/projects/:project_id/activity', listActivity, true],
].map(([method, pattern, handler, auth]) => ({ method, parts: pattern.split('/').slice(1), handler, auth }));

function matchRoute(segs, parts) {
  if (segs.length !== parts.length) return null;
  const params = {};
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].startsWith(':')) {
      if (segs[i] === '') return null;
      params[parts[i].slice(1)] = segs[i];
    } else if (parts[i] !== segs[i]) return null;
  }
  return params;
}

function handle(req, res, raw) {
  try {
    const url = new URL(req.url, 'http://localhost');
    let path = url.pathname;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    let segs;
    try {
      segs = path.split('/').slice(1).map(decodeURIComponent);
    } catch (e) {
      throw notFound('not found');
    }
    let pathMatched = false;
    for (const r of routes) {
      const params = matchRoute(segs, r.parts);
      if (!params) continue;
      pathMatched = true;
      if (r.method !== req.method) continue;
      const ctx = { req, raw, query: url.searchParams, params };
      if (r.auth) Object.assign(ctx, authenticate(req));
      const [status, body] = r.handler(ctx);
      send(res, status, body);
      return;
    }
    if (pathMatched) throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    throw notFound('no such route');
  } catch (err) {
    if (err instanceof ApiError) return sendError(res, err);
    console.error(err);
    send(res, 500, { error: 'internal_error', message: 'internal server error' });
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  req.on('error', () => { try { send(res, 400, { error: 'bad_request', message: 'bad request' }); } catch (e) { /* ignore */ } });
});
server.keepAliveTimeout = 65000;
const port = parseInt(process.env.PORT || '8000', 10);
server.listen(port, '0.0.0.0', () => console.log(`taskboard listening on 0.0.0.0:${port}`));
