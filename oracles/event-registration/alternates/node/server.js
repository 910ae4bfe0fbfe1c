'use strict';
// Event registration: JSON API + HTML page, state in PostgreSQL.
// Node.js standard library only (see pg.js for the database client).

const http = require('http');
const fs = require('fs');
const path = require('path');
const { Pool, PgError, configFromEnv } = require('./pg');

const PORT = Number(process.env.PORT) || 8000;
const POOL_SIZE = Number(process.env.DB_POOL_SIZE) || 5;
const MAX_BODY = 1024 * 1024;
const INT4_MAX = 2147483647;

const STATIC = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'application/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};
const staticFiles = {};
for (const [route, [file, type]] of Object.entries(STATIC)) {
  staticFiles[route] = { body: fs.readFileSync(path.join(__dirname, 'static', file)), type };
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  id serial PRIMARY KEY,
  title text NOT NULL,
  starts_at timestamptz NOT NULL,
  capacity integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS registrations (
  id serial PRIMARY KEY,
  event_id integer NOT NULL REFERENCES events(id),
  name text NOT NULL,
  email text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT registrations_event_id_email_key UNIQUE (event_id, email)
);
CREATE INDEX IF NOT EXISTS events_starts_at_id_idx ON events (starts_at, id);
`;

// Timestamps are formatted by PostgreSQL in UTC; the fraction is trimmed below.
const TS = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;
const EVENT_COLS = `e.id, e.title, ${TS('e.starts_at')} AS starts_at, e.capacity,
  e.capacity - (SELECT count(*) FROM registrations r WHERE r.event_id = e.id) AS seats_left,
  ${TS('e.created_at')} AS created_at`;
const REG_COLS = `id, event_id, name, email, ${TS('created_at')} AS created_at`;

let pool = null;
let ready = false;

// ---------------------------------------------------------------- helpers

class HttpError extends Error {
  constructor(status, error, message, fields) {
    super(message);
    this.status = status;
    this.error = error;
    this.fields = fields;
  }
}

const notFound = (what) => new HttpError(404, 'not_found', `${what} not found.`);

/** "2030-05-01T18:00:00.000000" -> "2030-05-01T18:00:00Z" (fraction kept if non-zero). */
function isoUtc(s, keepMillis) {
  const [main, frac = ''] = s.split('.');
  if (keepMillis) return `${main}.${frac.padEnd(6, '0').slice(0, 3)}Z`;
  const f = frac.replace(/0+$/, '');
  if (!f) return `${main}Z`;
  return `${main}.${f.length <= 3 ? f.padEnd(3, '0') : f.padEnd(6, '0')}Z`;
}

function eventOut(row) {
  return {
    id: row.id,
    title: row.title,
    starts_at: isoUtc(row.starts_at, false),
    capacity: row.capacity,
    seats_left: Math.max(0, Number(row.seats_left)),
    created_at: isoUtc(row.created_at, true),
  };
}

function regOut(row) {
  return {
    id: row.id,
    event_id: row.event_id,
    name: row.name,
    email: row.email,
    created_at: isoUtc(row.created_at, true),
  };
}

function send(res, status, body) {
  if (status === 204 || body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': data.length,
    'Cache-Control': 'no-store',
  });
  res.end(data);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) reject(new HttpError(413, 'validation_error', 'Request body too large.', ['body']));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', reject);
  });
}

/** Parses the request body; anything but a JSON object is a 422 on "body". */
async function jsonObject(req) {
  const text = await readBody(req);
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(422, 'validation_error', 'The request body must be a JSON object.', ['body']);
  }
  if (nestingDepth(value) > 32) {
    throw new HttpError(422, 'validation_error', 'The request body nests deeper than 32 levels.', ['body']);
  }
  return value;
}

/** How deeply objects and arrays nest (iterative; spec: deeper than 32 levels gets 422). */
function nestingDepth(value) {
  let deepest = 0;
  const stack = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop();
    if (node !== null && typeof node === 'object') {
      deepest = Math.max(deepest, depth);
      for (const child of Object.values(node)) stack.push([child, depth + 1]);
    }
  }
  return deepest;
}

/** Path id: a positive integer that fits an integer column, else the resource cannot exist. */
function parseId(s) {
  if (!/^[0-9]{1,10}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= INT4_MAX ? n : null;
}

const charLength = (s) => [...s].length;
const nonBlank = (s) => /\S/u.test(s);
// PostgreSQL text cannot hold U+0000, so such a string cannot be stored as sent.
const storable = (s) => !s.includes('\u0000');

function validText(v, max) {
  return typeof v === 'string' && nonBlank(v) && charLength(v) <= max && storable(v);
}

const EMAIL_RE = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/u;

function validEmail(v) {
  return typeof v === 'string' && charLength(v) <= 254 && EMAIL_RE.test(v) && storable(v);
}

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const ISO_RE = new RegExp(
  '^(\\d{4})-(\\d{2})-(\\d{2})[Tt ](\\d{2}):(\\d{2})(?::(\\d{2})(?:[.,](\\d+))?)?' +
  '(?:([Zz])|([+-])(\\d{2})(?::?(\\d{2}))?)?$');

/**
 * Parses an ISO 8601 date-time (a date alone is not a date-time). Without an offset it
 * is UTC. Returns the instant in UTC as "YYYY-MM-DDTHH:MM:SS.ffffff+00:00", or null.
 */
function parseStartsAt(v) {
  if (typeof v !== 'string') return null;
  const m = ISO_RE.exec(v);
  if (!m) return null;
  const [year, month, day, hour, minute] = m.slice(1, 6).map(Number);
  const second = m[6] ? Number(m[6]) : 0;
  const micros = m[7] ? Number(m[7].slice(0, 6).padEnd(6, '0')) : 0;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (year < 1 || month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && leap ? 29 : DAYS[month - 1])) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (m[9]) {
    const oh = Number(m[10]);
    const om = m[11] ? Number(m[11]) : 0;
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute - offset, second, 0);
  const y = d.getUTCFullYear();
  if (y < 1 || y > 9999) return null;
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(y, 4)}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}T` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}` +
    `.${p(micros, 6)}+00:00`;
}

function validationError(fields) {
  return new HttpError(422, 'validation_error',
    `Invalid or missing field${fields.length > 1 ? 's' : ''}: ${fields.join(', ')}.`, fields);
}

// ---------------------------------------------------------------- handlers

async function createEvent(req) {
  const body = await jsonObject(req);
  const bad = [];
  if (!validText(body.title, 120)) bad.push('title');
  const startsAt = parseStartsAt(body.starts_at);
  if (startsAt === null) bad.push('starts_at');
  const cap = body.capacity;
  if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 1 || cap > 1000) bad.push('capacity');
  if (bad.length) throw validationError(bad);
  const { rows } = await pool.query(
    `WITH e AS (
       INSERT INTO events (title, starts_at, capacity) VALUES ($1, $2::timestamptz, $3::integer)
       RETURNING *)
     SELECT e.id, e.title, ${TS('e.starts_at')} AS starts_at, e.capacity,
       e.capacity AS seats_left, ${TS('e.created_at')} AS created_at FROM e`,
    [body.title, startsAt, cap]);
  return [201, eventOut(rows[0])];
}

async function listEvents() {
  const { rows } = await pool.query(
    `SELECT ${EVENT_COLS} FROM events e ORDER BY e.starts_at, e.id`);
  return [200, { items: rows.map(eventOut) }];
}

async function getEvent(id) {
  if (id === null) throw notFound('Event');
  const { rows } = await pool.query(`SELECT ${EVENT_COLS} FROM events e WHERE e.id = $1`, [id]);
  if (!rows.length) throw notFound('Event');
  return [200, eventOut(rows[0])];
}

async function listRegistrations(id) {
  if (id === null) throw notFound('Event');
  const ev = await pool.query('SELECT id FROM events WHERE id = $1', [id]);
  if (!ev.rows.length) throw notFound('Event');
  const { rows } = await pool.query(
    `SELECT ${REG_COLS} FROM registrations WHERE event_id = $1 ORDER BY id`, [id]);
  return [200, { items: rows.map(regOut) }];
}

async function register(req, id) {
  // Validation first: an invalid body is 422 whatever the event's state.
  const body = await jsonObject(req);
  const bad = [];
  if (!validText(body.name, 100)) bad.push('name');
  if (!validEmail(body.email)) bad.push('email');
  if (bad.length) throw validationError(bad);
  if (id === null) throw notFound('Event');
  const email = body.email.toLowerCase();
  try {
    return await pool.transaction(async (c) => {
      // Locking the event row serialises registrations for one event: no overbooking.
      const ev = await c.query('SELECT capacity FROM events WHERE id = $1 FOR UPDATE', [id]);
      if (!ev.rows.length) throw notFound('Event');
      // A duplicate wins over a full event, so it is checked first.
      const dup = await c.query(
        'SELECT 1 FROM registrations WHERE event_id = $1 AND email = $2', [id, email]);
      if (dup.rows.length) throw alreadyRegistered();
      const taken = await c.query('SELECT count(*) AS n FROM registrations WHERE event_id = $1', [id]);
      if (Number(taken.rows[0].n) >= ev.rows[0].capacity) {
        throw new HttpError(409, 'event_full', 'This event is full: no seats left.');
      }
      const { rows } = await c.query(
        `INSERT INTO registrations (event_id, name, email) VALUES ($1, $2, $3)
         RETURNING ${REG_COLS}`, [id, body.name, email]);
      return [201, regOut(rows[0])];
    });
  } catch (e) {
    if (e instanceof PgError && e.code === '23505') throw alreadyRegistered();
    throw e;
  }
}

function alreadyRegistered() {
  return new HttpError(409, 'already_registered', 'This email is already registered for this event.');
}

async function cancelRegistration(id) {
  if (id === null) throw notFound('Registration');
  const { rows } = await pool.query('DELETE FROM registrations WHERE id = $1 RETURNING id', [id]);
  if (!rows.length) throw notFound('Registration');
  return [204];
}

// ---------------------------------------------------------------- routing

function methodNotAllowed(allowed) {
  const e = new HttpError(405, 'method_not_allowed', `Method not allowed; use ${allowed.join(' or ')}.`);
  e.allow = allowed.join(', ');
  return e;
}

async function route(req, pathname) {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const p = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  let m;
  if (p === '/health') {
    if (method !== 'GET') throw methodNotAllowed(['GET']);
    return [200, { status: 'ok' }];
  }
  if (p === '/api/events') {
    if (method === 'GET') return listEvents();
    if (method === 'POST') return createEvent(req);
    throw methodNotAllowed(['GET', 'POST']);
  }
  if ((m = /^\/api\/events\/([^/]+)$/.exec(p))) {
    if (method === 'GET') return getEvent(parseId(m[1]));
    throw methodNotAllowed(['GET']);
  }
  if ((m = /^\/api\/events\/([^/]+)\/registrations$/.exec(p))) {
    if (method === 'GET') return listRegistrations(parseId(m[1]));
    if (method === 'POST') return register(req, parseId(m[1]));
    throw methodNotAllowed(['GET', 'POST']);
  }
  if ((m = /^\/api\/registrations\/([^/]+)$/.exec(p))) {
    if (method === 'DELETE') return cancelRegistration(parseId(m[1]));
    throw methodNotAllowed(['DELETE']);
  }
  throw new HttpError(404, 'not_found', 'No such resource.');
}

async function handle(req, res) {
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch (e) {
    pathname = req.url;
  }
  const file = staticFiles[pathname];
  if (file && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length, 'Cache-Control': 'no-cache' });
    res.end(file.body);
    return;
  }
  try {
    if (!ready && pathname !== '/health') {
      throw new HttpError(503, 'unavailable', 'The service is starting.');
    }
    if (!ready) return send(res, 503, { status: 'starting' });
    const [status, body] = await route(req, pathname);
    send(res, status, body);
  } catch (e) {
    if (e instanceof HttpError) {
      const out = { error: e.error, message: e.message };
      if (e.fields) out.fields = e.fields;
      if (e.allow) res.setHeader('Allow', e.allow);
      send(res, e.status, out);
    } else {
      console.error(new Date().toISOString(), req.method, req.url, e);
      send(res, 500, { error: 'internal_error', message: 'Internal server error.' });
    }
  }
}

// ---------------------------------------------------------------- start-up

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function initDatabase() {
  const cfg = configFromEnv();
  pool = new Pool(cfg, POOL_SIZE);
  for (let attempt = 1; ; attempt++) {
    try {
      const c = await pool.acquire();
      try {
        // The advisory lock keeps two instances starting together from racing on DDL.
        await c.simple(`SELECT pg_advisory_lock(727001); ${SCHEMA} SELECT pg_advisory_unlock(727001);`);
      } finally {
        pool.release(c, c.closed);
      }
      return;
    } catch (e) {
      if (attempt === 1 || attempt % 10 === 0) {
        console.error(`waiting for PostgreSQL at ${cfg.host}:${cfg.port}/${cfg.database}: ${e.message}`);
      }
      await sleep(500);
    }
  }
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    console.error(e);
    if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'Internal server error.' });
  });
});

server.listen(PORT, '0.0.0.0', () => {
  console.log(`event-registration listening on 0.0.0.0:${PORT}`);
});

initDatabase().then(() => {
  ready = true;
  console.log('database ready');
});

function shutdown() {
  server.close();
  if (pool) pool.end();
  setTimeout(() => process.exit(0), 200).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
