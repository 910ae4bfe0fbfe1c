'use strict';
// Envelope budget — independent implementation on Node's standard library only.
// Every state change is synchronous (no await between checks and writes), so each request
// applies completely or not at all even when requests arrive concurrently.
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
const notFound = (m) => new HttpError(404, 'not_found', m || 'not found');
const conflict = (m) => new HttpError(409, 'conflict', m || 'conflict');
const insufficient = (m) => new HttpError(409, 'insufficient_funds', m || 'a balance would become negative');
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

function parseObject(raw) {
  // Spec: a body over 1 MiB gets 413 or 422.
  if (Buffer.byteLength(raw, 'utf8') > 1048576) throw validation([], 'request body is larger than 1 MiB');
  let v;
  try {
    v = JSON.parse(raw);
  } catch (_) {
    throw validation([], 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw validation([], 'request body must be a JSON object');
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
const charLen = (s) => Array.from(s).length;
const nonBlank = (s) => /\S/u.test(s);
const nowIso = () => new Date().toISOString();
const newId = () => crypto.randomUUID();
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);

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

function daysInMonth(y, m) {
  return [31, (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}
function validDate(s) {
  if (typeof s !== 'string') return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const y = +m[1], mo = +m[2], d = +m[3];
  return mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo);
}
const validMonth = (s) => typeof s === 'string' && /^\d{4}-(0[1-9]|1[0-2])$/.test(s);

// ------------------------------------------------------------------ state
const users = new Map();
const usersByName = new Map();
const tokens = new Map();
const accounts = new Map();
const envelopes = new Map();
const transactions = new Map();
let seq = 0;

const hashPassword = (pw, salt) => crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
const publicUser = (u) => ({ id: u.id, username: u.username, created_at: u.created_at });

function authenticate(req) {
  const h = req.headers['authorization'];
  if (typeof h !== 'string') throw unauthorized('missing bearer token');
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  const uid = tokens.get(m[1]);
  if (!uid || !users.has(uid)) throw unauthorized('invalid token');
  return users.get(uid);
}

const accountView = (a) => ({ id: a.id, name: a.name, kind: a.kind, opening_balance: a.opening_balance, balance: a.balance, created_at: a.created_at });
const envelopeView = (e) => ({ id: e.id, name: e.name, monthly_budget: e.monthly_budget, balance: e.balance, archived: e.archived, created_at: e.created_at });
const txView = (t) => ({
  id: t.id, type: t.type, date: t.date, amount: t.amount, account_id: t.account_id, envelope_id: t.envelope_id,
  from_envelope_id: t.from_envelope_id, to_envelope_id: t.to_envelope_id, memo: t.memo, created_at: t.created_at,
});

const mine = (map, user, id) => {
  const x = typeof id === 'string' ? map.get(id) : undefined;
  return x && x.owner_id === user.id ? x : null;
};
const byCreation = (a, b) => a.seq - b.seq;
const ownList = (map, user) => Array.from(map.values()).filter((x) => x.owner_id === user.id).sort(byCreation);

function totals(user) {
  let A = 0, E = 0;
  for (const a of accounts.values()) if (a.owner_id === user.id) A += a.balance;
  for (const e of envelopes.values()) if (e.owner_id === user.id) E += e.balance;
  return { accounts_total: A, envelopes_total: E, unassigned: A - E };
}

const validName = (v) => typeof v === 'string' && nonBlank(v) && charLen(v) <= 60;
const KINDS = ['checking', 'savings', 'cash'];
const TYPES = ['income', 'expense', 'transfer'];
const validMoney = (v, min) => isInt(v) && v >= min && v <= 1000000000;
const sameName = (a, b) => a.toLowerCase() === b.toLowerCase();

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
    if (typeof b.username !== 'string' || !/^[a-z0-9_]{3,32}$/.test(b.username)) bad.push('username');
    if (typeof b.password !== 'string' || charLen(b.password) < 8 || charLen(b.password) > 128) bad.push('password');
    if (bad.length) throw validation(bad);
    if (usersByName.has(b.username)) throw conflict('username is taken');
    const salt = crypto.randomBytes(16).toString('hex');
    const user = { id: newId(), username: b.username, created_at: nowIso(), salt, hash: hashPassword(b.password, salt) };
    users.set(user.id, user);
    usersByName.set(user.username, user);
    return sendJson(res, 201, publicUser(user));
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
    return sendJson(res, 200, { token, token_type: 'bearer', user: publicUser(user) });
  }

  const route = matchRoute(method, path);
  if (!route) throw notFound('no such route');
  const user = authenticate(req);
  if (route === 405) return methodNotAllowed(res);
  return route.fn({ user, params: route.params, q: u.searchParams, raw, res });
}

function methodNotAllowed(res) {
  sendJson(res, 405, { error: 'method_not_allowed', message: 'method not allowed' });
}

const routes = [
  ['GET', /^\/me$/, ({ user, res }) => sendJson(res, 200, publicUser(user))],
  ['GET', /^\/accounts$/, ({ user, res }) => sendJson(res, 200, { items: ownList(accounts, user).map(accountView) })],
  ['POST', /^\/accounts$/, createAccount],
  ['GET', /^\/accounts\/([^/]+)$/, ({ user, params, res }) => sendJson(res, 200, accountView(ownAccount(user, params[0])))],
  ['PATCH', /^\/accounts\/([^/]+)$/, updateAccount],
  ['DELETE', /^\/accounts\/([^/]+)$/, deleteAccount],
  ['GET', /^\/envelopes$/, listEnvelopes],
  ['POST', /^\/envelopes$/, createEnvelope],
  ['GET', /^\/envelopes\/([^/]+)$/, ({ user, params, res }) => sendJson(res, 200, envelopeView(ownEnvelope(user, params[0])))],
  ['PATCH', /^\/envelopes\/([^/]+)$/, updateEnvelope],
  ['DELETE', /^\/envelopes\/([^/]+)$/, deleteEnvelope],
  ['GET', /^\/transactions$/, listTransactions],
  ['POST', /^\/transactions$/, createTransaction],
  ['GET', /^\/transactions\/([^/]+)$/, ({ user, params, res }) => sendJson(res, 200, txView(ownTx(user, params[0])))],
  ['DELETE', /^\/transactions\/([^/]+)$/, deleteTransaction],
  ['GET', /^\/summary$/, ({ user, res }) => sendJson(res, 200, totals(user))],
  ['GET', /^\/months\/([^/]*)$/, monthReport],
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

function ownAccount(user, id) {
  const a = mine(accounts, user, id);
  if (!a) throw notFound('account not found');
  return a;
}
function ownEnvelope(user, id) {
  const e = mine(envelopes, user, id);
  if (!e) throw notFound('envelope not found');
  return e;
}
function ownTx(user, id) {
  const t = mine(transactions, user, id);
  if (!t) throw notFound('transaction not found');
  return t;
}

// ---- accounts
function createAccount({ user, raw, res }) {
  const b = parseObject(raw);
  const bad = [];
  if (!validName(b.name)) bad.push('name');
  if (has(b, 'kind') && !KINDS.includes(b.kind)) bad.push('kind');
  if (has(b, 'opening_balance') && !validMoney(b.opening_balance, 0)) bad.push('opening_balance');
  if (bad.length) throw validation(bad);
  const ob = has(b, 'opening_balance') ? b.opening_balance : 0;
  const a = {
    id: newId(), owner_id: user.id, name: b.name, kind: has(b, 'kind') ? b.kind : 'checking', opening_balance: ob, balance: ob,
    created_at: nowIso(), seq: ++seq,
  };
  accounts.set(a.id, a);
  sendJson(res, 201, accountView(a));
}

function updateAccount({ user, params, raw, res }) {
  const a = ownAccount(user, params[0]);
  const b = parseObject(raw);
  const bad = [];
  if (has(b, 'name') && !validName(b.name)) bad.push('name');
  if (has(b, 'kind') && !KINDS.includes(b.kind)) bad.push('kind');
  if (bad.length) throw validation(bad);
  if (has(b, 'name')) a.name = b.name;
  if (has(b, 'kind')) a.kind = b.kind;
  sendJson(res, 200, accountView(a));
}

function deleteAccount({ user, params, res }) {
  const a = ownAccount(user, params[0]);
  for (const t of transactions.values()) if (t.account_id === a.id) throw conflict('a transaction refers to this account');
  if (a.balance !== 0) throw conflict('the account balance is not 0');
  accounts.delete(a.id);
  sendJson(res, 204);
}

// ---- envelopes
function listEnvelopes({ user, q, res }) {
  let all = false;
  if (q.has('include_archived')) {
    const v = q.get('include_archived');
    if (v === 'true') all = true;
    else if (v !== 'false') throw validation(['include_archived']);
  }
  sendJson(res, 200, { items: ownList(envelopes, user).filter((e) => all || !e.archived).map(envelopeView) });
}

function createEnvelope({ user, raw, res }) {
  const b = parseObject(raw);
  const bad = [];
  if (!validName(b.name)) bad.push('name');
  if (has(b, 'monthly_budget') && !validMoney(b.monthly_budget, 0)) bad.push('monthly_budget');
  if (bad.length) throw validation(bad);
  for (const e of envelopes.values()) if (e.owner_id === user.id && sameName(e.name, b.name)) throw conflict('an envelope with this name exists');
  const e = {
    id: newId(), owner_id: user.id, name: b.name, monthly_budget: has(b, 'monthly_budget') ? b.monthly_budget : 0, balance: 0,
    archived: false, created_at: nowIso(), seq: ++seq,
  };
  envelopes.set(e.id, e);
  sendJson(res, 201, envelopeView(e));
}

function updateEnvelope({ user, params, raw, res }) {
  const e = ownEnvelope(user, params[0]);
  const b = parseObject(raw);
  const bad = [];
  if (has(b, 'name') && !validName(b.name)) bad.push('name');
  if (has(b, 'monthly_budget') && !validMoney(b.monthly_budget, 0)) bad.push('monthly_budget');
  if (has(b, 'archived') && typeof b.archived !== 'boolean') bad.push('archived');
  if (bad.length) throw validation(bad);
  if (has(b, 'name'))
    for (const o of envelopes.values())
      if (o.owner_id === user.id && o.id !== e.id && sameName(o.name, b.name)) throw conflict('an envelope with this name exists');
  if (b.archived === true && e.balance !== 0) throw conflict('only an envelope with balance 0 can be archived');
  if (has(b, 'name')) e.name = b.name;
  if (has(b, 'monthly_budget')) e.monthly_budget = b.monthly_budget;
  if (has(b, 'archived')) e.archived = b.archived;
  sendJson(res, 200, envelopeView(e));
}

function deleteEnvelope({ user, params, res }) {
  const e = ownEnvelope(user, params[0]);
  for (const t of transactions.values())
    if (t.envelope_id === e.id || t.from_envelope_id === e.id || t.to_envelope_id === e.id) throw conflict('a transaction refers to this envelope');
  envelopes.delete(e.id);
  sendJson(res, 204);
}

// ---- transactions
function listTransactions({ user, q, res }) {
  const bad = [];
  const pg = parsePaging(q, bad);
  const type = q.has('type') ? q.get('type') : null;
  if (type !== null && !TYPES.includes(type)) bad.push('type');
  const month = q.has('month') ? q.get('month') : null;
  if (month !== null && !validMonth(month)) bad.push('month');
  if (bad.length) throw validation(bad);
  const acc = q.has('account_id') ? q.get('account_id') : null;
  const env = q.has('envelope_id') ? q.get('envelope_id') : null;
  const items = Array.from(transactions.values())
    .filter(
      (t) =>
        t.owner_id === user.id &&
        (type === null || t.type === type) &&
        (acc === null || t.account_id === acc) &&
        (env === null || t.envelope_id === env || t.from_envelope_id === env || t.to_envelope_id === env) &&
        (month === null || t.date.slice(0, 7) === month),
    )
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.seq - b.seq));
  sendJson(res, 200, { items: items.slice(pg.offset, pg.offset + pg.limit).map(txView), total: items.length, limit: pg.limit, offset: pg.offset });
}

function createTransaction({ user, raw, res }) {
  const b = parseObject(raw);
  if (!TYPES.includes(b.type)) throw validation(['type']);
  const bad = [];
  if (!validDate(b.date)) bad.push('date');
  if (!validMoney(b.amount, 1)) bad.push('amount');
  if (has(b, 'memo') && (typeof b.memo !== 'string' || charLen(b.memo) > 200)) bad.push('memo');
  const t = {
    id: newId(), owner_id: user.id, type: b.type, date: b.date, amount: b.amount, account_id: null, envelope_id: null,
    from_envelope_id: null, to_envelope_id: null, memo: has(b, 'memo') ? b.memo : '', created_at: null, seq: 0,
  };
  let account = null, env = null, from = null, to = null;
  if (b.type === 'income' || b.type === 'expense') {
    account = mine(accounts, user, b.account_id);
    if (!account) bad.push('account_id');
    if (b.type === 'income') {
      if (has(b, 'envelope_id') && b.envelope_id !== null) {
        env = mine(envelopes, user, b.envelope_id);
        if (!env) bad.push('envelope_id');
      }
    } else {
      env = mine(envelopes, user, b.envelope_id);
      if (!env) bad.push('envelope_id');
    }
  } else {
    const fromSet = has(b, 'from_envelope_id') && b.from_envelope_id !== null;
    const toSet = has(b, 'to_envelope_id') && b.to_envelope_id !== null;
    if (!fromSet && !toSet) bad.push('from_envelope_id', 'to_envelope_id');
    if (fromSet) {
      from = mine(envelopes, user, b.from_envelope_id);
      if (!from) bad.push('from_envelope_id');
    }
    if (toSet) {
      to = mine(envelopes, user, b.to_envelope_id);
      if (!to) bad.push('to_envelope_id');
    }
    if (fromSet && toSet && b.from_envelope_id === b.to_envelope_id) bad.push('from_envelope_id', 'to_envelope_id');
  }
  if (bad.length) throw validation(bad);
  // 409 conflict: an archived envelope is named.
  for (const e of [env, from, to]) if (e && e.archived) throw conflict('the envelope is archived');
  // 409 insufficient_funds
  const amt = b.amount;
  if (b.type === 'expense' && (account.balance < amt || env.balance < amt)) throw insufficient('not enough money for this expense');
  if (b.type === 'transfer') {
    const source = from ? from.balance : totals(user).unassigned;
    if (source < amt) throw insufficient('not enough money to transfer');
  }
  // apply
  if (b.type === 'income') {
    account.balance += amt;
    if (env) env.balance += amt;
    t.account_id = account.id;
    t.envelope_id = env ? env.id : null;
  } else if (b.type === 'expense') {
    account.balance -= amt;
    env.balance -= amt;
    t.account_id = account.id;
    t.envelope_id = env.id;
  } else {
    if (from) from.balance -= amt;
    if (to) to.balance += amt;
    t.from_envelope_id = from ? from.id : null;
    t.to_envelope_id = to ? to.id : null;
  }
  t.created_at = nowIso();
  t.seq = ++seq;
  transactions.set(t.id, t);
  sendJson(res, 201, txView(t));
}

function deleteTransaction({ user, params, res }) {
  const t = ownTx(user, params[0]);
  const get = (id) => (id ? envelopes.get(id) : null);
  const env = get(t.envelope_id), from = get(t.from_envelope_id), to = get(t.to_envelope_id);
  for (const e of [env, from, to]) if (e && e.archived) throw conflict('the transaction names an archived envelope');
  const account = t.account_id ? accounts.get(t.account_id) : null;
  const amt = t.amount;
  if (t.type === 'income') {
    if (account.balance < amt) throw insufficient('undoing this income would make the account negative');
    if (env) {
      if (env.balance < amt) throw insufficient('undoing this income would make the envelope negative');
    } else if (totals(user).unassigned < amt) throw insufficient('undoing this income would make unassigned money negative');
    account.balance -= amt;
    if (env) env.balance -= amt;
  } else if (t.type === 'expense') {
    account.balance += amt;
    env.balance += amt;
  } else {
    if (to) {
      if (to.balance < amt) throw insufficient('undoing this transfer would make the envelope negative');
    } else if (totals(user).unassigned < amt) throw insufficient('undoing this transfer would make unassigned money negative');
    if (to) to.balance -= amt;
    if (from) from.balance += amt;
  }
  transactions.delete(t.id);
  sendJson(res, 204);
}

// ---- monthly report
function monthReport({ user, params, res }) {
  const month = params[0];
  if (!validMonth(month)) throw validation(['month']);
  let income = 0, spent = 0;
  const rows = new Map();
  const envs = ownList(envelopes, user);
  for (const e of envs) rows.set(e.id, { assigned: 0, spent: 0 });
  for (const t of transactions.values()) {
    if (t.owner_id !== user.id || t.date.slice(0, 7) !== month) continue;
    if (t.type === 'income') {
      income += t.amount;
      if (t.envelope_id && rows.has(t.envelope_id)) rows.get(t.envelope_id).assigned += t.amount;
    } else if (t.type === 'expense') {
      spent += t.amount;
      if (rows.has(t.envelope_id)) rows.get(t.envelope_id).spent += t.amount;
    } else {
      if (t.to_envelope_id && rows.has(t.to_envelope_id)) rows.get(t.to_envelope_id).assigned += t.amount;
      if (t.from_envelope_id && rows.has(t.from_envelope_id)) rows.get(t.from_envelope_id).assigned -= t.amount;
    }
  }
  const list = envs.map((e) => {
    const r = rows.get(e.id);
    return {
      envelope_id: e.id, name: e.name, monthly_budget: e.monthly_budget, assigned: r.assigned, spent: r.spent,
      remaining: e.monthly_budget - r.spent, over_budget: r.spent > e.monthly_budget,
    };
  });
  sendJson(res, 200, { month, income, spent, envelopes: list });
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
server.listen(port, '0.0.0.0', () => console.log('envelope-budget listening on ' + port));
