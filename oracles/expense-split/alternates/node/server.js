'use strict';
// Expense split: JSON API + HTML page, state in PostgreSQL (pg), node:http, CommonJS.
const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { Pool, types } = require('pg');

types.setTypeParser(1082, (v) => v); // date -> 'YYYY-MM-DD' string, never a local Date
types.setTypeParser(20, (v) => Number(v)); // bigint -> number (amounts fit easily)

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1024 * 1024;
const MAX_DEPTH = 32;
const INT_MAX = 2147483647;

function poolConfig() {
  if (process.env.DATABASE_URL) return { connectionString: process.env.DATABASE_URL, max: 10 };
  return {
    host: process.env.DB_HOST || '127.0.0.1',
    port: parseInt(process.env.DB_PORT || '5432', 10),
    user: process.env.DB_USERNAME,
    password: process.env.DB_PASSWORD,
    database: process.env.DB_NAME,
    max: 10,
  };
}
const pool = new Pool(poolConfig());
pool.on('error', (e) => console.error('pg pool error', e.message));

const SCHEMA = `
CREATE TABLE IF NOT EXISTS projects (
  slug text PRIMARY KEY,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS members (
  id serial PRIMARY KEY,
  project_slug text NOT NULL REFERENCES projects(slug),
  name text NOT NULL,
  weight integer NOT NULL,
  active boolean NOT NULL DEFAULT true,
  CONSTRAINT members_project_name_key UNIQUE (project_slug, name)
);
CREATE TABLE IF NOT EXISTS bills (
  id serial PRIMARY KEY,
  project_slug text NOT NULL REFERENCES projects(slug),
  payer_id integer NOT NULL REFERENCES members(id),
  amount_cents bigint NOT NULL,
  date date NOT NULL,
  description text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS bill_owers (
  bill_id integer NOT NULL REFERENCES bills(id) ON DELETE CASCADE,
  member_id integer NOT NULL REFERENCES members(id),
  share_cents bigint NOT NULL,
  PRIMARY KEY (bill_id, member_id)
);
CREATE INDEX IF NOT EXISTS bills_project_idx ON bills(project_slug);
CREATE INDEX IF NOT EXISTS bill_owers_member_idx ON bill_owers(member_id);
`;

async function initDb() {
  const c = await pool.connect();
  try {
    await c.query('SELECT pg_advisory_lock(742311)');
    try {
      await c.query(SCHEMA);
    } finally {
      await c.query('SELECT pg_advisory_unlock(742311)');
    }
  } finally {
    c.release();
  }
}

// ------------------------------------------------------------------ passwords & tokens
const SCRYPT = { N: 16384, r: 8, p: 1 };
function scryptAsync(pw, salt) {
  return new Promise((resolve, reject) =>
    crypto.scrypt(pw, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 }, (e, k) => (e ? reject(e) : resolve(k))));
}
async function hashPassword(pw) {
  const salt = crypto.randomBytes(16);
  const key = await scryptAsync(Buffer.from(pw, 'utf8'), salt);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}
async function verifyPassword(pw, stored) {
  const parts = String(stored).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const salt = Buffer.from(parts[4], 'base64');
  const want = Buffer.from(parts[5], 'base64');
  const key = await scryptAsync(Buffer.from(pw, 'utf8'), salt);
  return key.length === want.length && crypto.timingSafeEqual(key, want);
}
let DUMMY_HASH = null;
const TOKENS = new Map(); // token -> slug

// ------------------------------------------------------------------ http helpers
class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const E = {
  unauthorized: (m) => new ApiError(401, 'unauthorized', m || 'missing or invalid token'),
  forbidden: () => new ApiError(403, 'forbidden', 'this token does not open this project'),
  notFound: (m) => new ApiError(404, 'not_found', m || 'not found'),
  invalid: (fields, m) => new ApiError(422, 'validation_error', m || `invalid fields: ${fields.join(', ')}`, fields),
  conflict: (code, m) => new ApiError(409, code, m),
};

function send(res, status, obj, headers) {
  if (status === 204) {
    res.writeHead(204, headers || {});
    res.end();
    return;
  }
  const buf = Buffer.from(JSON.stringify(obj), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': buf.length, ...(headers || {}) });
  res.end(buf);
}
function sendError(res, e) {
  const body = { error: e.code, message: e.message };
  if (e.status === 422) body.fields = e.fields || [];
  send(res, e.status, body);
}

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let tooBig = false;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        tooBig = true;
        chunks.length = 0; // keep draining, drop data
      } else chunks.push(c);
    });
    req.on('end', () => resolve({ tooBig, buf: tooBig ? null : Buffer.concat(chunks) }));
    req.on('error', () => resolve({ tooBig: false, buf: Buffer.alloc(0), broken: true }));
  });
}

function depthOk(text) {
  let depth = 0;
  let inStr = false;
  let esc = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inStr) {
      if (esc) esc = false;
      else if (ch === 92) esc = true;
      else if (ch === 34) inStr = false;
    } else if (ch === 34) inStr = true;
    else if (ch === 91 || ch === 123) {
      depth++;
      if (depth > MAX_DEPTH) return false;
    } else if (ch === 93 || ch === 125) depth--;
  }
  return true;
}

function parseJsonObject(raw) {
  if (raw.tooBig) throw new ApiError(413, 'validation_error', 'request body larger than 1 MiB', ['body']);
  const text = raw.buf.toString('utf8');
  if (!depthOk(text)) throw E.invalid(['body'], 'JSON nested more than 32 levels');
  let v;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw E.invalid(['body'], 'body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw E.invalid(['body'], 'body must be a JSON object');
  return v;
}

const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const isStr = (v) => typeof v === 'string';
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);
const ulen = (s) => Array.from(s).length; // Unicode characters (code points)
const nonBlank = (s) => isStr(s) && /\S/u.test(s);

function validDate(v) {
  if (!isStr(v)) return false;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const y = +m[1], mo = +m[2], d = +m[3];
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  const dim = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= dim[mo - 1];
}

function pathId(s) {
  if (!/^[1-9][0-9]{0,9}$/.test(s)) return null;
  const n = Number(s);
  return n <= INT_MAX ? n : null;
}

function bearer(req) {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer ([^\s]+)$/i.exec(h.trim());
  return m ? m[1] : null;
}

// ------------------------------------------------------------------ domain
function iso(d) {
  return d instanceof Date ? d.toISOString() : String(d);
}
const memberOut = (r) => ({ id: r.id, name: r.name, weight: r.weight, active: r.active });

async function withTx(fn) {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await fn(c);
    await c.query('COMMIT');
    return out;
  } catch (e) {
    try {
      await c.query('ROLLBACK');
    } catch (_) { /* ignore */ }
    throw e;
  } finally {
    c.release();
  }
}

async function lockProject(c, slug) {
  const r = await c.query('SELECT slug FROM projects WHERE slug = $1 FOR UPDATE', [slug]);
  if (!r.rowCount) throw E.notFound('project not found');
}

async function balances(c, slug) {
  const r = await c.query(
    `SELECT m.id, m.name, m.active,
        COALESCE((SELECT SUM(b.amount_cents) FROM bills b WHERE b.payer_id = m.id AND b.project_slug = m.project_slug), 0) AS paid,
        COALESCE((SELECT SUM(o.share_cents) FROM bill_owers o JOIN bills b ON b.id = o.bill_id
                  WHERE o.member_id = m.id AND b.project_slug = m.project_slug), 0) AS owed
     FROM members m WHERE m.project_slug = $1 ORDER BY m.id`,
    [slug]);
  return r.rows.map((x) => {
    const paid = Number(x.paid), owed = Number(x.owed);
    return { member_id: x.id, name: x.name, active: x.active, paid_cents: paid, owed_cents: owed, balance_cents: paid - owed };
  });
}

function settle(items) {
  const bal = items.map((b) => ({ id: b.member_id, v: b.balance_cents }));
  const out = [];
  for (let guard = 0; guard < 100000; guard++) {
    let d = null, cr = null;
    for (const b of bal) {
      if (b.v < 0 && (d === null || b.v < d.v || (b.v === d.v && b.id < d.id))) d = b;
      if (b.v > 0 && (cr === null || b.v > cr.v || (b.v === cr.v && b.id < cr.id))) cr = b;
    }
    if (d === null || cr === null) break;
    const t = Math.min(-d.v, cr.v);
    out.push({ from_id: d.id, to_id: cr.id, amount_cents: t });
    d.v += t;
    cr.v -= t;
  }
  return out;
}

function split(amount, owers) {
  // owers: [{id, weight}] ascending by id
  const W = owers.reduce((s, o) => s + o.weight, 0);
  const shares = owers.map((o) => ({ member_id: o.id, share_cents: Math.floor((amount * o.weight) / W) }));
  let left = amount - shares.reduce((s, x) => s + x.share_cents, 0);
  for (let i = 0; left > 0 && i < shares.length; i++, left--) shares[i].share_cents += 1;
  return shares;
}

async function loadBills(c, slug, billId) {
  const args = [slug];
  let where = 'b.project_slug = $1';
  if (billId != null) {
    args.push(billId);
    where += ' AND b.id = $2';
  }
  const r = await c.query(
    `SELECT b.id, b.payer_id, b.amount_cents, b.date, b.description, b.created_at FROM bills b
     WHERE ${where} ORDER BY b.date DESC, b.id DESC`, args);
  if (!r.rowCount) return [];
  const ids = r.rows.map((x) => x.id);
  const o = await c.query('SELECT bill_id, member_id, share_cents FROM bill_owers WHERE bill_id = ANY($1::int[]) ORDER BY bill_id, member_id', [ids]);
  const by = new Map();
  for (const row of o.rows) {
    if (!by.has(row.bill_id)) by.set(row.bill_id, []);
    by.get(row.bill_id).push({ member_id: row.member_id, share_cents: Number(row.share_cents) });
  }
  return r.rows.map((b) => {
    const shares = by.get(b.id) || [];
    return {
      id: b.id, payer_id: b.payer_id, amount_cents: Number(b.amount_cents), date: b.date,
      description: b.description, owers: shares.map((s) => s.member_id), shares, created_at: iso(b.created_at),
    };
  });
}

async function validateBill(c, slug, body) {
  const fields = [];
  const active = new Map();
  const r = await c.query('SELECT id, weight FROM members WHERE project_slug = $1 AND active', [slug]);
  for (const m of r.rows) active.set(m.id, m.weight);
  if (!isInt(body.payer_id) || !active.has(body.payer_id)) fields.push('payer_id');
  if (!isInt(body.amount_cents) || body.amount_cents < 1 || body.amount_cents > 10000000) fields.push('amount_cents');
  if (!validDate(body.date)) fields.push('date');
  if (!nonBlank(body.description) || ulen(body.description) > 200) fields.push('description');
  const ow = body.owers;
  if (!Array.isArray(ow) || ow.length < 1 || ow.length > 50 || !ow.every((x) => isInt(x) && active.has(x)) ||
      new Set(ow).size !== ow.length) fields.push('owers');
  if (fields.length) throw E.invalid(fields);
  const owers = [...ow].sort((a, b) => a - b).map((id) => ({ id, weight: active.get(id) }));
  return { shares: split(body.amount_cents, owers) };
}

async function insertShares(c, billId, shares) {
  for (const s of shares) {
    await c.query('INSERT INTO bill_owers (bill_id, member_id, share_cents) VALUES ($1, $2, $3)', [billId, s.member_id, s.share_cents]);
  }
}

// ------------------------------------------------------------------ handlers
async function createProject(req, res) {
  const body = parseJsonObject(await readBody(req));
  const fields = [];
  const { slug, name, password } = body;
  if (!isStr(slug) || !/^[a-z0-9][a-z0-9-]{2,39}$/.test(slug)) fields.push('slug');
  if (!nonBlank(name) || ulen(name) > 100) fields.push('name');
  if (!isStr(password) || ulen(password) < 8 || ulen(password) > 128) fields.push('password');
  if (fields.length) throw E.invalid(fields);
  const exists = await pool.query('SELECT 1 FROM projects WHERE slug = $1', [slug]);
  if (exists.rowCount) throw E.conflict('slug_taken', 'a project with that slug exists');
  const hash = await hashPassword(password);
  let r;
  try {
    r = await pool.query('INSERT INTO projects (slug, name, password_hash, created_at) VALUES ($1, $2, $3, now()) RETURNING slug, name, created_at', [slug, name, hash]);
  } catch (e) {
    if (e.code === '23505') throw E.conflict('slug_taken', 'a project with that slug exists');
    throw e;
  }
  const p = r.rows[0];
  send(res, 201, { slug: p.slug, name: p.name, created_at: iso(p.created_at) });
}

async function obtainToken(req, res, slug) {
  const body = parseJsonObject(await readBody(req));
  if (!isStr(body.password)) throw E.invalid(['password']);
  const r = await pool.query('SELECT password_hash FROM projects WHERE slug = $1', [slug]);
  if (!r.rowCount) {
    await verifyPassword(body.password, DUMMY_HASH);
    throw E.unauthorized('wrong project or password');
  }
  if (!(await verifyPassword(body.password, r.rows[0].password_hash))) throw E.unauthorized('wrong project or password');
  const token = crypto.randomBytes(32).toString('base64url');
  TOKENS.set(token, slug);
  send(res, 200, { token });
}

function authorize(req, slug) {
  const tok = bearer(req);
  const owner = tok ? TOKENS.get(tok) : undefined;
  if (owner === undefined) throw E.unauthorized();
  if (owner !== slug) throw E.forbidden();
}

async function projectRoutes(req, res, slug, rest) {
  const method = req.method;
  // rest: array of path segments after the slug
  const route = (allowed) => {
    if (!allowed.includes(method)) throw new ApiError(405, 'method_not_allowed', 'method not allowed');
  };
  if (rest.length === 0) {
    route(['GET']);
    authorize(req, slug);
    const r = await pool.query('SELECT slug, name, created_at FROM projects WHERE slug = $1', [slug]);
    if (!r.rowCount) throw E.notFound('project not found');
    return send(res, 200, { slug: r.rows[0].slug, name: r.rows[0].name, created_at: iso(r.rows[0].created_at) });
  }
  const [kind, idRaw, extra] = rest;
  if (extra !== undefined) {
    authorize(req, slug);
    throw E.notFound();
  }
  if (kind === 'members' && idRaw === undefined) {
    route(['GET', 'POST']);
    authorize(req, slug);
    if (method === 'GET') {
      const r = await pool.query('SELECT id, name, weight, active FROM members WHERE project_slug = $1 ORDER BY id', [slug]);
      return send(res, 200, { items: r.rows.map(memberOut) });
    }
    const body = parseJsonObject(await readBody(req));
    const fields = [];
    if (!nonBlank(body.name) || ulen(body.name) > 60) fields.push('name');
    let weight = 1;
    if (has(body, 'weight')) {
      if (!isInt(body.weight) || body.weight < 1 || body.weight > 100) fields.push('weight');
      else weight = body.weight;
    }
    if (fields.length) throw E.invalid(fields);
    const m = await withTx(async (c) => {
      await lockProject(c, slug);
      const dup = await c.query('SELECT 1 FROM members WHERE project_slug = $1 AND name = $2', [slug, body.name]);
      if (dup.rowCount) throw E.conflict('member_exists', 'a member with that name exists');
      const r = await c.query('INSERT INTO members (project_slug, name, weight, active) VALUES ($1, $2, $3, true) RETURNING id, name, weight, active', [slug, body.name, weight]);
      return r.rows[0];
    });
    return send(res, 201, memberOut(m));
  }
  if (kind === 'members') {
    route(['PATCH']);
    authorize(req, slug);
    const id = pathId(idRaw);
    const exists = id === null ? null : await pool.query('SELECT 1 FROM members WHERE id = $1 AND project_slug = $2', [id, slug]);
    if (!exists || !exists.rowCount) throw E.notFound('member not found');
    const body = parseJsonObject(await readBody(req));
    const fields = [];
    if (has(body, 'name') && (!nonBlank(body.name) || ulen(body.name) > 60)) fields.push('name');
    if (has(body, 'weight') && (!isInt(body.weight) || body.weight < 1 || body.weight > 100)) fields.push('weight');
    if (has(body, 'active') && typeof body.active !== 'boolean') fields.push('active');
    if (fields.length) throw E.invalid(fields);
    const m = await withTx(async (c) => {
      await lockProject(c, slug);
      const cur = await c.query('SELECT id, name, weight, active FROM members WHERE id = $1 AND project_slug = $2', [id, slug]);
      if (!cur.rowCount) throw E.notFound('member not found');
      const m0 = cur.rows[0];
      if (has(body, 'name')) {
        const dup = await c.query('SELECT 1 FROM members WHERE project_slug = $1 AND name = $2 AND id <> $3', [slug, body.name, id]);
        if (dup.rowCount) throw E.conflict('member_exists', 'another member has that name');
      }
      if (has(body, 'active') && body.active === false) {
        const b = (await balances(c, slug)).find((x) => x.member_id === id);
        if (b && b.balance_cents !== 0) throw E.conflict('balance_not_zero', 'the member\'s balance is not 0');
      }
      const name = has(body, 'name') ? body.name : m0.name;
      const weight = has(body, 'weight') ? body.weight : m0.weight;
      const active = has(body, 'active') ? body.active : m0.active;
      const r = await c.query('UPDATE members SET name = $1, weight = $2, active = $3 WHERE id = $4 RETURNING id, name, weight, active', [name, weight, active, id]);
      return r.rows[0];
    });
    return send(res, 200, memberOut(m));
  }
  if (kind === 'bills' && idRaw === undefined) {
    route(['GET', 'POST']);
    authorize(req, slug);
    if (method === 'GET') {
      const c = await pool.connect();
      try {
        return send(res, 200, { items: await loadBills(c, slug, null) });
      } finally {
        c.release();
      }
    }
    const body = parseJsonObject(await readBody(req));
    const bill = await withTx(async (c) => {
      await lockProject(c, slug);
      const { shares } = await validateBill(c, slug, body);
      const r = await c.query('INSERT INTO bills (project_slug, payer_id, amount_cents, date, description, created_at) VALUES ($1, $2, $3, $4, $5, now()) RETURNING id',
        [slug, body.payer_id, body.amount_cents, body.date, body.description]);
      const id = r.rows[0].id;
      await insertShares(c, id, shares);
      return (await loadBills(c, slug, id))[0];
    });
    return send(res, 201, bill);
  }
  if (kind === 'bills') {
    route(['GET', 'PUT', 'DELETE']);
    authorize(req, slug);
    const id = pathId(idRaw);
    if (id === null) throw E.notFound('bill not found');
    if (method === 'GET') {
      const c = await pool.connect();
      try {
        const b = await loadBills(c, slug, id);
        if (!b.length) throw E.notFound('bill not found');
        return send(res, 200, b[0]);
      } finally {
        c.release();
      }
    }
    if (method === 'DELETE') {
      await withTx(async (c) => {
        await lockProject(c, slug);
        const r = await c.query('SELECT 1 FROM bills WHERE id = $1 AND project_slug = $2', [id, slug]);
        if (!r.rowCount) throw E.notFound('bill not found');
        await c.query('DELETE FROM bill_owers WHERE bill_id = $1', [id]);
        await c.query('DELETE FROM bills WHERE id = $1', [id]);
      });
      return send(res, 204);
    }
    const exists = await pool.query('SELECT 1 FROM bills WHERE id = $1 AND project_slug = $2', [id, slug]);
    if (!exists.rowCount) throw E.notFound('bill not found');
    const body = parseJsonObject(await readBody(req));
    const bill = await withTx(async (c) => {
      await lockProject(c, slug);
      const r = await c.query('SELECT 1 FROM bills WHERE id = $1 AND project_slug = $2', [id, slug]);
      if (!r.rowCount) throw E.notFound('bill not found');
      const { shares } = await validateBill(c, slug, body);
      await c.query('UPDATE bills SET payer_id = $1, amount_cents = $2, date = $3, description = $4 WHERE id = $5',
        [body.payer_id, body.amount_cents, body.date, body.description, id]);
      await c.query('DELETE FROM bill_owers WHERE bill_id = $1', [id]);
      await insertShares(c, id, shares);
      return (await loadBills(c, slug, id))[0];
    });
    return send(res, 200, bill);
  }
  if ((kind === 'balances' || kind === 'settlements') && idRaw === undefined) {
    route(['GET']);
    authorize(req, slug);
    const c = await pool.connect();
    try {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const items = await balances(c, slug);
      await c.query('COMMIT');
      return send(res, 200, { items: kind === 'balances' ? items : settle(items) });
    } catch (e) {
      try { await c.query('ROLLBACK'); } catch (_) { /* ignore */ }
      throw e;
    } finally {
      c.release();
    }
  }
  authorize(req, slug);
  throw E.notFound();
}

// ------------------------------------------------------------------ static page
const PUBLIC = path.join(__dirname, 'public');
const STATIC = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
};
const staticCache = new Map();
function serveStatic(req, res, p) {
  const [file, type] = STATIC[p];
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', 'method not allowed');
  if (!staticCache.has(file)) staticCache.set(file, fs.readFileSync(path.join(PUBLIC, file)));
  const buf = staticCache.get(file);
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': buf.length, 'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff' });
  res.end(req.method === 'HEAD' ? undefined : buf);
}

// ------------------------------------------------------------------ router
function decodeSeg(s) {
  try {
    return decodeURIComponent(s);
  } catch (_) {
    return s;
  }
}

let ready = false;
async function handle(req, res) {
  let pathname;
  try {
    pathname = new URL(req.url, 'http://x').pathname;
  } catch (_) {
    pathname = '/';
  }
  if (!req.url.startsWith('/')) pathname = req.url;
  const raw = req.url.split('?')[0];
  if (raw === '/health') {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    if (!ready) return send(res, 503, { error: 'internal_error', message: 'starting' });
    return send(res, 200, { status: 'ok' });
  }
  if (STATIC[raw]) return serveStatic(req, res, raw);
  const segs = raw.split('/').slice(1);
  if (segs[0] !== 'api' || segs[1] !== 'projects') throw E.notFound();
  if (segs.length === 2 || (segs.length === 3 && segs[2] === '')) {
    if (req.method !== 'POST') throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    return createProject(req, res);
  }
  const slug = decodeSeg(segs[2]);
  const rest = segs.slice(3);
  if (rest.length === 1 && rest[0] === 'token') {
    if (req.method !== 'POST') throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    return obtainToken(req, res, slug);
  }
  return projectRoutes(req, res, slug, rest.map(decodeSeg));
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((e) => {
    if (!(e instanceof ApiError)) {
      console.error('unexpected error', e);
      e = new ApiError(500, 'internal_error', 'internal error');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    // make sure an unread body does not wedge the connection
    if (!req.complete) {
      req.resume();
      res.setHeader('Connection', 'close');
    }
    sendError(res, e);
  });
});
server.keepAliveTimeout = 5000;
server.requestTimeout = 30000;

async function main() {
  server.listen(PORT, '0.0.0.0', () => console.log(`expense-split listening on ${PORT}`));
  DUMMY_HASH = await hashPassword(crypto.randomBytes(12).toString('hex'));
  for (let i = 0; ; i++) {
    try {
      await initDb();
      break;
    } catch (e) {
      console.error('database not ready:', e.message);
      if (i > 120) process.exit(1);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  ready = true;
}
main();
