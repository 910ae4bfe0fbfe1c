'use strict';
// Helpdesk (alternate): tickets, articles, roles and SLA timers on PostgreSQL.
// node:http + pg, CommonJS. All state lives in PostgreSQL; login tokens live in memory.

const http = require('node:http');
const crypto = require('node:crypto');
const { Pool } = require('pg');

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1048576;
const MAX_DEPTH = 32;
const INT4_MAX = 2147483647;
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];
const STATES = ['new', 'open', 'pending', 'solved', 'closed'];
const TRANSITIONS = {
  new: ['open', 'pending', 'solved', 'closed'],
  open: ['pending', 'solved', 'closed'],
  pending: ['open', 'solved', 'closed'],
  solved: ['open', 'closed'],
  closed: [],
};
const SLA_MAX = 31536000;

function dbConfig() {
  if (process.env.DATABASE_URL) return { connectionString: process.env.DATABASE_URL };
  return {
    host: process.env.DB_HOST || '127.0.0.1',
    port: parseInt(process.env.DB_PORT || '5432', 10),
    user: process.env.DB_USERNAME,
    password: process.env.DB_PASSWORD,
    database: process.env.DB_NAME,
  };
}
const pool = new Pool({ ...dbConfig(), max: 10 });
pool.on('error', (err) => console.error('pg pool error', err.message));

// ------------------------------------------------------------------ errors & responses
class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const unauthorized = (m) => new ApiError(401, 'unauthorized', m || 'missing or invalid bearer token');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'your role may not do this');
const notFound = (m) => new ApiError(404, 'not_found', m || 'not found');
function validation(fields, message) {
  return new ApiError(422, 'validation_error', message || 'validation failed', [...new Set(fields)]);
}

function send(res, status, payload) {
  if (status === 204 || payload === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
  res.end(body);
}

function sendError(res, err) {
  const payload = { error: err.code, message: err.message };
  if (err.status === 422) payload.fields = err.fields || [];
  send(res, err.status, payload);
}

// ------------------------------------------------------------------ passwords (scrypt)
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
function scrypt(password, salt) {
  return new Promise((resolve, reject) => {
    crypto.scrypt(password, salt, 32, SCRYPT, (err, key) => (err ? reject(err) : resolve(key)));
  });
}
async function hashPassword(password) {
  const salt = crypto.randomBytes(16);
  const key = await scrypt(Buffer.from(password, 'utf8'), salt);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}
async function verifyPassword(password, stored) {
  const parts = String(stored).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  const key = await scrypt(Buffer.from(password, 'utf8'), salt);
  return key.length === expected.length && crypto.timingSafeEqual(key, expected);
}
let DUMMY_HASH = null;

// ------------------------------------------------------------------ helpers
const TOKENS = new Map(); // bearer token -> user id

function charLen(s) {
  let n = 0;
  for (const _ of s) n++; // code points
  return n;
}
const isStr = (v) => typeof v === 'string';
const nonBlank = (s) => /\S/u.test(s);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);

function validText(v, max) {
  return isStr(v) && nonBlank(v) && charLen(v) <= max && !v.includes('\u0000');
}
function validEmail(v) {
  return isStr(v) && charLen(v) <= 254 && /^[^\s@]+@[^\s@.][^\s@]*\.[^\s@]+$/u.test(v) && !v.includes('\u0000')
    && !/\.$/.test(v);
}
function validPassword(v) {
  return isStr(v) && charLen(v) >= 8 && charLen(v) <= 128;
}

function iso(d) {
  return d == null ? null : new Date(d).toISOString();
}

function userOut(u) {
  return { id: u.id, email: u.email, name: u.name, role: u.role, created_at: iso(u.created_at) };
}

function ticketOut(t, now) {
  const nowMs = now.getTime();
  const frd = t.first_response_due_at ? new Date(t.first_response_due_at) : null;
  const rd = t.resolution_due_at ? new Date(t.resolution_due_at) : null;
  const out = {
    id: t.id,
    title: t.title,
    priority: t.priority,
    state: t.state,
    customer_id: t.customer_id,
    assignee_id: t.assignee_id,
    created_at: iso(t.created_at),
    first_response_at: iso(t.first_response_at),
    first_response_due_at: iso(frd),
    resolution_due_at: iso(rd),
    first_response_breached: frd !== null && t.first_response_at == null && nowMs > frd.getTime(),
    resolution_breached: rd !== null && t.state !== 'solved' && t.state !== 'closed' && nowMs > rd.getTime(),
  };
  if (t.escalation_at !== undefined) out.escalation_at = iso(t.escalation_at);
  return out;
}

function articleOut(a) {
  return {
    id: a.id,
    ticket_id: a.ticket_id,
    author_id: a.author_id,
    body: a.body,
    internal: a.internal,
    created_at: iso(a.created_at),
  };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        tooLarge = true;
        chunks.length = 0;
      } else {
        chunks.push(c);
      }
    });
    req.on('end', () => resolve({ buf: tooLarge ? null : Buffer.concat(chunks), tooLarge }));
    req.on('error', reject);
  });
}

function tooDeep(s) {
  let depth = 0;
  let inStr = false;
  let esc = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (inStr) {
      if (esc) esc = false;
      else if (c === 92) esc = true;
      else if (c === 34) inStr = false;
    } else if (c === 34) inStr = true;
    else if (c === 123 || c === 91) {
      if (++depth > MAX_DEPTH) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

function jsonObject(ctx) {
  if (ctx.body.tooLarge) throw new ApiError(413, 'payload_too_large', 'request body over 1 MiB');
  const text = ctx.body.buf.toString('utf8');
  if (tooDeep(text)) throw validation([], 'JSON body nested more than 32 levels');
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw validation([], 'body is not valid JSON');
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw validation([], 'body must be a JSON object');
  }
  return data;
}

function authenticate(ctx) {
  const h = ctx.req.headers.authorization || '';
  const m = /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(h);
  if (!m) throw unauthorized();
  const user = TOKENS.get(m[1]);
  if (!user) throw unauthorized();
  ctx.user = user;
  return user;
}
const isStaff = (u) => u.role === 'admin' || u.role === 'agent';

function pathId(seg) {
  // Ticket ids are positive integers; anything else names nothing.
  if (!/^[0-9]{1,10}$/.test(seg)) return null;
  const n = parseInt(seg, 10);
  return n >= 1 && n <= INT4_MAX ? n : null;
}

// Query parameters: the first occurrence wins.
function q(ctx, name) {
  return ctx.query.has(name) ? ctx.query.get(name) : undefined;
}
function parseIntParam(v) {
  return /^-?[0-9]+$/.test(v) ? BigInt(v) : null;
}
function pagination(ctx, bad) {
  let limit = 100;
  let offset = 0;
  const l = q(ctx, 'limit');
  if (l !== undefined) {
    const n = /^[0-9]+$/.test(l) ? BigInt(l) : null;
    if (n === null || n < 1n || n > 100n) bad.push('limit');
    else limit = Number(n);
  }
  const o = q(ctx, 'offset');
  if (o !== undefined) {
    const n = /^[0-9]+$/.test(o) ? BigInt(o) : null;
    if (n === null) bad.push('offset');
    else offset = n > 4611686018427387903n ? '4611686018427387903' : n.toString();
  }
  return { limit, offset };
}

async function tx(fn) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try { await client.query('ROLLBACK'); } catch (_) { /* connection gone */ }
    throw err;
  } finally {
    client.release();
  }
}

// ------------------------------------------------------------------ handlers: accounts
async function register(ctx) {
  const b = jsonObject(ctx);
  const bad = [];
  if (!validEmail(b.email)) bad.push('email');
  if (!validText(b.name, 100)) bad.push('name');
  if (!validPassword(b.password)) bad.push('password');
  if (bad.length) throw validation(bad);
  return createUser(b.email.toLowerCase(), b.name, b.password, 'customer');
}

async function createUser(email, name, password, role) {
  const taken = await pool.query('SELECT 1 FROM users WHERE email = $1', [email]);
  if (taken.rowCount) throw new ApiError(409, 'conflict', 'the email is already taken');
  const hash = await hashPassword(password);
  try {
    const r = await pool.query(
      'INSERT INTO users (email, name, role, password_hash, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [email, name, role, hash, new Date()],
    );
    return [201, userOut(r.rows[0])];
  } catch (err) {
    if (err.code === '23505') throw new ApiError(409, 'conflict', 'the email is already taken');
    throw err;
  }
}

async function login(ctx) {
  const b = jsonObject(ctx);
  const bad = [];
  if (!isStr(b.email)) bad.push('email');
  if (!isStr(b.password)) bad.push('password');
  if (bad.length) throw validation(bad);
  let user = null;
  if (!b.email.includes('\u0000')) {
    const r = await pool.query('SELECT * FROM users WHERE email = $1', [b.email.toLowerCase()]);
    user = r.rows[0] || null;
  }
  const ok = await verifyPassword(b.password, user ? user.password_hash : DUMMY_HASH);
  if (!user || !ok) throw unauthorized('wrong email or password');
  const token = crypto.randomBytes(32).toString('base64url');
  const out = userOut(user);
  TOKENS.set(token, out);
  return [200, { token, user: out }];
}

async function me(ctx) {
  const u = authenticate(ctx);
  return [200, u];
}

async function listUsers(ctx) {
  const u = authenticate(ctx);
  if (u.role !== 'admin') throw forbidden();
  const bad = [];
  const where = [];
  const params = [];
  const role = q(ctx, 'role');
  if (role !== undefined) {
    if (!['admin', 'agent', 'customer'].includes(role)) bad.push('role');
    else { params.push(role); where.push(`role = $${params.length}`); }
  }
  const email = q(ctx, 'email');
  if (email !== undefined) {
    if (email.includes('\u0000')) where.push('FALSE');
    else { params.push(email.toLowerCase()); where.push(`email = $${params.length}`); }
  }
  const { limit, offset } = pagination(ctx, bad);
  if (bad.length) throw validation(bad);
  const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const total = await pool.query(`SELECT count(*)::int AS n FROM users ${w}`, params);
  params.push(limit, offset);
  const r = await pool.query(
    `SELECT * FROM users ${w} ORDER BY id LIMIT $${params.length - 1} OFFSET $${params.length}`, params,
  );
  return [200, { items: r.rows.map(userOut), total: total.rows[0].n }];
}

async function adminCreateUser(ctx) {
  const u = authenticate(ctx);
  if (u.role !== 'admin') throw forbidden();
  const b = jsonObject(ctx);
  const bad = [];
  if (!validEmail(b.email)) bad.push('email');
  if (!validText(b.name, 100)) bad.push('name');
  if (!validPassword(b.password)) bad.push('password');
  if (b.role !== 'agent' && b.role !== 'customer') bad.push('role');
  if (bad.length) throw validation(bad);
  return createUser(b.email.toLowerCase(), b.name, b.password, b.role);
}

// ------------------------------------------------------------------ handlers: SLA
async function listSla(ctx) {
  const u = authenticate(ctx);
  if (!isStaff(u)) throw forbidden();
  const r = await pool.query(
    `SELECT priority, first_response_s, resolution_s FROM sla_policies
     ORDER BY array_position(ARRAY['low','normal','high','urgent']::text[], priority::text)`,
  );
  return [200, { items: r.rows }];
}

async function putSla(ctx, priority) {
  const u = authenticate(ctx);
  if (!PRIORITIES.includes(priority)) throw notFound('unknown priority');
  if (u.role !== 'admin') throw forbidden();
  const b = jsonObject(ctx);
  const bad = [];
  for (const k of ['first_response_s', 'resolution_s']) {
    if (!isInt(b[k]) || b[k] < 1 || b[k] > SLA_MAX) bad.push(k);
  }
  if (bad.length) throw validation(bad);
  const r = await pool.query(
    `INSERT INTO sla_policies (priority, first_response_s, resolution_s) VALUES ($1, $2, $3)
     ON CONFLICT (priority) DO UPDATE SET first_response_s = EXCLUDED.first_response_s,
       resolution_s = EXCLUDED.resolution_s
     RETURNING priority, first_response_s, resolution_s`,
    [priority, b.first_response_s, b.resolution_s],
  );
  return [200, r.rows[0]];
}

async function deleteSla(ctx, priority) {
  const u = authenticate(ctx);
  if (!PRIORITIES.includes(priority)) throw notFound('unknown priority');
  const exists = await pool.query('SELECT 1 FROM sla_policies WHERE priority = $1', [priority]);
  if (!exists.rowCount) throw notFound('no policy for this priority');
  if (u.role !== 'admin') throw forbidden();
  const r = await pool.query('DELETE FROM sla_policies WHERE priority = $1', [priority]);
  if (!r.rowCount) throw notFound('no policy for this priority');
  return [204];
}

// ------------------------------------------------------------------ handlers: tickets
async function policyDue(client, priority, createdAt) {
  const r = await client.query('SELECT first_response_s, resolution_s FROM sla_policies WHERE priority = $1', [priority]);
  if (!r.rowCount) return [null, null];
  const base = createdAt.getTime();
  return [new Date(base + r.rows[0].first_response_s * 1000), new Date(base + r.rows[0].resolution_s * 1000)];
}

async function createTicket(ctx) {
  const u = authenticate(ctx);
  if (u.role !== 'customer') throw forbidden('only customers open tickets');
  const b = jsonObject(ctx);
  const bad = [];
  if (!validText(b.title, 200)) bad.push('title');
  if (!validText(b.body, 10000)) bad.push('body');
  const priority = has(b, 'priority') ? b.priority : 'normal';
  if (!PRIORITIES.includes(priority)) bad.push('priority');
  if (bad.length) throw validation(bad);
  const row = await tx(async (client) => {
    const now = new Date();
    const [frd, rd] = await policyDue(client, priority, now);
    const t = await client.query(
      `INSERT INTO tickets (title, priority, state, customer_id, assignee_id, created_at,
         first_response_at, first_response_due_at, resolution_due_at)
       VALUES ($1, $2, 'new', $3, NULL, $4, NULL, $5, $6) RETURNING *`,
      [b.title, priority, u.id, now, frd, rd],
    );
    await client.query(
      'INSERT INTO articles (ticket_id, author_id, body, internal, created_at) VALUES ($1, $2, $3, FALSE, $4)',
      [t.rows[0].id, u.id, b.body, now],
    );
    return t.rows[0];
  });
  return [201, ticketOut(row, new Date())];
}

async function listTickets(ctx) {
  const u = authenticate(ctx);
  const now = new Date();
  const bad = [];
  const where = [];
  const params = [];
  const add = (sql, v) => { params.push(v); where.push(sql.replace('?', `$${params.length}`)); };
  if (u.role === 'customer') add('customer_id = ?', u.id);
  const state = q(ctx, 'state');
  if (state !== undefined) {
    if (!STATES.includes(state)) bad.push('state');
    else add('state = ?', state);
  }
  const priority = q(ctx, 'priority');
  if (priority !== undefined) {
    if (!PRIORITIES.includes(priority)) bad.push('priority');
    else add('priority = ?', priority);
  }
  const cid = q(ctx, 'customer_id');
  if (cid !== undefined) {
    const n = parseIntParam(cid);
    if (n === null) bad.push('customer_id');
    else if (n < 1n || n > BigInt(INT4_MAX)) where.push('FALSE');
    else add('customer_id = ?', Number(n));
  }
  const aid = q(ctx, 'assignee_id');
  if (aid !== undefined) {
    if (aid === 'none') where.push('assignee_id IS NULL');
    else {
      const n = parseIntParam(aid);
      if (n === null) bad.push('assignee_id');
      else if (n < 1n || n > BigInt(INT4_MAX)) where.push('FALSE');
      else add('assignee_id = ?', Number(n));
    }
  }
  const breached = q(ctx, 'breached');
  if (breached !== undefined) {
    if (breached !== 'true' && breached !== 'false') bad.push('breached');
    else {
      params.push(now);
      const p = `$${params.length}`;
      const cond = `((first_response_due_at IS NOT NULL AND first_response_at IS NULL AND ${p} > first_response_due_at)
        OR (resolution_due_at IS NOT NULL AND state NOT IN ('solved','closed') AND ${p} > resolution_due_at))`;
      where.push(breached === 'true' ? cond : `NOT ${cond}`);
    }
  }
  const { limit, offset } = pagination(ctx, bad);
  if (bad.length) throw validation(bad);
  const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const total = await pool.query(`SELECT count(*)::int AS n FROM tickets ${w}`, params);
  params.push(limit, offset);
  const r = await pool.query(
    `SELECT * FROM tickets ${w} ORDER BY id LIMIT $${params.length - 1} OFFSET $${params.length}`, params,
  );
  return [200, { items: r.rows.map((t) => ticketOut(t, now)), total: total.rows[0].n }];
}

async function visibleTicket(client, u, id, lock) {
  if (id === null) throw notFound('ticket not found');
  const r = await client.query(`SELECT * FROM tickets WHERE id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  const t = r.rows[0];
  if (!t || (u.role === 'customer' && t.customer_id !== u.id)) throw notFound('ticket not found');
  return t;
}

async function getTicket(ctx, seg) {
  const u = authenticate(ctx);
  const t = await visibleTicket(pool, u, pathId(seg), false);
  return [200, ticketOut(t, new Date())];
}

async function patchTicket(ctx, seg) {
  const u = authenticate(ctx);
  const id = pathId(seg);
  const row = await tx(async (client) => {
    const t = await visibleTicket(client, u, id, true);
    const b = jsonObject(ctx);
    if (u.role === 'customer' && (has(b, 'priority') || has(b, 'state') || has(b, 'assignee_id'))) {
      throw forbidden('customers may change only the title');
    }
    const bad = [];
    if (has(b, 'title') && !validText(b.title, 200)) bad.push('title');
    if (has(b, 'priority') && !PRIORITIES.includes(b.priority)) bad.push('priority');
    if (has(b, 'state') && !STATES.includes(b.state)) bad.push('state');
    if (has(b, 'assignee_id') && b.assignee_id !== null) {
      let ok = isInt(b.assignee_id) && b.assignee_id >= 1 && b.assignee_id <= INT4_MAX;
      if (ok) {
        const a = await client.query("SELECT 1 FROM users WHERE id = $1 AND role IN ('agent','admin')", [b.assignee_id]);
        ok = a.rowCount > 0;
      }
      if (!ok) bad.push('assignee_id');
    }
    if (bad.length) throw validation(bad);
    if (has(b, 'state') && b.state !== t.state && !TRANSITIONS[t.state].includes(b.state)) {
      throw new ApiError(409, 'invalid_transition', `a ticket cannot go from ${t.state} to ${b.state}`);
    }
    const title = has(b, 'title') ? b.title : t.title;
    const state = has(b, 'state') ? b.state : t.state;
    const assignee = has(b, 'assignee_id') ? b.assignee_id : t.assignee_id;
    let priority = t.priority;
    let frd = t.first_response_due_at;
    let rd = t.resolution_due_at;
    if (has(b, 'priority') && b.priority !== t.priority) {
      priority = b.priority;
      [frd, rd] = await policyDue(client, priority, new Date(t.created_at));
    }
    const r = await client.query(
      `UPDATE tickets SET title = $2, priority = $3, state = $4, assignee_id = $5,
         first_response_due_at = $6, resolution_due_at = $7 WHERE id = $1 RETURNING *`,
      [t.id, title, priority, state, assignee, frd, rd],
    );
    return r.rows[0];
  });
  return [200, ticketOut(row, new Date())];
}

async function listArticles(ctx, seg) {
  const u = authenticate(ctx);
  const t = await visibleTicket(pool, u, pathId(seg), false);
  const r = await pool.query(
    `SELECT * FROM articles WHERE ticket_id = $1${u.role === 'customer' ? ' AND NOT internal' : ''} ORDER BY id`,
    [t.id],
  );
  return [200, { items: r.rows.map(articleOut) }];
}

async function createArticle(ctx, seg) {
  const u = authenticate(ctx);
  const id = pathId(seg);
  const row = await tx(async (client) => {
    const t = await visibleTicket(client, u, id, true);
    const b = jsonObject(ctx);
    if (u.role === 'customer' && b.internal === true) {
      throw forbidden('customers may write only public articles');
    }
    const bad = [];
    if (!validText(b.body, 10000)) bad.push('body');
    if (has(b, 'internal') && typeof b.internal !== 'boolean') bad.push('internal');
    if (bad.length) throw validation(bad);
    if (t.state === 'closed') throw new ApiError(409, 'ticket_closed', 'the ticket is closed');
    const internal = b.internal === true;
    const now = new Date();
    const a = await client.query(
      'INSERT INTO articles (ticket_id, author_id, body, internal, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING *',
      [t.id, u.id, b.body, internal, now],
    );
    let state = t.state;
    let fra = t.first_response_at;
    if (!internal) {
      if (isStaff(u)) {
        if (fra == null) fra = now;
        if (state === 'new') state = 'open';
      } else if (state === 'pending' || state === 'solved') {
        state = 'open';
      }
    }
    if (state !== t.state || fra !== t.first_response_at) {
      await client.query('UPDATE tickets SET state = $2, first_response_at = $3 WHERE id = $1', [t.id, state, fra]);
    }
    return a.rows[0];
  });
  return [201, articleOut(row)];
}

async function escalations(ctx) {
  const u = authenticate(ctx);
  if (!isStaff(u)) throw forbidden();
  const now = new Date();
  const bad = [];
  const where = [];
  const params = [];
  const cid = q(ctx, 'customer_id');
  if (cid !== undefined) {
    const n = parseIntParam(cid);
    if (n === null) bad.push('customer_id');
    else if (n < 1n || n > BigInt(INT4_MAX)) where.push('FALSE');
    else { params.push(Number(n)); where.push(`customer_id = $${params.length}`); }
  }
  const { limit, offset } = pagination(ctx, bad);
  if (bad.length) throw validation(bad);
  const esc = `LEAST(CASE WHEN first_response_at IS NULL THEN first_response_due_at END,
                     CASE WHEN state NOT IN ('solved','closed') THEN resolution_due_at END)`;
  where.push(`${esc} IS NOT NULL`);
  const w = `WHERE ${where.join(' AND ')}`;
  const total = await pool.query(`SELECT count(*)::int AS n FROM tickets ${w}`, params);
  params.push(limit, offset);
  const r = await pool.query(
    `SELECT *, ${esc} AS escalation_at FROM tickets ${w}
     ORDER BY escalation_at, id LIMIT $${params.length - 1} OFFSET $${params.length}`, params,
  );
  return [200, { items: r.rows.map((t) => ticketOut(t, now)), total: total.rows[0].n }];
}

// ------------------------------------------------------------------ routing
const ROUTES = [
  { path: ['health'], methods: { GET: async () => [200, { status: 'ok' }] } },
  { path: ['api', 'auth', 'register'], methods: { POST: register } },
  { path: ['api', 'auth', 'login'], methods: { POST: login } },
  { path: ['api', 'me'], methods: { GET: me } },
  { path: ['api', 'users'], methods: { GET: listUsers, POST: adminCreateUser } },
  { path: ['api', 'sla'], methods: { GET: listSla } },
  { path: ['api', 'sla', ':p'], methods: { PUT: putSla, DELETE: deleteSla } },
  { path: ['api', 'tickets'], methods: { GET: listTickets, POST: createTicket } },
  { path: ['api', 'tickets', ':id'], methods: { GET: getTicket, PATCH: patchTicket } },
  { path: ['api', 'tickets', ':id', 'articles'], methods: { GET: listArticles, POST: createArticle } },
  { path: ['api', 'escalations'], methods: { GET: escalations } },
];

function decodeSeg(s) {
  try {
    return decodeURIComponent(s);
  } catch (_) {
    return s;
  }
}

function match(segments) {
  for (const route of ROUTES) {
    if (route.path.length !== segments.length) continue;
    const args = [];
    let ok = true;
    for (let i = 0; i < segments.length; i++) {
      const want = route.path[i];
      if (want.startsWith(':')) {
        if (segments[i] === '') { ok = false; break; }
        args.push(segments[i]);
      } else if (want !== segments[i]) { ok = false; break; }
    }
    if (ok) return { route, args };
  }
  return null;
}

async function handle(req, res) {
  let url;
  try {
    url = new URL(req.url, 'http://localhost');
  } catch (_) {
    url = null;
  }
  const rawPath = (req.url || '/').split('?')[0];
  const segments = rawPath.split('/').slice(1).map(decodeSeg);
  const found = match(segments);
  const body = await readBody(req);
  if (!found) throw notFound('no such path');
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const handler = found.route.methods[method];
  if (!handler) {
    res.setHeader('Allow', Object.keys(found.route.methods).join(', '));
    throw new ApiError(405, 'method_not_allowed', 'method not allowed on this path');
  }
  const ctx = { req, query: url ? url.searchParams : new URLSearchParams(), body, user: null };
  const [status, payload] = await handler(ctx, ...found.args);
  send(res, status, payload);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    if (err instanceof ApiError) {
      sendError(res, err);
    } else {
      console.error(err);
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'unexpected failure' });
      else res.end();
    }
  });
});
server.on('clientError', (err, socket) => {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
});

// ------------------------------------------------------------------ start-up
const SCHEMA = `
CREATE TABLE IF NOT EXISTS users (
  id SERIAL PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('admin', 'agent', 'customer')),
  password_hash TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sla_policies (
  priority TEXT PRIMARY KEY CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  first_response_s INTEGER NOT NULL CHECK (first_response_s BETWEEN 1 AND 31536000),
  resolution_s INTEGER NOT NULL CHECK (resolution_s BETWEEN 1 AND 31536000)
);
CREATE TABLE IF NOT EXISTS tickets (
  id SERIAL PRIMARY KEY,
  title TEXT NOT NULL,
  priority TEXT NOT NULL CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
  state TEXT NOT NULL CHECK (state IN ('new', 'open', 'pending', 'solved', 'closed')),
  customer_id INTEGER NOT NULL REFERENCES users(id),
  assignee_id INTEGER REFERENCES users(id),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  first_response_at TIMESTAMPTZ,
  first_response_due_at TIMESTAMPTZ,
  resolution_due_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS tickets_customer_idx ON tickets (customer_id);
CREATE TABLE IF NOT EXISTS articles (
  id SERIAL PRIMARY KEY,
  ticket_id INTEGER NOT NULL REFERENCES tickets(id),
  author_id INTEGER NOT NULL REFERENCES users(id),
  body TEXT NOT NULL,
  internal BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS articles_ticket_idx ON articles (ticket_id);
`;

async function init() {
  for (let attempt = 0; ; attempt++) {
    try {
      await pool.query('SELECT 1');
      break;
    } catch (err) {
      if (attempt >= 60) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock(724411)');
    await client.query(SCHEMA);
    const email = (process.env.ADMIN_EMAIL || 'admin@helpdesk.test').toLowerCase();
    const exists = await client.query('SELECT 1 FROM users WHERE email = $1', [email]);
    if (!exists.rowCount) {
      const hash = await hashPassword(process.env.ADMIN_PASSWORD || 'admin-password');
      await client.query(
        `INSERT INTO users (email, name, role, password_hash, created_at) VALUES ($1, 'Administrator', 'admin', $2, $3)
         ON CONFLICT (email) DO NOTHING`,
        [email, hash, new Date()],
      );
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(724411)').catch(() => {});
    client.release();
  }
  DUMMY_HASH = await hashPassword(crypto.randomBytes(16).toString('hex'));
}

init().then(() => {
  server.listen(PORT, '0.0.0.0', () => console.log(`helpdesk listening on ${PORT}`));
}).catch((err) => {
  console.error('start-up failed', err);
  process.exit(1);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    server.close();
    pool.end().finally(() => process.exit(0));
  });
}
