'use strict';
// Notifications — independent implementation on Node's standard library only.
const http = require('node:http');
const crypto = require('node:crypto');

// ---------------------------------------------------------------- helpers

class HttpError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const unauthorized = (m) => new HttpError(401, 'unauthorized', m || 'authentication required');
const forbidden = (m) => new HttpError(403, 'forbidden', m || 'forbidden');
const notFound = (m) => new HttpError(404, 'not_found', m || 'not found');
const conflict = (code, m) => new HttpError(409, code, m || code);
const validation = (fields, m) =>
  new HttpError(422, 'validation_error', m || 'validation failed: ' + fields.join(', '), fields);

function sendJson(res, status, body) {
  if (status === 204) {
    res.writeHead(204);
    res.end();
    return;
  }
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': data.length });
  res.end(data);
}

function sendError(res, e) {
  const body = { error: e.code, message: e.message };
  if (e.status === 422) body.fields = Array.from(new Set(e.fields || []));
  sendJson(res, e.status, body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

// spec.md "Limits and hostile input": > 1 MiB gets 413 or 422, nesting > 32 levels gets 422.
function nestingDepth(raw) {
  let depth = 0, max = 0, inStr = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') { if (++depth > max) max = depth; }
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

function parseObject(raw) {
  if (Buffer.byteLength(raw, 'utf8') > 1048576) throw validation([], 'request body larger than 1 MiB');
  if (nestingDepth(raw) > 32) throw validation([], 'request body nested more than 32 levels deep');
  let v;
  try {
    v = JSON.parse(raw);
  } catch (_) {
    throw validation([], 'request body is not valid JSON');
  }
  if (!isObject(v)) throw validation([], 'request body must be a JSON object');
  return v;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const charLen = (s) => Array.from(s).length;
const nonBlank = (s) => /\S/u.test(s);
const nowIso = () => new Date().toISOString();
const newId = () => crypto.randomUUID();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const locks = new Map();
async function withLock(key, fn) {
  const prev = locks.get(key) || Promise.resolve();
  let release;
  const mine = new Promise((r) => (release = r));
  const tail = prev.then(() => mine);
  locks.set(key, tail);
  await prev;
  try {
    return await fn();
  } finally {
    release();
    if (locks.get(key) === tail) locks.delete(key);
  }
}

const INT_RE = /^[+-]?\d+$/;
function parsePaging(q, bad) {
  let limit = 20, offset = 0;
  if (q.has('limit')) {
    const v = q.get('limit').trim();
    if (!INT_RE.test(v) || +v < 1 || +v > 100) bad.push('limit');
    else limit = parseInt(v, 10);
  }
  if (q.has('offset')) {
    const v = q.get('offset').trim();
    if (!INT_RE.test(v) || +v < 0 || !Number.isSafeInteger(+v)) bad.push('offset');
    else offset = parseInt(v, 10);
  }
  return { limit, offset };
}
const page = (items, p) => ({ items: items.slice(p.offset, p.offset + p.limit), total: items.length, limit: p.limit, offset: p.offset });

// ---------------------------------------------------------- delivery client
const DELIVERY_URL = (process.env.DELIVERY_URL || 'http://localhost:9200').replace(/\/+$/, '');
const ADMIN_TOKEN = process.env.NOTIFY_ADMIN_TOKEN || '';
const agent = new http.Agent({ keepAlive: false });

function deliveryPost(path, body) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(DELIVERY_URL + path);
    } catch (e) {
      resolve({ status: 0, error: e });
      return;
    }
    const data = Buffer.from(JSON.stringify(body), 'utf8');
    const headers = { 'Content-Type': 'application/json', 'Content-Length': data.length, Accept: 'application/json' };
    const req = http.request(
      { protocol: u.protocol, hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers, agent, timeout: 5000 },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          let json = null;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch (_) {
            json = null;
          }
          resolve({ status: res.statusCode, json });
        });
        res.on('error', (e) => resolve({ status: 0, error: e }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, error: e }));
    req.write(data);
    req.end();
  });
}

// ------------------------------------------------------------------ state
const users = new Map();
const usersByName = new Map();
const tokens = new Map();
const templates = new Map(); // id -> template
const templateKeys = new Map(); // key -> id
const notifications = new Map();
let seq = 0;

const hashPassword = (pw, salt) => crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
const userView = (u) => ({ id: u.id, username: u.username, email: u.email, phone: u.phone, created_at: u.created_at });
const prefsView = (p) => ({
  email_enabled: p.email_enabled, sms_enabled: p.sms_enabled, opted_out: p.opted_out.slice(),
  quiet_hours: p.quiet_hours ? { start: p.quiet_hours.start, end: p.quiet_hours.end } : null,
});
const templateView = (t) => ({ id: t.id, key: t.key, channel: t.channel, category: t.category, subject: t.subject, body: t.body, created_at: t.created_at });
const notificationView = (n) => ({
  id: n.id, user_id: n.user_id, template_key: n.template_key, channel: n.channel, category: n.category, to: n.to,
  subject: n.subject, body: n.body, status: n.status, reason: n.reason, attempts: n.attempts,
  provider_message_id: n.provider_message_id, created_at: n.created_at, sent_at: n.sent_at,
});

// Returns {admin: true} or {admin: false, user}.
function authenticate(req) {
  const h = req.headers['authorization'];
  if (typeof h !== 'string') throw unauthorized('missing bearer token');
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  if (ADMIN_TOKEN && m[1] === ADMIN_TOKEN) return { admin: true };
  const uid = tokens.get(m[1]);
  if (!uid || !users.has(uid)) throw unauthorized('invalid token');
  return { admin: false, user: users.get(uid) };
}
const requireAdmin = (who) => {
  if (!who.admin) throw forbidden('administrator only');
};
const requireUser = (who) => {
  if (who.admin) throw forbidden('the administrator has no /me endpoints');
};

const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const EMAIL_RE = /^[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const PHONE_RE = /^\+[1-9][0-9]{7,14}$/;
const TOD_RE = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
const KEY_RE = /^[a-z0-9_.-]{3,64}$/;
const PLACEHOLDER_RE = /\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}/g;
const validEmail = (v) => typeof v === 'string' && charLen(v) <= 254 && EMAIL_RE.test(v);
const validPhone = (v) => typeof v === 'string' && PHONE_RE.test(v);

function placeholders(s) {
  const out = new Set();
  if (typeof s !== 'string') return out;
  for (const m of s.matchAll(PLACEHOLDER_RE)) out.add(m[1]);
  return out;
}
function render(s, data, username) {
  if (s === null) return null;
  return s.replace(PLACEHOLDER_RE, (_, name) => (name === 'username' ? username : data[name]));
}

const minutesOf = (hhmm) => +hhmm.slice(0, 2) * 60 + +hhmm.slice(3, 5);
function inQuietHours(p) {
  if (!p.quiet_hours) return false;
  const d = new Date();
  const t = d.getUTCHours() * 60 + d.getUTCMinutes();
  const s = minutesOf(p.quiet_hours.start), e = minutesOf(p.quiet_hours.end);
  return s < e ? s <= t && t < e : t >= s || t < e;
}

const addressFor = (user, channel) => (channel === 'email' ? user.email : user.phone);

// One delivery round (up to 3 attempts) to the recipient's current address.
async function deliver(n) {
  const user = users.get(n.user_id);
  const to = user ? addressFor(user, n.channel) : null;
  if (!to) {
    n.status = 'skipped';
    n.reason = 'no_address';
    return;
  }
  for (let attempt = 1; attempt <= 3; attempt++) {
    const body = { channel: n.channel, to, body: n.body, reference: n.id };
    if (n.channel === 'email') body.subject = n.subject;
    n.to = to;
    n.attempts += 1;
    const r = await deliveryPost('/messages', body);
    if (r.status >= 200 && r.status < 300) {
      n.status = 'sent';
      n.reason = null;
      n.provider_message_id = r.json && r.json.id != null ? String(r.json.id) : null;
      n.sent_at = nowIso();
      return;
    }
    if (r.status >= 400 && r.status < 500) {
      n.status = 'failed';
      n.reason = 'rejected';
      return;
    }
    if (attempt < 3) await sleep(100);
  }
  n.status = 'failed';
  n.reason = 'provider_unavailable';
}

// Rules 1-5; delivers when due.
async function decide(n) {
  const user = users.get(n.user_id);
  if (!user || !addressFor(user, n.channel)) {
    n.status = 'skipped';
    n.reason = 'no_address';
    return;
  }
  if (n.category !== 'account') {
    const p = user.prefs;
    if (!(n.channel === 'email' ? p.email_enabled : p.sms_enabled)) {
      n.status = 'skipped';
      n.reason = 'channel_disabled';
      return;
    }
    if (p.opted_out.includes(n.category)) {
      n.status = 'skipped';
      n.reason = 'opted_out';
      return;
    }
    if (inQuietHours(p)) {
      n.status = 'deferred';
      n.reason = null;
      return;
    }
  }
  await deliver(n);
}

// ---------------------------------------------------------------- handlers
async function handle(req, res) {
  const u = new URL(req.url, 'http://localhost');
  const path = u.pathname;
  const method = req.method;
  const raw = await readBody(req);

  if (path === '/health') {
    if (method !== 'GET') return methodNotAllowed(res);
    return sendJson(res, 200, { status: 'ok' });
  }
  if (path === '/users') {
    if (method !== 'POST') return methodNotAllowed(res);
    const b = parseObject(raw);
    const bad = [];
    if (typeof b.username !== 'string' || !USERNAME_RE.test(b.username)) bad.push('username');
    if (typeof b.password !== 'string' || charLen(b.password) < 8 || charLen(b.password) > 128) bad.push('password');
    if (has(b, 'email') && b.email !== null && !validEmail(b.email)) bad.push('email');
    if (has(b, 'phone') && b.phone !== null && !validPhone(b.phone)) bad.push('phone');
    if (bad.length) throw validation(bad);
    if (usersByName.has(b.username)) throw conflict('conflict', 'username is taken');
    const salt = crypto.randomBytes(16).toString('hex');
    const user = {
      id: newId(), username: b.username, email: b.email == null ? null : b.email, phone: b.phone == null ? null : b.phone,
      created_at: nowIso(), salt, hash: hashPassword(b.password, salt),
      prefs: { email_enabled: true, sms_enabled: true, opted_out: [], quiet_hours: null },
    };
    users.set(user.id, user);
    usersByName.set(user.username, user);
    return sendJson(res, 201, userView(user));
  }
  if (path === '/auth/token') {
    if (method !== 'POST') return methodNotAllowed(res);
    const b = parseObject(raw);
    const bad = [];
    if (typeof b.username !== 'string') bad.push('username');
    if (typeof b.password !== 'string') bad.push('password');
    if (bad.length) throw validation(bad);
    const user = usersByName.get(b.username);
    if (!user) throw unauthorized('invalid credentials');
    if (!crypto.timingSafeEqual(Buffer.from(hashPassword(b.password, user.salt), 'hex'), Buffer.from(user.hash, 'hex')))
      throw unauthorized('invalid credentials');
    const token = crypto.randomBytes(32).toString('base64url');
    tokens.set(token, user.id);
    return sendJson(res, 200, { token, token_type: 'bearer', user: userView(user) });
  }

  const route = matchRoute(method, path);
  if (!route) throw notFound('no such route');
  const who = authenticate(req);
  if (route === 405) return methodNotAllowed(res);
  return route.fn({ who, params: route.params, q: u.searchParams, raw, res });
}

function methodNotAllowed(res) {
  sendJson(res, 405, { error: 'method_not_allowed', message: 'method not allowed' });
}

const routes = [
  ['GET', /^\/me$/, ({ who, res }) => {
    requireUser(who);
    sendJson(res, 200, userView(who.user));
  }],
  ['PATCH', /^\/me$/, ({ who, raw, res }) => {
    requireUser(who);
    const b = parseObject(raw);
    const bad = [];
    if (has(b, 'email') && b.email !== null && !validEmail(b.email)) bad.push('email');
    if (has(b, 'phone') && b.phone !== null && !validPhone(b.phone)) bad.push('phone');
    if (bad.length) throw validation(bad);
    if (has(b, 'email')) who.user.email = b.email;
    if (has(b, 'phone')) who.user.phone = b.phone;
    sendJson(res, 200, userView(who.user));
  }],
  ['GET', /^\/me\/preferences$/, ({ who, res }) => {
    requireUser(who);
    sendJson(res, 200, prefsView(who.user.prefs));
  }],
  ['PUT', /^\/me\/preferences$/, putPreferences],
  ['GET', /^\/me\/notifications$/, ({ who, q, res }) => {
    requireUser(who);
    listNotifications(q, (n) => n.user_id === who.user.id, res, false);
  }],
  ['GET', /^\/templates$/, ({ who, q, res }) => {
    requireAdmin(who);
    const bad = [];
    const pg = parsePaging(q, bad);
    if (bad.length) throw validation(bad);
    const items = Array.from(templates.values()).sort((a, b) => a.seq - b.seq);
    sendJson(res, 200, page(items.map(templateView), pg));
  }],
  ['POST', /^\/templates$/, createTemplate],
  ['GET', /^\/templates\/([^/]+)$/, ({ who, params, res }) => sendJson(res, 200, templateView(adminTemplate(who, params[0])))],
  ['PATCH', /^\/templates\/([^/]+)$/, updateTemplate],
  ['DELETE', /^\/templates\/([^/]+)$/, ({ who, params, res }) => {
    const t = adminTemplate(who, params[0]);
    templates.delete(t.id);
    if (templateKeys.get(t.key) === t.id) templateKeys.delete(t.key);
    sendJson(res, 204);
  }],
  ['GET', /^\/notifications$/, ({ who, q, res }) => {
    requireAdmin(who);
    const uid = q.has('user_id') ? q.get('user_id') : null;
    listNotifications(q, (n) => uid === null || n.user_id === uid, res);
  }],
  ['POST', /^\/notifications$/, sendNotification],
  ['POST', /^\/notifications\/dispatch$/, dispatch],
  ['GET', /^\/notifications\/([^/]+)$/, ({ who, params, res }) => sendJson(res, 200, notificationView(visibleNotification(who, params[0])))],
  ['POST', /^\/notifications\/([^/]+)\/retry$/, retry],
];

function matchRoute(method, path) {
  let pathMatched = false;
  for (const [mt, re, fn] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (mt !== method) continue;
    let params;
    try {
      params = m.slice(1).map(decodeURIComponent);
    } catch (_) {
      params = m.slice(1);
    }
    return { fn, params };
  }
  return pathMatched ? 405 : null;
}

// ---- preferences
function putPreferences({ who, raw, res }) {
  requireUser(who);
  const b = parseObject(raw);
  const bad = [];
  if (typeof b.email_enabled !== 'boolean') bad.push('email_enabled');
  if (typeof b.sms_enabled !== 'boolean') bad.push('sms_enabled');
  const oo = b.opted_out;
  if (!Array.isArray(oo) || oo.some((c) => c !== 'marketing' && c !== 'reminders') || new Set(oo).size !== oo.length) bad.push('opted_out');
  const qh = b.quiet_hours;
  let quiet = null;
  if (!has(b, 'quiet_hours')) bad.push('quiet_hours');
  else if (qh !== null) {
    if (!isObject(qh) || typeof qh.start !== 'string' || typeof qh.end !== 'string' || !TOD_RE.test(qh.start) || !TOD_RE.test(qh.end) || qh.start === qh.end)
      bad.push('quiet_hours');
    else quiet = { start: qh.start, end: qh.end };
  }
  if (bad.length) throw validation(bad);
  who.user.prefs = { email_enabled: b.email_enabled, sms_enabled: b.sms_enabled, opted_out: oo.slice(), quiet_hours: quiet };
  sendJson(res, 200, prefsView(who.user.prefs));
}

// ---- templates
function adminTemplate(who, id) {
  const t = templates.get(id);
  if (!t) throw notFound('template not found');
  requireAdmin(who);
  return t;
}

// subject rules for a channel; returns true when valid.
function validSubject(channel, present, v) {
  if (channel === 'email') return present && typeof v === 'string' && nonBlank(v) && charLen(v) <= 200;
  if (channel === 'sms') return !present || v === null;
  return !present || v === null || (typeof v === 'string' && charLen(v) <= 200);
}
const validBody = (v) => typeof v === 'string' && nonBlank(v) && charLen(v) <= 2000;
const CATEGORIES = ['account', 'marketing', 'reminders'];

function createTemplate({ who, raw, res }) {
  requireAdmin(who);
  const b = parseObject(raw);
  const bad = [];
  if (typeof b.key !== 'string' || !KEY_RE.test(b.key)) bad.push('key');
  const chOk = b.channel === 'email' || b.channel === 'sms';
  if (!chOk) bad.push('channel');
  if (!CATEGORIES.includes(b.category)) bad.push('category');
  if (!validSubject(chOk ? b.channel : null, has(b, 'subject'), b.subject)) bad.push('subject');
  if (!validBody(b.body)) bad.push('body');
  if (bad.length) throw validation(bad);
  if (templateKeys.has(b.key)) throw conflict('conflict', 'the template key is taken');
  const t = {
    id: newId(), key: b.key, channel: b.channel, category: b.category, subject: b.channel === 'email' ? b.subject : null,
    body: b.body, created_at: nowIso(), seq: ++seq,
  };
  templates.set(t.id, t);
  templateKeys.set(t.key, t.id);
  sendJson(res, 201, templateView(t));
}

function updateTemplate({ who, params, raw, res }) {
  const t = adminTemplate(who, params[0]);
  const b = parseObject(raw);
  const bad = [];
  if (has(b, 'category') && !CATEGORIES.includes(b.category)) bad.push('category');
  if (has(b, 'subject') && !validSubject(t.channel, true, b.subject)) bad.push('subject');
  if (has(b, 'body') && !validBody(b.body)) bad.push('body');
  if (bad.length) throw validation(bad);
  if (has(b, 'category')) t.category = b.category;
  if (has(b, 'subject') && t.channel === 'email') t.subject = b.subject;
  if (has(b, 'body')) t.body = b.body;
  sendJson(res, 200, templateView(t));
}

// ---- notifications
const STATUSES = ['sent', 'failed', 'skipped', 'deferred'];

function listNotifications(q, filter, res) {
  const bad = [];
  const pg = parsePaging(q, bad);
  let st = null;
  if (q.has('status')) {
    st = q.get('status');
    if (!STATUSES.includes(st)) bad.push('status');
  }
  if (bad.length) throw validation(bad);
  const items = Array.from(notifications.values())
    .filter((n) => filter(n) && (st === null || n.status === st))
    .sort((a, b) => b.seq - a.seq);
  sendJson(res, 200, page(items.map(notificationView), pg));
}

function visibleNotification(who, id) {
  const n = notifications.get(id);
  if (!n || (!who.admin && n.user_id !== who.user.id)) throw notFound('notification not found');
  return n;
}

async function sendNotification({ who, raw, res }) {
  requireAdmin(who);
  const b = parseObject(raw);
  const bad = [];
  const user = typeof b.user_id === 'string' ? users.get(b.user_id) : undefined;
  if (!user) bad.push('user_id');
  const tid = typeof b.template_key === 'string' ? templateKeys.get(b.template_key) : undefined;
  const t = tid ? templates.get(tid) : undefined;
  if (!t) bad.push('template_key');
  let data = {};
  if (has(b, 'data')) {
    if (!isObject(b.data) || Object.values(b.data).some((v) => typeof v !== 'string')) bad.push('data');
    else data = b.data;
  }
  if (t && !bad.includes('data')) {
    const need = new Set([...placeholders(t.subject), ...placeholders(t.body)]);
    for (const name of need) if (name !== 'username' && !has(data, name)) bad.push('data');
  }
  if (bad.length) throw validation(bad);
  const n = {
    id: newId(), user_id: user.id, template_key: t.key, channel: t.channel, category: t.category, to: null,
    subject: t.channel === 'email' ? render(t.subject, data, user.username) : null, body: render(t.body, data, user.username),
    status: 'deferred', reason: null, attempts: 0, provider_message_id: null, created_at: nowIso(), sent_at: null, seq: ++seq,
  };
  await withLock(n.id, () => decide(n));
  notifications.set(n.id, n);
  sendJson(res, 201, notificationView(n));
}

async function retry({ who, params, res }) {
  const n0 = visibleNotification(who, params[0]);
  requireAdmin(who);
  const n = await withLock(n0.id, async () => {
    if (n0.status !== 'failed') throw conflict('invalid_state', 'only a failed notification can be retried');
    await deliver(n0);
    return n0;
  });
  sendJson(res, 200, notificationView(n));
}

async function dispatch({ who, res }) {
  requireAdmin(who);
  const counts = { examined: 0, sent: 0, failed: 0, skipped: 0, deferred: 0 };
  const list = Array.from(notifications.values()).filter((n) => n.status === 'deferred').sort((a, b) => a.seq - b.seq);
  for (const n of list) {
    await withLock(n.id, async () => {
      if (n.status !== 'deferred') return; // another dispatch handled it meanwhile
      counts.examined += 1;
      await decide(n);
      counts[n.status] += 1;
    });
  }
  sendJson(res, 200, counts);
}

// ------------------------------------------------------------------ server
const server = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (e instanceof HttpError) return sendError(res, e);
    console.error(e);
    if (!res.headersSent) sendJson(res, 500, { error: 'internal_error', message: 'internal server error' });
  });
});
server.keepAliveTimeout = 65000;
const port = parseInt(process.env.PORT || '8000', 10);
server.listen(port, '0.0.0.0', () => console.log('notifications listening on ' + port));
