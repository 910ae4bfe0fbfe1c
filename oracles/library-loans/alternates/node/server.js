'use strict';
// Library loans: circulation with loans, renewals, holds and fines (node:http + PostgreSQL + mailer).

const http = require('node:http');
const https = require('node:https');
const crypto = require('node:crypto');
const { promisify } = require('node:util');
const pg = require('pg');

const scryptAsync = promisify(crypto.scrypt);

pg.types.setTypeParser(1082, (v) => v); // date columns stay 'YYYY-MM-DD' text

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1048576;
const MAX_DEPTH = 32;
const INT32_MAX = 2147483647;
const MAIL_TIMEOUT_MS = 5000;
const CATEGORIES = {
  adult: { maxLoans: 5, loanDays: 21 },
  child: { maxLoans: 2, loanDays: 14 },
};
const MAX_RENEWALS = 2;
const BLOCK_ABOVE = 500;

// ------------------------------------------------------------------------------------ errors

class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

function invalid(fields, message) {
  const list = [...new Set(fields)].sort();
  return new ApiError(422, 'validation_error', message || `invalid or missing fields: ${list.join(', ')}`, list);
}
const notFound = (what) => new ApiError(404, 'not_found', `${what} not found`);
const conflict = (code, message) => new ApiError(409, code, message);

// ------------------------------------------------------------------------------------ JSON

class JsonFloat {
  constructor(value) { this.value = value; }
}
class DepthError extends Error {}

const NUM_RE = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

// A strict JSON parser that stops at MAX_DEPTH, keeps numbers with a fraction or exponent apart
// (JsonFloat, never an integer) and keeps big integers exact (BigInt).
function parseJson(text) {
  let i = 0;
  const n = text.length;
  const fail = () => { throw new SyntaxError(`invalid JSON at ${i}`); };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++; else break;
    }
  };
  const str = () => {
    i++;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail();
      const c = text.charCodeAt(i);
      if (c === 34) { out += text.slice(start, i); i++; return out; }
      if (c === 92) {
        out += text.slice(start, i);
        const e = text[i + 1];
        i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const h = text.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) fail();
            out += String.fromCharCode(parseInt(h, 16));
            i += 4;
            break;
          }
          default: fail();
        }
        start = i;
        continue;
      }
      if (c < 0x20) fail();
      i++;
    }
  };
  const value = (depth) => {
    ws();
    if (i >= n) fail();
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth + 1 > MAX_DEPTH) throw new DepthError('too deep');
      i++;
      ws();
      if (c === '{') {
        const obj = Object.create(null);
        if (text[i] === '}') { i++; return obj; }
        for (;;) {
          ws();
          if (text[i] !== '"') fail();
          const key = str();
          ws();
          if (text[i] !== ':') fail();
          i++;
          obj[key] = value(depth + 1);
          ws();
          if (text[i] === ',') { i++; continue; }
          if (text[i] === '}') { i++; return obj; }
          fail();
        }
      }
      const arr = [];
      if (text[i] === ']') { i++; return arr; }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i] === ']') { i++; return arr; }
        fail();
      }
    }
    if (c === '"') return str();
    if (text.startsWith('true', i)) { i += 4; return true; }
    if (text.startsWith('false', i)) { i += 5; return false; }
    if (text.startsWith('null', i)) { i += 4; return null; }
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(text);
    if (!m) fail();
    i = NUM_RE.lastIndex;
    if (m[1] || m[2]) return new JsonFloat(Number(m[0]));
    const num = Number(m[0]);
    return Number.isSafeInteger(num) ? num : BigInt(m[0]);
  };
  const result = value(0);
  ws();
  if (i !== n) fail();
  return result;
}

function readObject(ctx) {
  if (ctx.bodyTooLarge) throw new ApiError(413, 'payload_too_large', 'request body larger than 1 MiB');
  let data;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(ctx.body);
    data = parseJson(text);
  } catch (err) {
    if (err instanceof DepthError) throw invalid(['body'], `the body is nested more than ${MAX_DEPTH} levels deep`);
    throw invalid(['body'], 'the body is not a JSON object');
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data) || data instanceof JsonFloat) {
    throw invalid(['body'], 'the body is not a JSON object');
  }
  return data;
}

// ------------------------------------------------------------------------------------ validation

const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
const isInt = (v) => (typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'bigint';
const isStr = (v) => typeof v === 'string';
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE_RE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const BLANK_RE = /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]*$/;
const CARD_RE = /^[0-9]{8,14}$/;
const BARCODE_RE = /^[A-Z0-9]{4,20}$/;
const USERNAME_RE = /^[a-z][a-z0-9_.-]{2,31}$/;
const EMAIL_RE = /^[^@\s]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const DATE_RE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;

function cpLength(s) {
  let count = 0;
  // eslint-disable-next-line no-unused-vars
  for (const _ of s) count++;
  return count;
}

const storable = (s) => !s.includes('\u0000') && !LONE_SURROGATE_RE.test(s);

function goodText(v, max) {
  return isStr(v) && !CONTROL_RE.test(v) && storable(v) && !BLANK_RE.test(v) && cpLength(v) <= max;
}

function goodPassword(v) {
  if (!isStr(v)) return false;
  const len = cpLength(v);
  return len >= 8 && len <= 128;
}

function goodEmail(v) {
  return isStr(v) && cpLength(v) <= 254 && EMAIL_RE.test(v) && !CONTROL_RE.test(v) && storable(v);
}

// days since 1970-01-01 of a real YYYY-MM-DD date, or null
function parseDate(v) {
  if (!isStr(v)) return null;
  const m = DATE_RE.exec(v);
  if (!m) return null;
  const y = +m[1];
  const mo = +m[2];
  const d = +m[3];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > 31) return null;
  const dt = new Date(0);
  dt.setUTCFullYear(y, mo - 1, d);
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) return null;
  return Math.round(dt.getTime() / 86400000);
}

function formatDays(days) {
  const dt = new Date(days * 86400000);
  const y = dt.getUTCFullYear();
  const pad = (x, w) => String(x).padStart(w, '0');
  return `${pad(y, 4)}-${pad(dt.getUTCMonth() + 1, 2)}-${pad(dt.getUTCDate(), 2)}`;
}

function pathId(raw, what) {
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) throw notFound(what);
  const v = Number(raw);
  if (v > INT32_MAX) throw notFound(what);
  return v;
}

// an integer from a body naming a row: null when it cannot name one (out of the id range)
const bodyId = (v) => (typeof v === 'number' && v >= 1 && v <= INT32_MAX ? v : null);

// ------------------------------------------------------------------------------------ passwords

const SCRYPT_LN = 14;
const SCRYPT_R = 8;
const SCRYPT_P = 1;
const ab64 = (buf) => buf.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');
const unab64 = (s) => Buffer.from(s.replace(/\./g, '+'), 'base64');

async function hashPassword(password) {
  const salt = crypto.randomBytes(16);
  const key = await scryptAsync(Buffer.from(password, 'utf8'), salt, 32,
    { N: 2 ** SCRYPT_LN, r: SCRYPT_R, p: SCRYPT_P, maxmem: 128 * 1024 * 1024 });
  // passlib's self-describing scrypt form
  return `$scrypt$ln=${SCRYPT_LN},r=${SCRYPT_R},p=${SCRYPT_P}$${ab64(salt)}$${ab64(key)}`;
}

async function verifyPassword(password, stored) {
  try {
    const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(stored);
    if (!m) return false;
    const expected = unab64(m[5]);
    const key = await scryptAsync(Buffer.from(password, 'utf8'), unab64(m[4]), expected.length,
      { N: 2 ** +m[1], r: +m[2], p: +m[3], maxmem: 128 * 1024 * 1024 });
    return crypto.timingSafeEqual(key, expected);
  } catch (err) {
    return false;
  }
}

let dummyHash = null;
async function dummyVerify(password) {
  if (!dummyHash) dummyHash = await hashPassword(crypto.randomBytes(8).toString('hex'));
  await verifyPassword(password, dummyHash);
}

// ------------------------------------------------------------------------------------ database

function databaseConfig() {
  if (process.env.DATABASE_URL) return { connectionString: process.env.DATABASE_URL };
  return {
    host: process.env.DB_HOST || '127.0.0.1',
    port: parseInt(process.env.DB_PORT || '5432', 10),
    user: process.env.DB_USERNAME || 'postgres',
    password: process.env.DB_PASSWORD || '',
    database: process.env.DB_NAME || 'postgres',
  };
}

const pool = new pg.Pool({ ...databaseConfig(), max: 10 });
pool.on('error', (err) => console.error('idle client error', err.message));

const SCHEMA = `
CREATE TABLE IF NOT EXISTS staff (
  id serial PRIMARY KEY,
  username text NOT NULL UNIQUE,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS patrons (
  id serial PRIMARY KEY,
  card_number text NOT NULL UNIQUE,
  name text NOT NULL,
  email text NOT NULL,
  category text NOT NULL,
  password_hash text NOT NULL,
  fines_owed integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS titles (
  id serial PRIMARY KEY,
  title text NOT NULL,
  author text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS copies (
  id serial PRIMARY KEY,
  title_id integer NOT NULL REFERENCES titles(id),
  barcode text NOT NULL UNIQUE,
  status text NOT NULL
);
CREATE TABLE IF NOT EXISTS loans (
  id serial PRIMARY KEY,
  patron_id integer NOT NULL REFERENCES patrons(id),
  copy_id integer NOT NULL REFERENCES copies(id),
  checked_out_on date NOT NULL,
  due_date date NOT NULL,
  returned_on date,
  renewals integer NOT NULL DEFAULT 0,
  fine integer NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS holds (
  id serial PRIMARY KEY,
  title_id integer NOT NULL REFERENCES titles(id),
  patron_id integer NOT NULL REFERENCES patrons(id),
  status text NOT NULL,
  copy_id integer REFERENCES copies(id),
  notified boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS tokens (
  token_sha256 text PRIMARY KEY,
  staff_id integer REFERENCES staff(id),
  patron_id integer REFERENCES patrons(id),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS copies_title_idx ON copies (title_id, id);
CREATE INDEX IF NOT EXISTS loans_patron_idx ON loans (patron_id, id);
CREATE INDEX IF NOT EXISTS loans_copy_idx ON loans (copy_id) WHERE returned_on IS NULL;
CREATE INDEX IF NOT EXISTS holds_title_idx ON holds (title_id, status, id);
CREATE INDEX IF NOT EXISTS holds_patron_idx ON holds (patron_id, id);
`;

const query = (text, params) => pool.query(text, params);

async function tx(fn) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try { await client.query('ROLLBACK'); } catch (e) { /* connection lost */ }
    throw err;
  } finally {
    client.release();
  }
}

// Circulation writes run one at a time (one process): the rules read several rows at once.
let lockTail = Promise.resolve();
function withLock(fn) {
  const result = lockTail.then(() => fn());
  lockTail = result.catch(() => {});
  return result;
}

async function initDatabase() {
  let lastError;
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      await tx(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock(727273)');
        await c.query(SCHEMA);
      });
      const username = process.env.LIBRARY_ADMIN_USERNAME;
      const password = process.env.LIBRARY_ADMIN_PASSWORD;
      if (username && password) {
        const exists = await query('SELECT 1 FROM staff WHERE username = $1', [username]);
        if (exists.rowCount === 0) {
          await query('INSERT INTO staff (username, password_hash) VALUES ($1, $2) ON CONFLICT (username) DO NOTHING',
            [username, await hashPassword(password)]);
        }
      }
      return;
    } catch (err) {
      lastError = err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  throw lastError;
}

// ------------------------------------------------------------------------------------ JSON views

const iso = (d) => (d instanceof Date ? d.toISOString() : String(d));

function patronJson(p) {
  return {
    id: p.id,
    card_number: p.card_number,
    name: p.name,
    email: p.email,
    category: p.category,
    fines_owed: p.fines_owed,
    blocked: p.fines_owed > BLOCK_ABOVE,
    created_at: iso(p.created_at),
  };
}

const copyJson = (c) => ({ id: c.id, barcode: c.barcode, title_id: c.title_id, status: c.status });

const LOAN_SELECT = `SELECT l.id, l.patron_id, c.barcode, c.title_id, l.checked_out_on, l.due_date,
  l.renewals, l.returned_on, l.fine FROM loans l JOIN copies c ON c.id = l.copy_id`;

const loanJson = (l) => ({
  id: l.id,
  patron_id: l.patron_id,
  barcode: l.barcode,
  title_id: l.title_id,
  checked_out_on: l.checked_out_on,
  due_date: l.due_date,
  renewals: l.renewals,
  returned_on: l.returned_on,
  fine: l.fine,
});

const HOLD_SELECT = `SELECT h.id, h.title_id, h.patron_id, h.status, h.notified, c.barcode,
  CASE WHEN h.status = 'waiting' THEN (SELECT count(*)::int FROM holds w
    WHERE w.title_id = h.title_id AND w.status = 'waiting' AND w.id <= h.id) END AS position
  FROM holds h LEFT JOIN copies c ON c.id = h.copy_id`;

const holdJson = (h) => ({
  id: h.id,
  title_id: h.title_id,
  patron_id: h.patron_id,
  status: h.status,
  position: h.position === undefined ? null : h.position,
  barcode: h.barcode === undefined ? null : h.barcode,
  notified: h.notified,
});

async function loadLoan(db, id) {
  const r = await db.query(`${LOAN_SELECT} WHERE l.id = $1`, [id]);
  return r.rows[0] || null;
}

async function loadHold(db, id) {
  const r = await db.query(`${HOLD_SELECT} WHERE h.id = $1`, [id]);
  return r.rows[0] || null;
}

async function loadTitle(db, id) {
  const t = await db.query('SELECT id, title, author FROM titles WHERE id = $1', [id]);
  if (t.rowCount === 0) return null;
  const copies = await db.query('SELECT id, barcode, title_id, status FROM copies WHERE title_id = $1 ORDER BY id', [id]);
  return { id: t.rows[0].id, title: t.rows[0].title, author: t.rows[0].author, copies: copies.rows.map(copyJson) };
}

// ------------------------------------------------------------------------------------ auth

const tokenCache = new Map();
const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

async function authenticate(ctx) {
  const header = ctx.req.headers.authorization;
  if (!header) throw new ApiError(401, 'unauthorized', 'missing bearer token');
  const m = /^Bearer ([^\s]+)$/i.exec(header);
  if (!m) throw new ApiError(401, 'unauthorized', 'malformed authorization header');
  const key = sha256(m[1]);
  let who = tokenCache.get(key);
  if (!who) {
    const r = await query('SELECT staff_id, patron_id FROM tokens WHERE token_sha256 = $1', [key]);
    if (r.rowCount === 0) throw new ApiError(401, 'unauthorized', 'unknown token');
    const row = r.rows[0];
    who = row.staff_id !== null ? { role: 'staff', staffId: row.staff_id, patronId: null }
      : { role: 'patron', staffId: null, patronId: row.patron_id };
    tokenCache.set(key, who);
  }
  ctx.who = who;
  return who;
}

async function requireStaff(ctx) {
  const who = await authenticate(ctx);
  if (who.role !== 'staff') throw new ApiError(403, 'forbidden', 'staff only');
  return who;
}

const isStaff = (ctx) => ctx.who.role === 'staff';
const canSeePatron = (ctx, patronId) => isStaff(ctx) || ctx.who.patronId === patronId;

// ------------------------------------------------------------------------------------ mailer

function postJson(urlString, payload) {
  return new Promise((resolve) => {
    let settled = false;
    const done = (status) => { if (!settled) { settled = true; clearTimeout(timer); resolve(status); } };
    let req;
    const timer = setTimeout(() => { done(0); if (req) req.destroy(); }, MAIL_TIMEOUT_MS);
    try {
      const url = new URL(urlString);
      const body = Buffer.from(JSON.stringify(payload), 'utf8');
      const mod = url.protocol === 'https:' ? https : http;
      req = mod.request(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
      }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode));
        res.on('error', () => done(res.statusCode));
      });
      req.on('error', () => done(0));
      req.end(body);
    } catch (err) {
      done(0);
    }
  });
}

// Sends the hold-ready email for a hold that just became ready; records whether it was accepted.
async function notifyHoldReady(holdId) {
  const r = await query(`SELECT p.email, t.title, c.barcode FROM holds h JOIN patrons p ON p.id = h.patron_id
    JOIN titles t ON t.id = h.title_id JOIN copies c ON c.id = h.copy_id WHERE h.id = $1`, [holdId]);
  if (r.rowCount === 0) return;
  const { email, title, barcode } = r.rows[0];
  const base = (process.env.MAILER_URL || '').replace(/\/+$/, '');
  if (!base) return;
  const status = await postJson(`${base}/messages`, {
    to: email,
    subject: `Hold ready: ${title}`,
    text: `Your hold is ready: "${title}" (copy ${barcode}) is waiting for you on the hold shelf.`,
  });
  if (status === 202) await query('UPDATE holds SET notified = true WHERE id = $1', [holdId]);
}

// The returned or released copy goes to the title's oldest waiting hold, else back to the shelves.
async function routeCopy(c, copyId, titleId) {
  const next = await c.query(
    "SELECT id FROM holds WHERE title_id = $1 AND status = 'waiting' ORDER BY id LIMIT 1", [titleId]);
  if (next.rowCount > 0) {
    const holdId = next.rows[0].id;
    await c.query("UPDATE holds SET status = 'ready', copy_id = $1, notified = false WHERE id = $2", [copyId, holdId]);
    await c.query("UPDATE copies SET status = 'on_hold_shelf' WHERE id = $1", [copyId]);
    return holdId;
  }
  await c.query("UPDATE copies SET status = 'available' WHERE id = $1", [copyId]);
  return null;
}

// ------------------------------------------------------------------------------------ handlers

function send(res, status, body) {
  if (status === 204) {
    res.writeHead(204);
    res.end();
    return;
  }
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': data.length });
  res.end(data);
}

async function health() {
  return [200, { status: 'ok' }];
}

async function login(ctx) {
  const data = readObject(ctx);
  const bad = [];
  if (!isStr(data.username)) bad.push('username');
  if (!isStr(data.password)) bad.push('password');
  if (bad.length) throw invalid(bad);
  const { username, password } = data;
  const refuse = () => new ApiError(401, 'unauthorized', 'wrong username or password');
  if (!storable(username)) { await dummyVerify(password); throw refuse(); }
  let who = null;
  const s = await query('SELECT id, password_hash FROM staff WHERE username = $1', [username]);
  if (s.rowCount > 0) {
    if (await verifyPassword(password, s.rows[0].password_hash)) who = { staffId: s.rows[0].id, patronId: null };
  } else {
    const p = await query('SELECT id, password_hash FROM patrons WHERE card_number = $1', [username]);
    if (p.rowCount > 0) {
      if (await verifyPassword(password, p.rows[0].password_hash)) who = { staffId: null, patronId: p.rows[0].id };
    } else {
      await dummyVerify(password);
    }
  }
  if (!who) throw refuse();
  const token = crypto.randomBytes(32).toString('base64url');
  await query('INSERT INTO tokens (token_sha256, staff_id, patron_id) VALUES ($1, $2, $3)',
    [sha256(token), who.staffId, who.patronId]);
  return [200, { token, role: who.staffId !== null ? 'staff' : 'patron', patron_id: who.patronId }];
}

async function createStaff(ctx) {
  await requireStaff(ctx);
  const data = readObject(ctx);
  const bad = [];
  if (!(isStr(data.username) && USERNAME_RE.test(data.username))) bad.push('username');
  if (!goodPassword(data.password)) bad.push('password');
  if (bad.length) throw invalid(bad);
  const taken = await query('SELECT 1 FROM staff WHERE username = $1', [data.username]);
  if (taken.rowCount > 0) throw conflict('username_taken', 'this username is taken');
  const hash = await hashPassword(data.password);
  try {
    const r = await query('INSERT INTO staff (username, password_hash) VALUES ($1, $2) RETURNING id, username, created_at',
      [data.username, hash]);
    const row = r.rows[0];
    return [201, { id: row.id, username: row.username, created_at: iso(row.created_at) }];
  } catch (err) {
    if (err.code === '23505') throw conflict('username_taken', 'this username is taken');
    throw err;
  }
}

async function createPatron(ctx) {
  await requireStaff(ctx);
  const data = readObject(ctx);
  const bad = [];
  if (!(isStr(data.card_number) && CARD_RE.test(data.card_number))) bad.push('card_number');
  if (!goodText(data.name, 100)) bad.push('name');
  if (!goodEmail(data.email)) bad.push('email');
  if (!(data.category === 'adult' || data.category === 'child')) bad.push('category');
  if (!goodPassword(data.password)) bad.push('password');
  if (bad.length) throw invalid(bad);
  const taken = await query('SELECT 1 FROM patrons WHERE card_number = $1', [data.card_number]);
  if (taken.rowCount > 0) throw conflict('card_number_taken', 'this card number is taken');
  const hash = await hashPassword(data.password);
  try {
    const r = await query(`INSERT INTO patrons (card_number, name, email, category, password_hash, fines_owed)
      VALUES ($1, $2, $3, $4, $5, 0) RETURNING *`, [data.card_number, data.name, data.email, data.category, hash]);
    return [201, patronJson(r.rows[0])];
  } catch (err) {
    if (err.code === '23505') throw conflict('card_number_taken', 'this card number is taken');
    throw err;
  }
}

async function listPatrons(ctx) {
  await requireStaff(ctx);
  const where = [];
  const params = [];
  for (const key of ['card_number', 'email']) {
    if (ctx.query.has(key)) {
      const value = ctx.query.get(key);
      if (!storable(value)) return [200, { items: [] }]; // nobody can have it
      params.push(value);
      where.push(`${key} = $${params.length}`);
    }
  }
  const sql = `SELECT * FROM patrons${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id`;
  const r = await query(sql, params);
  return [200, { items: r.rows.map(patronJson) }];
}

async function visiblePatron(ctx, raw) {
  await authenticate(ctx);
  const id = pathId(raw, 'patron');
  if (!canSeePatron(ctx, id)) throw notFound('patron');
  const r = await query('SELECT * FROM patrons WHERE id = $1', [id]);
  if (r.rowCount === 0) throw notFound('patron');
  return r.rows[0];
}

async function getPatron(ctx) {
  return [200, patronJson(await visiblePatron(ctx, ctx.params[0]))];
}

async function patronLoans(ctx) {
  const p = await visiblePatron(ctx, ctx.params[0]);
  const r = await query(`${LOAN_SELECT} WHERE l.patron_id = $1 ORDER BY l.id`, [p.id]);
  return [200, { items: r.rows.map(loanJson) }];
}

async function patronHolds(ctx) {
  const p = await visiblePatron(ctx, ctx.params[0]);
  const r = await query(`${HOLD_SELECT} WHERE h.patron_id = $1 ORDER BY h.id`, [p.id]);
  return [200, { items: r.rows.map(holdJson) }];
}

async function payFines(ctx) {
  await requireStaff(ctx);
  const id = pathId(ctx.params[0], 'patron');
  const exists = await query('SELECT 1 FROM patrons WHERE id = $1', [id]);
  if (exists.rowCount === 0) throw notFound('patron');
  const data = readObject(ctx);
  const amount = data.amount;
  if (!(isInt(amount) && amount >= 1)) throw invalid(['amount']);
  return withLock(() => tx(async (c) => {
    const r = await c.query('SELECT fines_owed FROM patrons WHERE id = $1 FOR UPDATE', [id]);
    const owed = r.rows[0].fines_owed;
    if (BigInt(amount) > BigInt(owed)) throw conflict('overpayment', 'the amount is more than the patron owes');
    const u = await c.query('UPDATE patrons SET fines_owed = fines_owed - $1 WHERE id = $2 RETURNING fines_owed',
      [Number(amount), id]);
    return [201, { patron_id: id, amount: Number(amount), fines_owed: u.rows[0].fines_owed }];
  }));
}

async function createTitle(ctx) {
  await requireStaff(ctx);
  const data = readObject(ctx);
  const bad = [];
  if (!goodText(data.title, 200)) bad.push('title');
  if (!goodText(data.author, 100)) bad.push('author');
  if (bad.length) throw invalid(bad);
  const r = await query('INSERT INTO titles (title, author) VALUES ($1, $2) RETURNING id, title, author',
    [data.title, data.author]);
  return [201, { ...r.rows[0], copies: [] }];
}

async function getTitle(ctx) {
  await authenticate(ctx);
  const id = pathId(ctx.params[0], 'title');
  const t = await loadTitle(pool, id);
  if (!t) throw notFound('title');
  return [200, t];
}

async function addCopy(ctx) {
  await requireStaff(ctx);
  const id = pathId(ctx.params[0], 'title');
  const t = await query('SELECT 1 FROM titles WHERE id = $1', [id]);
  if (t.rowCount === 0) throw notFound('title');
  const data = readObject(ctx);
  if (!(isStr(data.barcode) && BARCODE_RE.test(data.barcode))) throw invalid(['barcode']);
  try {
    const r = await query(`INSERT INTO copies (title_id, barcode, status) VALUES ($1, $2, 'available')
      RETURNING id, barcode, title_id, status`, [id, data.barcode]);
    return [201, copyJson(r.rows[0])];
  } catch (err) {
    if (err.code === '23505') throw conflict('barcode_taken', 'this barcode is taken');
    throw err;
  }
}

async function titleHolds(ctx) {
  await requireStaff(ctx);
  const id = pathId(ctx.params[0], 'title');
  const t = await query('SELECT 1 FROM titles WHERE id = $1', [id]);
  if (t.rowCount === 0) throw notFound('title');
  const r = await query(`${HOLD_SELECT} WHERE h.title_id = $1 AND h.status = 'waiting' ORDER BY h.id`, [id]);
  return [200, { items: r.rows.map(holdJson) }];
}

async function getCopy(ctx) {
  await authenticate(ctx);
  const barcode = ctx.params[0];
  if (!storable(barcode)) throw notFound('copy');
  const r = await query('SELECT id, barcode, title_id, status FROM copies WHERE barcode = $1', [barcode]);
  if (r.rowCount === 0) throw notFound('copy');
  return [200, copyJson(r.rows[0])];
}

async function checkout(ctx) {
  await requireStaff(ctx);
  const data = readObject(ctx);
  const bad = [];
  if (!(isStr(data.card_number) && CARD_RE.test(data.card_number))) bad.push('card_number');
  if (!(isStr(data.barcode) && BARCODE_RE.test(data.barcode))) bad.push('barcode');
  const day = parseDate(data.date);
  if (day === null) bad.push('date');
  if (bad.length) throw invalid(bad);
  return withLock(() => tx(async (c) => {
    const p = await c.query('SELECT * FROM patrons WHERE card_number = $1 FOR UPDATE', [data.card_number]);
    if (p.rowCount === 0) throw notFound('patron');
    const cp = await c.query('SELECT * FROM copies WHERE barcode = $1 FOR UPDATE', [data.barcode]);
    if (cp.rowCount === 0) throw notFound('copy');
    const patron = p.rows[0];
    const copy = cp.rows[0];
    const rules = CATEGORIES[patron.category] || CATEGORIES.adult;
    if (patron.fines_owed > BLOCK_ABOVE) throw conflict('patron_blocked', 'the patron owes too much in fines');
    if (copy.status === 'on_loan') throw conflict('copy_unavailable', 'the copy is on loan');
    let shelfHold = null;
    if (copy.status === 'on_hold_shelf') {
      const h = await c.query("SELECT id, patron_id FROM holds WHERE copy_id = $1 AND status = 'ready' ORDER BY id LIMIT 1",
        [copy.id]);
      if (h.rowCount > 0) {
        if (h.rows[0].patron_id !== patron.id) throw conflict('copy_on_hold', 'the copy is on the hold shelf for another patron');
        shelfHold = h.rows[0].id;
      }
    }
    const current = await c.query('SELECT count(*)::int AS n FROM loans WHERE patron_id = $1 AND returned_on IS NULL',
      [patron.id]);
    if (current.rows[0].n >= rules.maxLoans) throw conflict('loan_limit_reached', 'the patron has too many current loans');
    const ins = await c.query(`INSERT INTO loans (patron_id, copy_id, checked_out_on, due_date, renewals, fine)
      VALUES ($1, $2, $3, $4, 0, 0) RETURNING id`, [patron.id, copy.id, formatDays(day), formatDays(day + rules.loanDays)]);
    await c.query("UPDATE copies SET status = 'on_loan' WHERE id = $1", [copy.id]);
    if (shelfHold !== null) {
      await c.query("UPDATE holds SET status = 'fulfilled' WHERE id = $1", [shelfHold]);
    } else {
      const w = await c.query(`SELECT id FROM holds WHERE patron_id = $1 AND title_id = $2 AND status = 'waiting'
        ORDER BY id LIMIT 1`, [patron.id, copy.title_id]);
      if (w.rowCount > 0) {
        await c.query("UPDATE holds SET status = 'fulfilled', copy_id = $1 WHERE id = $2", [copy.id, w.rows[0].id]);
      }
    }
    return [201, loanJson(await loadLoan(c, ins.rows[0].id))];
  }));
}

async function checkin(ctx) {
  await requireStaff(ctx);
  const data = readObject(ctx);
  const bad = [];
  if (!(isStr(data.barcode) && BARCODE_RE.test(data.barcode))) bad.push('barcode');
  const day = parseDate(data.date);
  if (day === null) bad.push('date');
  if (bad.length) throw invalid(bad);
  const [loanId, copyId, readyHold] = await withLock(() => tx(async (c) => {
    const cp = await c.query('SELECT * FROM copies WHERE barcode = $1 FOR UPDATE', [data.barcode]);
    if (cp.rowCount === 0) throw notFound('copy');
    const copy = cp.rows[0];
    const l = await c.query('SELECT * FROM loans WHERE copy_id = $1 AND returned_on IS NULL ORDER BY id LIMIT 1 FOR UPDATE',
      [copy.id]);
    if (l.rowCount === 0) throw conflict('not_on_loan', 'the copy is not on loan');
    const loan = l.rows[0];
    const late = day - parseDate(loan.due_date);
    const fine = late > 0 ? Math.min(10 * late, 1000) : 0;
    await c.query('UPDATE loans SET returned_on = $1, fine = $2 WHERE id = $3', [formatDays(day), fine, loan.id]);
    if (fine > 0) await c.query('UPDATE patrons SET fines_owed = fines_owed + $1 WHERE id = $2', [fine, loan.patron_id]);
    const holdId = await routeCopy(c, copy.id, copy.title_id);
    return [loan.id, copy.id, holdId];
  }));
  if (readyHold !== null) await notifyHoldReady(readyHold);
  const loan = await loadLoan(pool, loanId);
  const copy = await query('SELECT id, barcode, title_id, status FROM copies WHERE id = $1', [copyId]);
  const hold = readyHold !== null ? holdJson(await loadHold(pool, readyHold)) : null;
  return [200, { loan: loanJson(loan), copy: copyJson(copy.rows[0]), hold }];
}

async function visibleLoan(ctx, raw) {
  await authenticate(ctx);
  const id = pathId(raw, 'loan');
  const loan = await loadLoan(pool, id);
  if (!loan || !canSeePatron(ctx, loan.patron_id)) throw notFound('loan');
  return loan;
}

async function getLoan(ctx) {
  return [200, loanJson(await visibleLoan(ctx, ctx.params[0]))];
}

async function renew(ctx) {
  const visible = await visibleLoan(ctx, ctx.params[0]);
  const data = readObject(ctx);
  const day = parseDate(data.date);
  if (day === null) throw invalid(['date']);
  return withLock(() => tx(async (c) => {
    const l = await c.query(`SELECT l.*, c.title_id FROM loans l JOIN copies c ON c.id = l.copy_id
      WHERE l.id = $1 FOR UPDATE OF l`, [visible.id]);
    const loan = l.rows[0];
    if (loan.returned_on !== null) throw conflict('loan_returned', 'the loan has been returned');
    const p = await c.query('SELECT * FROM patrons WHERE id = $1', [loan.patron_id]);
    const patron = p.rows[0];
    const rules = CATEGORIES[patron.category] || CATEGORIES.adult;
    if (patron.fines_owed > BLOCK_ABOVE) throw conflict('patron_blocked', 'the patron owes too much in fines');
    if (loan.renewals >= MAX_RENEWALS) throw conflict('renewal_limit', 'the loan has been renewed too often');
    if (day > parseDate(loan.due_date)) throw conflict('loan_overdue', 'the loan is overdue');
    const waiting = await c.query(`SELECT 1 FROM holds WHERE title_id = $1 AND status = 'waiting' AND patron_id <> $2
      LIMIT 1`, [loan.title_id, loan.patron_id]);
    if (waiting.rowCount > 0) throw conflict('on_hold', 'another patron is waiting for this title');
    await c.query('UPDATE loans SET due_date = $1, renewals = renewals + 1 WHERE id = $2',
      [formatDays(day + rules.loanDays), loan.id]);
    return [200, loanJson(await loadLoan(c, loan.id))];
  }));
}

async function placeHold(ctx) {
  const who = await authenticate(ctx);
  const data = readObject(ctx);
  const staff = who.role === 'staff';
  if (!staff && has(data, 'patron_id') && isInt(data.patron_id) && data.patron_id !== who.patronId) {
    throw new ApiError(403, 'forbidden', 'a patron may place holds only for themselves');
  }
  const bad = [];
  if (!isInt(data.title_id)) bad.push('title_id');
  if (staff ? !isInt(data.patron_id) : has(data, 'patron_id') && !isInt(data.patron_id)) bad.push('patron_id');
  if (bad.length) throw invalid(bad);
  const titleId = bodyId(data.title_id);
  const patronId = staff ? bodyId(data.patron_id) : who.patronId;
  return withLock(() => tx(async (c) => {
    const t = titleId === null ? { rowCount: 0 } : await c.query('SELECT 1 FROM titles WHERE id = $1', [titleId]);
    if (t.rowCount === 0) throw notFound('title');
    const p = patronId === null ? { rowCount: 0 } : await c.query('SELECT * FROM patrons WHERE id = $1', [patronId]);
    if (p.rowCount === 0) throw notFound('patron');
    if (p.rows[0].fines_owed > BLOCK_ABOVE) throw conflict('patron_blocked', 'the patron owes too much in fines');
    const onLoan = await c.query(`SELECT 1 FROM loans l JOIN copies c ON c.id = l.copy_id
      WHERE l.patron_id = $1 AND c.title_id = $2 AND l.returned_on IS NULL LIMIT 1`, [patronId, titleId]);
    if (onLoan.rowCount > 0) throw conflict('already_on_loan', 'the patron has this title on loan');
    const onHold = await c.query(`SELECT 1 FROM holds WHERE patron_id = $1 AND title_id = $2
      AND status IN ('waiting', 'ready') LIMIT 1`, [patronId, titleId]);
    if (onHold.rowCount > 0) throw conflict('already_on_hold', 'the patron already holds this title');
    const ins = await c.query(`INSERT INTO holds (title_id, patron_id, status, notified) VALUES ($1, $2, 'waiting', false)
      RETURNING id`, [titleId, patronId]);
    return [201, holdJson(await loadHold(c, ins.rows[0].id))];
  }));
}

async function visibleHold(ctx, raw) {
  await authenticate(ctx);
  const id = pathId(raw, 'hold');
  const hold = await loadHold(pool, id);
  if (!hold || !canSeePatron(ctx, hold.patron_id)) throw notFound('hold');
  return hold;
}

async function getHold(ctx) {
  return [200, holdJson(await visibleHold(ctx, ctx.params[0]))];
}

async function cancelHold(ctx) {
  const visible = await visibleHold(ctx, ctx.params[0]);
  const nextReady = await withLock(() => tx(async (c) => {
    const h = await c.query('SELECT * FROM holds WHERE id = $1 FOR UPDATE', [visible.id]);
    const hold = h.rows[0];
    if (hold.status !== 'waiting' && hold.status !== 'ready') throw conflict('hold_closed', 'the hold is already closed');
    await c.query("UPDATE holds SET status = 'cancelled', copy_id = NULL WHERE id = $1", [hold.id]);
    if (hold.status === 'ready' && hold.copy_id !== null) return routeCopy(c, hold.copy_id, hold.title_id);
    return null;
  }));
  if (nextReady !== null) await notifyHoldReady(nextReady);
  return [204, null];
}

// ------------------------------------------------------------------------------------ routing

const ROUTES = [
  ['/health', { GET: health }],
  ['/auth/token', { POST: login }],
  ['/staff', { POST: createStaff }],
  ['/patrons', { GET: listPatrons, POST: createPatron }],
  ['/patrons/*', { GET: getPatron }],
  ['/patrons/*/loans', { GET: patronLoans }],
  ['/patrons/*/holds', { GET: patronHolds }],
  ['/patrons/*/payments', { POST: payFines }],
  ['/titles', { POST: createTitle }],
  ['/titles/*', { GET: getTitle }],
  ['/titles/*/copies', { POST: addCopy }],
  ['/titles/*/holds', { GET: titleHolds }],
  ['/copies/*', { GET: getCopy }],
  ['/checkouts', { POST: checkout }],
  ['/returns', { POST: checkin }],
  ['/loans/*', { GET: getLoan }],
  ['/loans/*/renew', { POST: renew }],
  ['/holds', { POST: placeHold }],
  ['/holds/*', { GET: getHold, DELETE: cancelHold }],
].map(([pattern, methods]) => [pattern.split('/'), methods]);

function decodeSegment(s) {
  try { return decodeURIComponent(s); } catch (err) { return s; }
}

function route(pathname) {
  const parts = pathname.split('/');
  for (const [pattern, methods] of ROUTES) {
    if (pattern.length !== parts.length) continue;
    const params = [];
    let ok = true;
    for (let k = 0; k < pattern.length; k++) {
      if (pattern[k] === '*') {
        if (parts[k] === '') { ok = false; break; }
        params.push(decodeSegment(parts[k]));
      } else if (pattern[k] !== parts[k]) { ok = false; break; }
    }
    if (ok) return { methods, params };
  }
  return null;
}

// Reads the whole body (keeping at most MAX_BODY bytes) so that every answer, even an early
// refusal, comes after the client finished sending.
function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        tooLarge = true;
        chunks.length = 0;
        if (size > 64 * MAX_BODY) req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve({ body: Buffer.concat(chunks), tooLarge }));
    req.on('error', () => resolve({ body: Buffer.alloc(0), tooLarge, aborted: true }));
    req.on('close', () => resolve({ body: Buffer.concat(chunks), tooLarge, aborted: true }));
  });
}

async function handle(req, res) {
  const raw = req.url || '/';
  const q = raw.indexOf('?');
  const pathname = q === -1 ? raw : raw.slice(0, q);
  const search = q === -1 ? '' : raw.slice(q + 1);
  const { body, tooLarge, aborted } = await readBody(req);
  if (aborted && res.destroyed) return;
  try {
    const match = route(pathname);
    if (!match) throw new ApiError(404, 'not_found', 'no such path');
    const fn = match.methods[req.method];
    if (!fn) throw new ApiError(405, 'method_not_allowed', 'method not allowed on this path');
    const ctx = { req, params: match.params, query: new URLSearchParams(search), body, bodyTooLarge: tooLarge, who: null };
    const [status, payload] = await fn(ctx);
    send(res, status, payload);
  } catch (err) {
    if (err instanceof ApiError) {
      const payload = { error: err.code, message: err.message };
      if (err.fields) payload.fields = err.fields;
      send(res, err.status, payload);
    } else {
      console.error(err);
      send(res, 500, { error: 'internal_error', message: 'unexpected failure' });
    }
  }
}

async function main() {
  await initDatabase();
  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      console.error(err);
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'unexpected failure' });
    });
  });
  server.listen(PORT, '0.0.0.0', () => console.log(`library-loans listening on ${PORT}`));
  const stop = () => server.close(() => pool.end().finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  console.error('start-up failed:', err);
  process.exit(1);
});
