'use strict';
// Issue tracker: projects with roles, numbered issues, labels, milestones, comments and signed
// webhooks delivered to $WEBHOOKS_URL before the API answers. Node 18, node:http, in-memory state.

const http = require('node:http');
const https = require('node:https');
const crypto = require('node:crypto');

const PORT = Number(process.env.PORT || 8000);
const ADMIN_USERNAME = process.env.ISSUES_ADMIN_USERNAME || 'admin';
const ADMIN_PASSWORD = process.env.ISSUES_ADMIN_PASSWORD || 'admin-password';
const WEBHOOKS_URL = (process.env.WEBHOOKS_URL || '').replace(/\/+$/, '');

const MAX_BODY_BYTES = 1048576;
const MAX_DEPTH = 32;
const DELIVERY_TIMEOUT_MS = 5000;
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 };

// ------------------------------------------------------------------------------------------
// Errors and responses
// ------------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message, extra) {
    super(message);
    this.status = status;
    this.code = code;
    this.extra = extra || {};
  }
}

const unauthorized = (m) => new ApiError(401, 'unauthorized', m || 'missing, malformed or unknown bearer token');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'your role does not allow this action');
const notFound = (m) => new ApiError(404, 'not_found', m || 'not found');
const conflict = (m) => new ApiError(409, 'conflict', m);
function invalid(fields, message) {
  return new ApiError(422, 'validation_error', message || 'invalid request', { fields: [...new Set(fields)] });
}

function send(res, status, body, headers) {
  if (res.headersSent) return;
  if (status === 204) {
    res.writeHead(204, headers || {});
    res.end();
    return;
  }
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, Object.assign({ 'Content-Type': 'application/json', 'Content-Length': data.length }, headers || {}));
  res.end(data);
}

function sendError(res, err, headers) {
  send(res, err.status, Object.assign({ error: err.code, message: err.message }, err.extra), headers);
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
const isStr = (v) => typeof v === 'string';
const chars = (s) => { let n = 0; for (const _ of s) n++; return n; }; // Unicode code points
const nonBlank = (s) => /\S/u.test(s);
const newId = (prefix) => `${prefix}_${crypto.randomBytes(9).toString('base64url')}`;

let lastMillis = 0;
// A strictly increasing clock, so that updated_at changes on every PATCH.
function now() {
  let t = Date.now();
  if (t <= lastMillis) t = lastMillis + 1;
  lastMillis = t;
  return new Date(t).toISOString();
}

function nestingExceeds(text, limit) {
  const re = /"[^"\\]*(?:\\.[^"\\]*)*"|[[\]{}]/gs;
  let depth = 0;
  let m;
  while ((m = re.exec(text)) !== null) {
    const t = m[0];
    if (t === '[' || t === '{') {
      depth += 1;
      if (depth > limit) return true;
    } else if (t === ']' || t === '}') {
      depth -= 1;
    }
  }
  return false;
}

// Reads the whole body (draining anything past the limit) and parses it as a JSON object.
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    const declared = req.headers['content-length'];
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > MAX_BODY_BYTES) tooLarge = true;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      if (!tooLarge) chunks.push(chunk);
      if (size > 64 * MAX_BODY_BYTES) req.destroy();
    });
    const finish = () => {
      if (tooLarge) {
        // 422 rather than 413: the contract's Error enum has no code for 413 (the spec allows either).
        resolve({ error: invalid([], 'the request body is larger than 1 MiB') });
        return;
      }
      const raw = Buffer.concat(chunks);
      const bad = invalid([], 'the request body must be a JSON object');
      let text;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
      } catch (e) {
        resolve({ error: bad });
        return;
      }
      if (nestingExceeds(text, MAX_DEPTH)) {
        resolve({ error: invalid([], 'the request body is nested more than 32 levels deep') });
        return;
      }
      let data;
      try {
        data = JSON.parse(text);
      } catch (e) {
        resolve({ error: bad });
        return;
      }
      if (data === null || typeof data !== 'object' || Array.isArray(data)) {
        resolve({ error: bad });
        return;
      }
      resolve({ data });
    };
    req.on('end', finish);
    req.on('error', () => resolve({ error: bad400() }));
    req.on('close', () => { if (!req.complete) resolve({ error: bad400() }); });
  });
}

const bad400 = () => invalid([], 'the request body could not be read');

// Passwords: scrypt with a random 16-byte salt, stored as scrypt$N$r$p$salt$hash.
function hashPassword(password) {
  return new Promise((resolve, reject) => {
    const salt = crypto.randomBytes(16);
    crypto.scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }, (err, key) => {
      if (err) reject(err);
      else resolve(`scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`);
    });
  });
}

function verifyPassword(password, stored) {
  return new Promise((resolve) => {
    const [scheme, n, r, p, saltB64, keyB64] = stored.split('$');
    if (scheme !== 'scrypt') return resolve(false);
    const expected = Buffer.from(keyB64, 'base64');
    crypto.scrypt(password, Buffer.from(saltB64, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) }, (err, key) => {
      resolve(!err && crypto.timingSafeEqual(key, expected));
    });
  });
}

// ------------------------------------------------------------------------------------------
// State (in memory)
// ------------------------------------------------------------------------------------------

const users = new Map(); // id -> {id, username, passwordHash, isAdmin, createdAt}
const usernames = new Map(); // username -> id
const tokens = new Map(); // token -> user id
const projects = new Map(); // id -> project (insertion order = creation order)

let dummyHash = null;

function userJson(u) {
  return { id: u.id, username: u.username, is_admin: u.isAdmin, created_at: u.createdAt };
}

function projectJson(p) {
  return { id: p.id, name: p.name, owner_id: p.ownerId, created_at: p.createdAt };
}

function memberJson(userId, role) {
  return { user_id: userId, username: users.get(userId).username, role };
}

function labelJson(l) {
  return { id: l.id, name: l.name, color: l.color, description: l.description };
}

function issueJson(p, i) {
  return {
    number: i.number,
    project_id: p.id,
    title: i.title,
    body: i.body,
    state: i.state,
    author_id: i.authorId,
    assignees: [...i.assignees],
    labels: i.labels.filter((id) => p.labels.has(id)).map((id) => {
      const l = p.labels.get(id);
      return { id: l.id, name: l.name, color: l.color };
    }),
    milestone_id: i.milestoneId,
    comments: i.comments.length,
    created_at: i.createdAt,
    updated_at: i.updatedAt,
    closed_at: i.closedAt,
  };
}

function milestoneJson(p, m) {
  let open = 0;
  let closed = 0;
  for (const i of p.issues.values()) {
    if (i.milestoneId !== m.id) continue;
    if (i.state === 'open') open += 1;
    else closed += 1;
  }
  const total = open + closed;
  return {
    id: m.id,
    title: m.title,
    description: m.description,
    due_on: m.dueOn,
    state: m.state,
    open_issues: open,
    closed_issues: closed,
    progress: total === 0 ? 0 : Math.floor((100 * closed) / total),
  };
}

function hookJson(h) {
  return { id: h.id, url: h.url, events: [...h.events], active: h.active, created_at: h.createdAt };
}

function commentJson(c) {
  return { id: c.id, issue_number: c.issueNumber, author_id: c.authorId, body: c.body, created_at: c.createdAt };
}

function deliveryJson(d) {
  return {
    id: d.id,
    event: d.event,
    action: d.action,
    issue_number: d.issueNumber,
    status_code: d.statusCode,
    success: d.success,
    delivered_at: d.deliveredAt,
  };
}

// ------------------------------------------------------------------------------------------
// Webhook deliveries
// ------------------------------------------------------------------------------------------

function post(url, body, headers) {
  return new Promise((resolve) => {
    let settled = false;
    const done = (status) => {
      if (!settled) {
        settled = true;
        resolve(status);
      }
    };
    let target;
    try {
      target = new URL(url);
    } catch (e) {
      done(null);
      return;
    }
    const lib = target.protocol === 'https:' ? https : http;
    let req;
    try {
      req = lib.request(target, {
        method: 'POST',
        headers: Object.assign({ 'Content-Length': body.length }, headers),
        agent: false,
      }, (res) => {
        const status = res.statusCode;
        res.on('data', () => {});
        res.on('end', () => done(status));
        res.on('error', () => done(status));
        res.on('aborted', () => done(status));
      });
    } catch (e) {
      done(null);
      return;
    }
    const timer = setTimeout(() => {
      done(null);
      req.destroy();
    }, DELIVERY_TIMEOUT_MS);
    req.on('error', () => done(null));
    req.on('close', () => { clearTimeout(timer); done(null); });
    req.end(body);
  });
}

// Sends one delivery per active hook subscribed to `event`, in order of creation, and records each.
async function deliver(p, event, action, issue, sender, comment) {
  const payload = {
    action,
    project: { id: p.id, name: p.name },
    issue: issueJson(p, issue),
    sender: { id: sender.id, username: sender.username },
  };
  if (comment) payload.comment = commentJson(comment);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const hooks = [...p.hooks.values()].filter((h) => h.active && h.events.includes(event));
  for (const hook of hooks) {
    const id = newId('dlv');
    const signature = crypto.createHmac('sha256', Buffer.from(hook.secret, 'utf8')).update(body).digest('hex');
    const status = await post(hook.url, body, {
      'Content-Type': 'application/json',
      'X-Tracker-Event': event,
      'X-Tracker-Delivery': id,
      'X-Tracker-Signature': `sha256=${signature}`,
      'User-Agent': 'issue-tracker-webhooks/1.0',
    });
    hook.deliveries.push({
      id,
      event,
      action,
      issueNumber: issue.number,
      statusCode: status,
      success: status !== null && status >= 200 && status < 300,
      deliveredAt: now(),
    });
  }
}

// ------------------------------------------------------------------------------------------
// Request context
// ------------------------------------------------------------------------------------------

function authenticate(ctx) {
  const header = ctx.req.headers.authorization;
  if (header === undefined) throw unauthorized('missing bearer token');
  const m = /^Bearer +(\S+) *$/i.exec(header);
  if (!m) throw unauthorized('malformed Authorization header');
  const userId = tokens.get(m[1]);
  if (userId === undefined) throw unauthorized('unknown token');
  ctx.user = users.get(userId);
  return ctx.user;
}

function body(ctx) {
  if (ctx.bodyResult.error) throw ctx.bodyResult.error;
  return ctx.bodyResult.data;
}

// The project named in the path, visible to members only (404 otherwise, administrators too).
function memberProject(ctx) {
  const p = projects.get(ctx.params.project_id);
  if (!p || !p.members.has(ctx.user.id)) throw notFound('no such project');
  ctx.role = p.members.get(ctx.user.id);
  return p;
}

function requireRole(ctx, ...roles) {
  if (!roles.includes(ctx.role)) throw forbidden();
}

function issueIn(p, raw) {
  if (!/^[0-9]{1,15}$/.test(raw)) throw notFound('no such issue');
  const issue = p.issues.get(Number(raw));
  if (!issue) throw notFound('no such issue');
  return issue;
}

function pagination(query, bad) {
  let limit = 20;
  let offset = 0;
  if (query.has('limit')) {
    const raw = query.get('limit');
    if (/^[0-9]{1,4}$/.test(raw) && Number(raw) >= 1 && Number(raw) <= 100) limit = Number(raw);
    else bad.push('limit');
  }
  if (query.has('offset')) {
    const raw = query.get('offset');
    if (/^[0-9]+$/.test(raw)) offset = Number(raw);
    else bad.push('offset');
  }
  return { limit, offset };
}

// ------------------------------------------------------------------------------------------
// Validation of issue fields (labels, milestone, assignees)
// ------------------------------------------------------------------------------------------

function validIdList(value, max, known) {
  if (!Array.isArray(value) || value.length > max) return false;
  const seen = new Set();
  for (const v of value) {
    if (!isStr(v) || v.length === 0 || seen.has(v) || !known(v)) return false;
    seen.add(v);
  }
  return true;
}

function validateIssueFields(p, data, bad, creating) {
  if (creating || has(data, 'title')) {
    const t = data.title;
    if (!(isStr(t) && nonBlank(t) && chars(t) <= 255)) bad.push('title');
  }
  if (has(data, 'body')) {
    if (!(isStr(data.body) && chars(data.body) <= 65535)) bad.push('body');
  }
  if (!creating && has(data, 'state')) {
    if (!(data.state === 'open' || data.state === 'closed')) bad.push('state');
  }
  if (has(data, 'labels') && !validIdList(data.labels, 20, (id) => p.labels.has(id))) bad.push('labels');
  if (has(data, 'milestone_id')) {
    const m = data.milestone_id;
    if (!(m === null || (isStr(m) && p.milestones.has(m)))) bad.push('milestone_id');
  }
  if (has(data, 'assignees') && !validIdList(data.assignees, 10, (id) => p.members.has(id))) bad.push('assignees');
}

const COLOR_RE = /^#[0-9a-fA-F]{6}$/;

function validDate(s) {
  if (!isStr(s)) return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1];
  return d <= days;
}

function validHookUrl(url) {
  if (!isStr(url) || !WEBHOOKS_URL) return false;
  if (chars(url) > 500) return false;
  if (/[\s\x00-\x1f\x7f-\x9f]/u.test(url)) return false;
  return url.startsWith(`${WEBHOOKS_URL}/`);
}

function validEvents(events) {
  if (!Array.isArray(events) || events.length === 0) return false;
  const seen = new Set();
  for (const e of events) {
    if (!(e === 'issues' || e === 'issue_comment') || seen.has(e)) return false;
    seen.add(e);
  }
  return true;
}

// ------------------------------------------------------------------------------------------
// Handlers
// ------------------------------------------------------------------------------------------

const handlers = {
  health: async () => [200, { status: 'ok' }],

  async login(ctx) {
    const data = body(ctx);
    const bad = ['username', 'password'].filter((k) => !isStr(data[k]) || !has(data, k));
    if (bad.length) throw invalid(bad, 'username and password must be strings');
    const id = usernames.get(data.username);
    const user = id === undefined ? null : users.get(id);
    if (!user) {
      if (dummyHash) await verifyPassword(data.password, dummyHash);
      throw unauthorized('wrong username or password');
    }
    if (!(await verifyPassword(data.password, user.passwordHash))) throw unauthorized('wrong username or password');
    const token = crypto.randomBytes(32).toString('base64url');
    tokens.set(token, user.id);
    return [200, { token, token_type: 'bearer', user: userJson(user) }];
  },

  async me(ctx) {
    return [200, userJson(ctx.user)];
  },

  async createUser(ctx) {
    if (!ctx.user.isAdmin) throw forbidden('only the administrator creates users');
    const data = body(ctx);
    const bad = [];
    if (!(isStr(data.username) && /^[a-z0-9_]{3,32}$/.test(data.username))) bad.push('username');
    if (!(isStr(data.password) && chars(data.password) >= 8 && chars(data.password) <= 128)) bad.push('password');
    if (bad.length) throw invalid(bad, 'invalid user');
    if (usernames.has(data.username)) throw conflict('this username is taken');
    const hash = await hashPassword(data.password);
    if (usernames.has(data.username)) throw conflict('this username is taken');
    const user = { id: newId('usr'), username: data.username, passwordHash: hash, isAdmin: false, createdAt: now() };
    users.set(user.id, user);
    usernames.set(user.username, user.id);
    return [201, userJson(user)];
  },

  async listProjects(ctx) {
    const items = [...projects.values()].filter((p) => p.members.has(ctx.user.id)).map(projectJson);
    return [200, { items }];
  },

  async createProject(ctx) {
    const data = body(ctx);
    if (!(isStr(data.name) && nonBlank(data.name) && chars(data.name) <= 100)) throw invalid(['name'], 'invalid project name');
    const p = {
      id: newId('prj'),
      name: data.name,
      ownerId: ctx.user.id,
      createdAt: now(),
      members: new Map([[ctx.user.id, 'owner']]),
      issues: new Map(),
      nextNumber: 1,
      labels: new Map(),
      milestones: new Map(),
      hooks: new Map(),
    };
    projects.set(p.id, p);
    return [201, projectJson(p)];
  },

  async getProject(ctx) {
    return [200, projectJson(memberProject(ctx))];
  },

  // --- members ---

  async listMembers(ctx) {
    const p = memberProject(ctx);
    return [200, { items: [...p.members].map(([uid, role]) => memberJson(uid, role)) }];
  },

  async addMember(ctx) {
    const p = memberProject(ctx);
    requireRole(ctx, 'owner');
    const data = body(ctx);
    const bad = [];
    if (!(isStr(data.user_id) && users.has(data.user_id))) bad.push('user_id');
    if (!(data.role === 'maintainer' || data.role === 'reporter')) bad.push('role');
    if (bad.length) throw invalid(bad, 'invalid member');
    if (p.members.has(data.user_id)) throw conflict('this user is already a member');
    p.members.set(data.user_id, data.role);
    return [201, memberJson(data.user_id, data.role)];
  },

  async changeMember(ctx) {
    const p = memberProject(ctx);
    const uid = ctx.params.user_id;
    if (!p.members.has(uid)) throw notFound('no such member');
    requireRole(ctx, 'owner');
    const data = body(ctx);
    if (!(data.role === 'maintainer' || data.role === 'reporter')) throw invalid(['role'], 'invalid role');
    if (uid === p.ownerId) throw conflict("the owner's membership cannot be changed");
    p.members.set(uid, data.role);
    return [200, memberJson(uid, data.role)];
  },

  async removeMember(ctx) {
    const p = memberProject(ctx);
    const uid = ctx.params.user_id;
    if (!p.members.has(uid)) throw notFound('no such member');
    requireRole(ctx, 'owner');
    if (uid === p.ownerId) throw conflict("the owner's membership cannot be removed");
    p.members.delete(uid);
    for (const issue of p.issues.values()) {
      issue.assignees = issue.assignees.filter((a) => a !== uid);
    }
    return [204, null];
  },

  // --- issues ---

  async listIssues(ctx) {
    const p = memberProject(ctx);
    const q = ctx.query;
    const bad = [];
    let state = 'open';
    if (q.has('state')) {
      state = q.get('state');
      if (!['open', 'closed', 'all'].includes(state)) bad.push('state');
    }
    const { limit, offset } = pagination(q, bad);
    if (bad.length) throw invalid(bad, 'invalid query parameters');
    let list = [...p.issues.values()].reverse();
    if (state !== 'all') list = list.filter((i) => i.state === state);
    if (q.has('label')) {
      const v = q.get('label');
      list = list.filter((i) => p.labels.has(v) && i.labels.includes(v));
    }
    if (q.has('milestone')) {
      const v = q.get('milestone');
      list = list.filter((i) => p.milestones.has(v) && i.milestoneId === v);
    }
    if (q.has('assignee')) {
      const v = q.get('assignee');
      list = list.filter((i) => i.assignees.includes(v));
    }
    const items = list.slice(offset, offset + limit).map((i) => issueJson(p, i));
    return [200, { items, total: list.length, limit, offset }];
  },

  async createIssue(ctx) {
    const p = memberProject(ctx);
    const data = body(ctx);
    if (ctx.role === 'reporter' && ['labels', 'milestone_id', 'assignees'].some((k) => has(data, k))) {
      throw forbidden('reporters file issues with a title and body only');
    }
    const bad = [];
    validateIssueFields(p, data, bad, true);
    if (bad.length) throw invalid(bad, 'invalid issue');
    const t = now();
    const issue = {
      number: p.nextNumber,
      title: data.title,
      body: has(data, 'body') ? data.body : '',
      state: 'open',
      authorId: ctx.user.id,
      assignees: has(data, 'assignees') ? [...data.assignees] : [],
      labels: has(data, 'labels') ? [...data.labels] : [],
      milestoneId: has(data, 'milestone_id') ? data.milestone_id : null,
      comments: [],
      createdAt: t,
      updatedAt: t,
      closedAt: null,
    };
    p.nextNumber += 1;
    p.issues.set(issue.number, issue);
    const answer = issueJson(p, issue);
    await deliver(p, 'issues', 'opened', issue, ctx.user);
    return [201, answer];
  },

  async getIssue(ctx) {
    const p = memberProject(ctx);
    return [200, issueJson(p, issueIn(p, ctx.params.number))];
  },

  async updateIssue(ctx) {
    const p = memberProject(ctx);
    const issue = issueIn(p, ctx.params.number);
    if (ctx.role === 'reporter') {
      if (issue.authorId !== ctx.user.id) throw forbidden('reporters change only the issues they authored');
    }
    const data = body(ctx);
    if (ctx.role === 'reporter' && ['state', 'labels', 'milestone_id', 'assignees'].some((k) => has(data, k))) {
      throw forbidden('reporters change only the title and body');
    }
    const bad = [];
    validateIssueFields(p, data, bad, false);
    if (bad.length) throw invalid(bad, 'invalid issue');
    let action = 'edited';
    if (has(data, 'title')) issue.title = data.title;
    if (has(data, 'body')) issue.body = data.body;
    if (has(data, 'labels')) issue.labels = [...data.labels];
    if (has(data, 'milestone_id')) issue.milestoneId = data.milestone_id;
    if (has(data, 'assignees')) issue.assignees = [...data.assignees];
    const t = now();
    if (has(data, 'state') && data.state !== issue.state) {
      issue.state = data.state;
      if (data.state === 'closed') {
        issue.closedAt = t;
        action = 'closed';
      } else {
        issue.closedAt = null;
        action = 'reopened';
      }
    }
    issue.updatedAt = t;
    const answer = issueJson(p, issue);
    await deliver(p, 'issues', action, issue, ctx.user);
    return [200, answer];
  },

  async listComments(ctx) {
    const p = memberProject(ctx);
    const issue = issueIn(p, ctx.params.number);
    return [200, { items: issue.comments.map(commentJson) }];
  },

  async createComment(ctx) {
    const p = memberProject(ctx);
    const issue = issueIn(p, ctx.params.number);
    const data = body(ctx);
    if (!(isStr(data.body) && nonBlank(data.body) && chars(data.body) <= 65535)) throw invalid(['body'], 'invalid comment');
    const comment = { id: newId('cmt'), issueNumber: issue.number, authorId: ctx.user.id, body: data.body, createdAt: now() };
    issue.comments.push(comment);
    const answer = commentJson(comment);
    await deliver(p, 'issue_comment', 'created', issue, ctx.user, comment);
    return [201, answer];
  },

  // --- labels ---

  async listLabels(ctx) {
    const p = memberProject(ctx);
    return [200, { items: [...p.labels.values()].map(labelJson) }];
  },

  async createLabel(ctx) {
    const p = memberProject(ctx);
    requireRole(ctx, 'owner', 'maintainer');
    const data = body(ctx);
    const bad = [];
    if (!(isStr(data.name) && nonBlank(data.name) && chars(data.name) <= 50)) bad.push('name');
    if (!(isStr(data.color) && COLOR_RE.test(data.color))) bad.push('color');
    if (has(data, 'description') && !(isStr(data.description) && chars(data.description) <= 200)) bad.push('description');
    if (bad.length) throw invalid(bad, 'invalid label');
    const lower = data.name.toLowerCase();
    for (const l of p.labels.values()) {
      if (l.name.toLowerCase() === lower) throw conflict('a label of this project has this name');
    }
    const label = { id: newId('lbl'), name: data.name, color: data.color.toLowerCase(), description: has(data, 'description') ? data.description : '' };
    p.labels.set(label.id, label);
    return [201, labelJson(label)];
  },

  async updateLabel(ctx) {
    const p = memberProject(ctx);
    const label = p.labels.get(ctx.params.label_id);
    if (!label) throw notFound('no such label');
    requireRole(ctx, 'owner', 'maintainer');
    const data = body(ctx);
    const bad = [];
    if (has(data, 'name') && !(isStr(data.name) && nonBlank(data.name) && chars(data.name) <= 50)) bad.push('name');
    if (has(data, 'color') && !(isStr(data.color) && COLOR_RE.test(data.color))) bad.push('color');
    if (has(data, 'description') && !(isStr(data.description) && chars(data.description) <= 200)) bad.push('description');
    if (bad.length) throw invalid(bad, 'invalid label');
    if (has(data, 'name')) {
      const lower = data.name.toLowerCase();
      for (const l of p.labels.values()) {
        if (l.id !== label.id && l.name.toLowerCase() === lower) throw conflict('a label of this project has this name');
      }
      label.name = data.name;
    }
    if (has(data, 'color')) label.color = data.color.toLowerCase();
    if (has(data, 'description')) label.description = data.description;
    return [200, labelJson(label)];
  },

  async deleteLabel(ctx) {
    const p = memberProject(ctx);
    const label = p.labels.get(ctx.params.label_id);
    if (!label) throw notFound('no such label');
    requireRole(ctx, 'owner', 'maintainer');
    p.labels.delete(label.id);
    for (const issue of p.issues.values()) issue.labels = issue.labels.filter((id) => id !== label.id);
    return [204, null];
  },

  // --- milestones ---

  async listMilestones(ctx) {
    const p = memberProject(ctx);
    return [200, { items: [...p.milestones.values()].map((m) => milestoneJson(p, m)) }];
  },

  async createMilestone(ctx) {
    const p = memberProject(ctx);
    requireRole(ctx, 'owner', 'maintainer');
    const data = body(ctx);
    const bad = [];
    if (!(isStr(data.title) && nonBlank(data.title) && chars(data.title) <= 100)) bad.push('title');
    if (has(data, 'description') && !(isStr(data.description) && chars(data.description) <= 1000)) bad.push('description');
    if (has(data, 'due_on') && !(data.due_on === null || validDate(data.due_on))) bad.push('due_on');
    if (bad.length) throw invalid(bad, 'invalid milestone');
    const m = {
      id: newId('mst'),
      title: data.title,
      description: has(data, 'description') ? data.description : '',
      dueOn: has(data, 'due_on') ? data.due_on : null,
      state: 'open',
    };
    p.milestones.set(m.id, m);
    return [201, milestoneJson(p, m)];
  },

  async getMilestone(ctx) {
    const p = memberProject(ctx);
    const m = p.milestones.get(ctx.params.milestone_id);
    if (!m) throw notFound('no such milestone');
    return [200, milestoneJson(p, m)];
  },

  async updateMilestone(ctx) {
    const p = memberProject(ctx);
    const m = p.milestones.get(ctx.params.milestone_id);
    if (!m) throw notFound('no such milestone');
    requireRole(ctx, 'owner', 'maintainer');
    const data = body(ctx);
    const bad = [];
    if (has(data, 'title') && !(isStr(data.title) && nonBlank(data.title) && chars(data.title) <= 100)) bad.push('title');
    if (has(data, 'description') && !(isStr(data.description) && chars(data.description) <= 1000)) bad.push('description');
    if (has(data, 'due_on') && !(data.due_on === null || validDate(data.due_on))) bad.push('due_on');
    if (has(data, 'state') && !(data.state === 'open' || data.state === 'closed')) bad.push('state');
    if (bad.length) throw invalid(bad, 'invalid milestone');
    if (has(data, 'title')) m.title = data.title;
    if (has(data, 'description')) m.description = data.description;
    if (has(data, 'due_on')) m.dueOn = data.due_on;
    if (has(data, 'state')) m.state = data.state;
    return [200, milestoneJson(p, m)];
  },

  async deleteMilestone(ctx) {
    const p = memberProject(ctx);
    const m = p.milestones.get(ctx.params.milestone_id);
    if (!m) throw notFound('no such milestone');
    requireRole(ctx, 'owner', 'maintainer');
    p.milestones.delete(m.id);
    for (const issue of p.issues.values()) if (issue.milestoneId === m.id) issue.milestoneId = null;
    return [204, null];
  },

  // --- hooks ---

  async listHooks(ctx) {
    const p = memberProject(ctx);
    requireRole(ctx, 'owner');
    return [200, { items: [...p.hooks.values()].map(hookJson) }];
  },

  async createHook(ctx) {
    const p = memberProject(ctx);
    requireRole(ctx, 'owner');
    const data = body(ctx);
    const bad = [];
    if (!validHookUrl(data.url)) bad.push('url');
    if (!(isStr(data.secret) && chars(data.secret) >= 8 && chars(data.secret) <= 200)) bad.push('secret');
    if (has(data, 'events') && !validEvents(data.events)) bad.push('events');
    if (has(data, 'active') && typeof data.active !== 'boolean') bad.push('active');
    if (bad.length) throw invalid(bad, 'invalid hook');
    if (p.hooks.size >= 5) throw conflict('a project has at most 5 hooks');
    const hook = {
      id: newId('hk'),
      url: data.url,
      secret: data.secret,
      events: has(data, 'events') ? [...data.events] : ['issues', 'issue_comment'],
      active: has(data, 'active') ? data.active : true,
      createdAt: now(),
      deliveries: [],
    };
    p.hooks.set(hook.id, hook);
    return [201, hookJson(hook)];
  },

  async updateHook(ctx) {
    const p = memberProject(ctx);
    const hook = p.hooks.get(ctx.params.hook_id);
    if (!hook) throw notFound('no such hook');
    requireRole(ctx, 'owner');
    const data = body(ctx);
    const bad = [];
    if (has(data, 'url') && !validHookUrl(data.url)) bad.push('url');
    if (has(data, 'secret') && !(isStr(data.secret) && chars(data.secret) >= 8 && chars(data.secret) <= 200)) bad.push('secret');
    if (has(data, 'events') && !validEvents(data.events)) bad.push('events');
    if (has(data, 'active') && typeof data.active !== 'boolean') bad.push('active');
    if (bad.length) throw invalid(bad, 'invalid hook');
    if (has(data, 'url')) hook.url = data.url;
    if (has(data, 'secret')) hook.secret = data.secret;
    if (has(data, 'events')) hook.events = [...data.events];
    if (has(data, 'active')) hook.active = data.active;
    return [200, hookJson(hook)];
  },

  async deleteHook(ctx) {
    const p = memberProject(ctx);
    const hook = p.hooks.get(ctx.params.hook_id);
    if (!hook) throw notFound('no such hook');
    requireRole(ctx, 'owner');
    p.hooks.delete(hook.id);
    return [204, null];
  },

  async listDeliveries(ctx) {
    const p = memberProject(ctx);
    const hook = p.hooks.get(ctx.params.hook_id);
    if (!hook) throw notFound('no such hook');
    requireRole(ctx, 'owner');
    return [200, { items: hook.deliveries.map(deliveryJson) }];
  },
};

// ------------------------------------------------------------------------------------------
// Routing
// ------------------------------------------------------------------------------------------

const P = '/projects/:project_id';
const ROUTES = [
  ['GET', '/health', 'health', true],
  ['POST', '/auth/token', 'login', true],
  ['GET', '/me', 'me'],
  ['POST', '/users', 'createUser'],
  ['GET', '/projects', 'listProjects'],
  ['POST', '/projects', 'createProject'],
  ['GET', P, 'getProject'],
  ['GET', `${P}/members`, 'listMembers'],
  ['POST', `${P}/members`, 'addMember'],
  ['PATCH', `${P}/members/:user_id`, 'changeMember'],
  ['DELETE', `${P}/members/:user_id`, 'removeMember'],
  ['GET', `${P}/issues`, 'listIssues'],
  ['POST', `${P}/issues`, 'createIssue'],
  ['GET', `${P}/issues/:number`, 'getIssue'],
  ['PATCH', `${P}/issues/:number`, 'updateIssue'],
  ['GET', `${P}/issues/:number/comments`, 'listComments'],
  ['POST', `${P}/issues/:number/comments`, 'createComment'],
  ['GET', `${P}/labels`, 'listLabels'],
  ['POST', `${P}/labels`, 'createLabel'],
  ['PATCH', `${P}/labels/:label_id`, 'updateLabel'],
  ['DELETE', `${P}/labels/:label_id`, 'deleteLabel'],
  ['GET', `${P}/milestones`, 'listMilestones'],
  ['POST', `${P}/milestones`, 'createMilestone'],
  ['GET', `${P}/milestones/:milestone_id`, 'getMilestone'],
  ['PATCH', `${P}/milestones/:milestone_id`, 'updateMilestone'],
  ['DELETE', `${P}/milestones/:milestone_id`, 'deleteMilestone'],
  ['GET', `${P}/hooks`, 'listHooks'],
  ['POST', `${P}/hooks`, 'createHook'],
  ['PATCH', `${P}/hooks/:hook_id`, 'updateHook'],
  ['DELETE', `${P}/hooks/:hook_id`, 'deleteHook'],
  ['GET', `${P}/hooks/:hook_id/deliveries`, 'listDeliveries'],
].map(([method, pattern, name, pub]) => ({ method, segments: pattern.split('/').slice(1), name, pub: !!pub }));

function matchSegments(pattern, segments) {
  if (pattern.length !== segments.length) return null;
  const params = {};
  for (let k = 0; k < pattern.length; k++) {
    const p = pattern[k];
    if (p.startsWith(':')) {
      let value;
      try {
        value = decodeURIComponent(segments[k]);
      } catch (e) {
        value = '\u0000invalid';
      }
      params[p.slice(1)] = value;
    } else if (p !== segments[k]) {
      return null;
    }
  }
  return params;
}

async function handle(req, res) {
  const url = req.url || '/';
  const qIndex = url.indexOf('?');
  const rawPath = qIndex === -1 ? url : url.slice(0, qIndex);
  const query = new URLSearchParams(qIndex === -1 ? '' : url.slice(qIndex + 1));
  const segments = rawPath.split('/').slice(1);

  const matches = [];
  for (const route of ROUTES) {
    const params = matchSegments(route.segments, segments);
    if (params) matches.push({ route, params });
  }
  const ctx = { req, res, query, params: {}, user: null, role: null, bodyResult: { data: {} } };
  const hit = matches.find((m) => m.route.method === req.method || (req.method === 'HEAD' && m.route.method === 'GET'));

  if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
    ctx.bodyResult = await readBody(req);
  } else {
    req.resume();
  }

  try {
    if (!hit) {
      const isPublic = matches.length > 0 ? matches.every((m) => m.route.pub) : false;
      const protectedPath = ['me', 'users', 'projects'].includes(segments[0]);
      if (!isPublic && (matches.length > 0 || protectedPath)) authenticate(ctx);
      if (matches.length === 0) throw notFound('no such resource');
      const allow = [...new Set(matches.map((m) => m.route.method))].join(', ');
      sendError(res, new ApiError(405, 'method_not_allowed', 'this path does not support the method'), { Allow: allow });
      return;
    }
    ctx.params = hit.params;
    if (!hit.route.pub) authenticate(ctx);
    const [status, payload] = await handlers[hit.route.name](ctx);
    send(res, status, payload);
  } catch (err) {
    if (err instanceof ApiError) {
      sendError(res, err);
    } else {
      console.error(err);
      sendError(res, new ApiError(500, 'internal_error', 'an unexpected error occurred'));
    }
  }
}

// ------------------------------------------------------------------------------------------
// Start
// ------------------------------------------------------------------------------------------

async function main() {
  const admin = {
    id: newId('usr'),
    username: ADMIN_USERNAME,
    passwordHash: await hashPassword(ADMIN_PASSWORD),
    isAdmin: true,
    createdAt: now(),
  };
  users.set(admin.id, admin);
  usernames.set(admin.username, admin.id);
  dummyHash = await hashPassword(crypto.randomBytes(12).toString('hex'));

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error(err);
      sendError(res, new ApiError(500, 'internal_error', 'an unexpected error occurred'));
    });
  });
  server.keepAliveTimeout = 65000;
  server.listen(PORT, '0.0.0.0', () => {
    console.log(`issue tracker listening on 0.0.0.0:${PORT}`);
  });
}

process.on('uncaughtException', (err) => console.error('uncaught', err));
process.on('unhandledRejection', (err) => console.error('unhandled', err));

main();
