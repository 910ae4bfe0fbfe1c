'use strict';
// Wiki service: node:http + pg (PostgreSQL). CommonJS, Node 18.
const http = require('node:http');
const crypto = require('node:crypto');
const { Pool } = require('pg');

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1024 * 1024;
const SLUG_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const ROLES = ['reader', 'editor', 'admin'];
const PBKDF2_ITER = 150000;
const INT_MAX = 2147483647;

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
const pool = new Pool({ ...dbConfig(), max: 8 });
pool.on('error', (e) => console.error('pg pool error', e.message));

// ---------- helpers ----------
class ApiError extends Error {
  constructor(status, code, message, extra) {
    super(message);
    this.status = status; this.code = code; this.extra = extra || null;
  }
}
const E = {
  unauthorized: (m) => new ApiError(401, 'unauthorized', m || 'authentication required'),
  forbidden: (m) => new ApiError(403, 'forbidden', m || 'forbidden'),
  notFound: (m) => new ApiError(404, 'not_found', m || 'not found'),
  validation: (fields, m) => new ApiError(422, 'validation_error', m || 'validation failed',
    { fields: [...new Set(fields)] }),
};

function send(res, status, obj) {
  if (status === 204) { res.writeHead(204); res.end(); return; }
  const data = Buffer.from(JSON.stringify(obj), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': data.length });
  res.end(data);
}

function cpLen(s) { let n = 0; for (const _ of s) n++; return n; } // eslint-disable-line no-unused-vars
function nonBlank(s) { return typeof s === 'string' && /\S/u.test(s); }
function lineCount(s) { if (s === '') return 0; let n = 1; for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) n++; return n; }
function isPosInt(v) { return typeof v === 'number' && Number.isInteger(v) && v >= 1; }
function iso(d) { return (d instanceof Date ? d : new Date(d)).toISOString(); }

function hashPassword(pw) {
  return new Promise((resolve, reject) => {
    const salt = crypto.randomBytes(16);
    crypto.pbkdf2(pw, salt, PBKDF2_ITER, 32, 'sha256', (err, key) => {
      if (err) return reject(err);
      resolve(`pbkdf2_sha256$${PBKDF2_ITER}$${salt.toString('base64')}$${key.toString('base64')}`);
    });
  });
}
function verifyPassword(pw, stored) {
  return new Promise((resolve) => {
    const parts = String(stored).split('$');
    if (parts.length !== 4) return resolve(false);
    const iter = parseInt(parts[1], 10);
    const salt = Buffer.from(parts[2], 'base64');
    const want = Buffer.from(parts[3], 'base64');
    crypto.pbkdf2(pw, salt, iter, want.length, 'sha256', (err, key) => {
      if (err) return resolve(false);
      resolve(crypto.timingSafeEqual(key, want));
    });
  });
}

function jsonDepthOk(text, limit) {
  let depth = 0, inStr = false, esc = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (esc) esc = false;
      else if (c === 92) esc = true;
      else if (c === 34) inStr = false;
    } else if (c === 34) inStr = true;
    else if (c === 91 || c === 123) { if (++depth > limit) return false; }
    else if (c === 93 || c === 125) depth--;
  }
  return true;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = []; let size = 0; let tooBig = false;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) { tooBig = true; chunks.length = 0; return; }
      chunks.push(c);
    });
    req.on('end', () => resolve(tooBig ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJsonBody(raw) {
  if (raw === null) throw new ApiError(413, 'payload_too_large', 'request body larger than 1 MiB');
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(raw); } catch (e) { throw E.validation(['body'], 'body is not valid UTF-8'); }
  if (!jsonDepthOk(text, 32)) throw E.validation(['body'], 'body nested too deeply');
  let data;
  try { data = JSON.parse(text); } catch (e) { throw E.validation(['body'], 'body is not valid JSON'); }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw E.validation(['body'], 'body must be a JSON object');
  return data;
}
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function pagination(q, fields) {
  let limit = 20, offset = 0;
  if (q.has('limit')) {
    const v = q.get('limit');
    if (/^[0-9]{1,3}$/.test(v) && +v >= 1 && +v <= 100) limit = +v; else fields.push('limit');
  }
  if (q.has('offset')) {
    const v = q.get('offset');
    if (/^[0-9]{1,9}$/.test(v)) offset = +v; else fields.push('offset');
  }
  return { limit, offset };
}

// A simple async mutex: every mutating request runs alone, so checks and writes never race.
let chain = Promise.resolve();
function exclusive(fn) {
  const run = chain.then(fn, fn);
  chain = run.then(() => {}, () => {});
  return run;
}

async function tx(fn) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const r = await fn(client);
    await client.query('COMMIT');
    return r;
  } catch (e) {
    try { await client.query('ROLLBACK'); } catch (_) { /* ignore */ }
    throw e;
  } finally { client.release(); }
}

// ---------- schema ----------
async function initDb() {
  await pool.query(`
    CREATE TABLE IF NOT EXISTS users (
      id SERIAL PRIMARY KEY,
      username TEXT NOT NULL UNIQUE,
      password_hash TEXT NOT NULL,
      role TEXT NOT NULL CHECK (role IN ('reader','editor','admin')),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS pages (
      id SERIAL PRIMARY KEY,
      slug TEXT NOT NULL UNIQUE,
      title TEXT NOT NULL,
      protected BOOLEAN NOT NULL DEFAULT false,
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE IF NOT EXISTS revisions (
      id SERIAL PRIMARY KEY,
      page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
      number INTEGER NOT NULL,
      title TEXT NOT NULL,
      body TEXT NOT NULL,
      summary TEXT NOT NULL,
      author_id INTEGER NOT NULL REFERENCES users(id),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
      UNIQUE (page_id, number)
    );
    CREATE TABLE IF NOT EXISTS redirects (
      slug TEXT PRIMARY KEY,
      page_id INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE
    );
    CREATE TABLE IF NOT EXISTS tokens (
      token_hash TEXT PRIMARY KEY,
      user_id INTEGER NOT NULL REFERENCES users(id),
      created_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
  `);
  const u = process.env.ADMIN_USERNAME || 'admin';
  const p = process.env.ADMIN_PASSWORD || 'admin-password';
  const r = await pool.query('SELECT id FROM users WHERE username = $1', [u]);
  if (r.rowCount === 0) {
    const h = await hashPassword(p);
    await pool.query(`INSERT INTO users (username, password_hash, role) VALUES ($1, $2, 'admin')
                      ON CONFLICT (username) DO NOTHING`, [u, h]);
  }
}

// ---------- representations ----------
const pubUser = (u) => ({ id: u.id, username: u.username, role: u.role, created_at: iso(u.created_at) });

async function pageRepr(db, pageId) {
  const r = await db.query(`SELECT p.id, p.slug, p.title, p.protected, p.created_at, r.number, r.body
    FROM pages p JOIN revisions r ON r.page_id = p.id
    WHERE p.id = $1 ORDER BY r.number DESC LIMIT 1`, [pageId]);
  const p = r.rows[0];
  return { id: p.id, slug: p.slug, title: p.title, body: p.body, protected: p.protected,
    revision: p.number, created_at: iso(p.created_at) };
}

// the current page row (with current revision) by its own slug, or 404
async function pageBySlug(db, slug, lock) {
  if (typeof slug !== 'string' || slug.length > 100 || !SLUG_RE.test(slug)) throw E.notFound('page not found');
  const r = await db.query(`SELECT p.id, p.slug, p.title, p.protected,
      (SELECT max(number) FROM revisions WHERE page_id = p.id) AS current
    FROM pages p WHERE p.slug = $1${lock ? ' FOR UPDATE' : ''}`, [slug]);
  if (r.rowCount === 0) throw E.notFound('page not found');
  return r.rows[0];
}

// ---------- auth ----------
const tokenHash = (t) => crypto.createHash('sha256').update(t).digest('hex');
async function authenticate(req) {
  const h = req.headers.authorization || '';
  const m = /^Bearer ([^\s]+)\s*$/i.exec(h);
  if (!m) throw E.unauthorized('missing or malformed bearer token');
  const r = await pool.query(`SELECT u.* FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1`, [tokenHash(m[1])]);
  if (r.rowCount === 0) throw E.unauthorized('invalid token');
  return r.rows[0];
}
function needRole(user, roles) { if (!roles.includes(user.role)) throw E.forbidden('your role does not allow this'); }

// ---------- validation ----------
function checkSummary(b, f) {
  if (!has(b, 'summary')) return '';
  const s = b.summary;
  if (typeof s !== 'string' || cpLen(s) > 500) { f.push('summary'); return ''; }
  return s;
}
function checkBodyText(b, f) {
  const v = b.body;
  if (typeof v !== 'string' || v.length > 40000 || cpLen(v) > 20000 || lineCount(v) > 1000) { f.push('body'); return null; }
  return v;
}
function checkTitle(v) { return typeof v === 'string' && nonBlank(v) && cpLen(v) <= 200; }
function checkSlug(v) { return typeof v === 'string' && v.length <= 100 && SLUG_RE.test(v); }

// ---------- LCS ----------
function splitLines(s) { return s === '' ? [] : s.split('\n'); }
function lcs(a, b) {
  let s = 0;
  while (s < a.length && s < b.length && a[s] === b[s]) s++;
  let ea = a.length, eb = b.length;
  while (ea > s && eb > s && a[ea - 1] === b[eb - 1]) { ea--; eb--; }
  const common = s + (a.length - ea);
  const A = a.slice(s, ea), B = b.slice(s, eb);
  if (!A.length || !B.length) return common;
  // map lines to ints for fast comparison
  const ids = new Map(); const ai = new Int32Array(A.length); const bi = new Int32Array(B.length);
  const id = (x) => { let v = ids.get(x); if (v === undefined) { v = ids.size; ids.set(x, v); } return v; };
  for (let i = 0; i < A.length; i++) ai[i] = id(A[i]);
  for (let j = 0; j < B.length; j++) bi[j] = id(B[j]);
  let prev = new Int32Array(B.length + 1), cur = new Int32Array(B.length + 1);
  for (let i = 1; i <= A.length; i++) {
    const x = ai[i - 1];
    for (let j = 1; j <= B.length; j++) {
      if (x === bi[j - 1]) cur[j] = prev[j - 1] + 1;
      else cur[j] = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
    }
    const t = prev; prev = cur; cur = t;
  }
  return common + prev[B.length];
}

// ---------- handlers ----------
async function login(req, raw) {
  const b = parseJsonBody(raw);
  const f = [];
  if (typeof b.username !== 'string') f.push('username');
  if (typeof b.password !== 'string') f.push('password');
  if (f.length) throw E.validation(f);
  const r = await pool.query('SELECT * FROM users WHERE username = $1', [b.username]);
  if (r.rowCount === 0) { await hashPassword(b.password); throw E.unauthorized('invalid credentials'); }
  const u = r.rows[0];
  if (!(await verifyPassword(b.password, u.password_hash))) throw E.unauthorized('invalid credentials');
  const token = crypto.randomBytes(32).toString('base64url');
  await pool.query('INSERT INTO tokens (token_hash, user_id) VALUES ($1, $2)', [tokenHash(token), u.id]);
  return [200, { token, token_type: 'bearer', user: pubUser(u) }];
}

async function listUsers(user) {
  needRole(user, ['admin']);
  const r = await pool.query('SELECT * FROM users ORDER BY id');
  return [200, { items: r.rows.map(pubUser) }];
}

async function createUser(user, raw) {
  needRole(user, ['admin']);
  const b = parseJsonBody(raw);
  const f = [];
  if (typeof b.username !== 'string' || !USERNAME_RE.test(b.username)) f.push('username');
  if (typeof b.password !== 'string' || cpLen(b.password) < 8 || cpLen(b.password) > 128) f.push('password');
  if (typeof b.role !== 'string' || !ROLES.includes(b.role)) f.push('role');
  if (f.length) throw E.validation(f);
  const h = await hashPassword(b.password);
  return exclusive(async () => {
    const ex = await pool.query('SELECT 1 FROM users WHERE username = $1', [b.username]);
    if (ex.rowCount) throw new ApiError(409, 'username_taken', 'username is taken');
    try {
      const r = await pool.query('INSERT INTO users (username, password_hash, role) VALUES ($1, $2, $3) RETURNING *',
        [b.username, h, b.role]);
      return [201, pubUser(r.rows[0])];
    } catch (e) {
      if (e.code === '23505') throw new ApiError(409, 'username_taken', 'username is taken');
      throw e;
    }
  });
}

async function listPages(url) {
  const q = url.searchParams; const f = [];
  const { limit, offset } = pagination(q, f);
  const text = q.has('q') ? q.get('q') : '';
  if (cpLen(text) > 100) f.push('q');
  if (f.length) throw E.validation(f);
  const where = text === '' ? 'TRUE' : 'strpos(lower(p.title), lower($3)) > 0';
  const params = text === '' ? [limit, offset] : [limit, offset, text];
  const cnt = await pool.query(`SELECT count(*)::int AS n FROM pages p WHERE ${where.replace('$3', '$1')}`,
    text === '' ? [] : [text]);
  const r = await pool.query(`SELECT p.id, p.slug, p.title, p.protected,
      (SELECT max(number) FROM revisions WHERE page_id = p.id) AS revision
    FROM pages p WHERE ${where} ORDER BY p.created_at, p.id LIMIT $1 OFFSET $2`, params);
  return [200, { items: r.rows.map((p) => ({ id: p.id, slug: p.slug, title: p.title, protected: p.protected, revision: p.revision })),
    total: cnt.rows[0].n, limit, offset }];
}

async function createPage(user, raw) {
  needRole(user, ['editor', 'admin']);
  const b = parseJsonBody(raw);
  const f = [];
  if (!checkSlug(b.slug)) f.push('slug');
  if (!checkTitle(b.title)) f.push('title');
  const body = checkBodyText(b, f);
  const summary = checkSummary(b, f);
  if (f.length) throw E.validation(f);
  return exclusive(() => tx(async (db) => {
    const ex = await db.query('SELECT 1 FROM pages WHERE slug = $1', [b.slug]);
    if (ex.rowCount) throw new ApiError(409, 'slug_taken', 'a page has this slug');
    await db.query('DELETE FROM redirects WHERE slug = $1', [b.slug]);
    const p = await db.query('INSERT INTO pages (slug, title, protected) VALUES ($1, $2, false) RETURNING id', [b.slug, b.title]);
    await db.query(`INSERT INTO revisions (page_id, number, title, body, summary, author_id)
      VALUES ($1, 1, $2, $3, $4, $5)`, [p.rows[0].id, b.title, body, summary, user.id]);
    return [201, await pageRepr(db, p.rows[0].id)];
  }));
}

async function getPage(slug) {
  if (typeof slug === 'string' && slug.length <= 100 && SLUG_RE.test(slug)) {
    const r = await pool.query('SELECT id FROM pages WHERE slug = $1', [slug]);
    if (r.rowCount) return [200, { ...(await pageRepr(pool, r.rows[0].id)), redirected_from: null }];
    const rd = await pool.query('SELECT page_id FROM redirects WHERE slug = $1', [slug]);
    if (rd.rowCount) return [200, { ...(await pageRepr(pool, rd.rows[0].page_id)), redirected_from: slug }];
  }
  throw E.notFound('page not found');
}

async function newRevision(db, page, title, body, summary, user) {
  await db.query(`INSERT INTO revisions (page_id, number, title, body, summary, author_id)
    VALUES ($1, $2, $3, $4, $5, $6)`, [page.id, page.current + 1, title, body, summary, user.id]);
  await db.query('UPDATE pages SET title = $2 WHERE id = $1', [page.id, title]);
}

async function editPage(user, slug, raw) {
  needRole(user, ['editor', 'admin']);
  return exclusive(() => tx(async (db) => {
    const page = await pageBySlug(db, slug, true);
    if (page.protected && user.role !== 'admin') throw E.forbidden('the page is protected');
    const b = parseJsonBody(raw);
    const f = [];
    const body = checkBodyText(b, f);
    if (!isPosInt(b.base_revision)) f.push('base_revision');
    if (has(b, 'title') && !checkTitle(b.title)) f.push('title');
    const summary = checkSummary(b, f);
    if (f.length) throw E.validation(f);
    if (b.base_revision !== page.current) {
      throw new ApiError(409, 'edit_conflict', 'the page was changed since base_revision', { current_revision: page.current });
    }
    const title = has(b, 'title') ? b.title : page.title;
    const cur = await db.query('SELECT body FROM revisions WHERE page_id = $1 AND number = $2', [page.id, page.current]);
    if (!(title === page.title && body === cur.rows[0].body)) {
      await newRevision(db, page, title, body, summary, user);
    }
    return [200, await pageRepr(db, page.id)];
  }));
}

async function deletePage(user, slug) {
  needRole(user, ['admin']);
  return exclusive(() => tx(async (db) => {
    const page = await pageBySlug(db, slug, true);
    await db.query('DELETE FROM redirects WHERE page_id = $1', [page.id]);
    await db.query('DELETE FROM revisions WHERE page_id = $1', [page.id]);
    await db.query('DELETE FROM pages WHERE id = $1', [page.id]);
    return [204, null];
  }));
}

async function setProtection(user, slug, raw) {
  needRole(user, ['admin']);
  return exclusive(() => tx(async (db) => {
    const page = await pageBySlug(db, slug, true);
    const b = parseJsonBody(raw);
    if (typeof b.protected !== 'boolean') throw E.validation(['protected']);
    await db.query('UPDATE pages SET protected = $2 WHERE id = $1', [page.id, b.protected]);
    return [200, await pageRepr(db, page.id)];
  }));
}

async function movePage(user, slug, raw) {
  needRole(user, ['editor', 'admin']);
  return exclusive(() => tx(async (db) => {
    const page = await pageBySlug(db, slug, true);
    if (page.protected && user.role !== 'admin') throw E.forbidden('the page is protected');
    const b = parseJsonBody(raw);
    if (!checkSlug(b.new_slug)) throw E.validation(['new_slug']);
    const ex = await db.query('SELECT 1 FROM pages WHERE slug = $1', [b.new_slug]);
    if (ex.rowCount) throw new ApiError(409, 'slug_taken', 'a page has this slug');
    await db.query('DELETE FROM redirects WHERE slug = $1', [b.new_slug]);
    await db.query('UPDATE pages SET slug = $2 WHERE id = $1', [page.id, b.new_slug]);
    await db.query(`INSERT INTO redirects (slug, page_id) VALUES ($1, $2)
      ON CONFLICT (slug) DO UPDATE SET page_id = EXCLUDED.page_id`, [page.slug, page.id]);
    return [200, await pageRepr(db, page.id)];
  }));
}

async function revertPage(user, slug, raw) {
  needRole(user, ['editor', 'admin']);
  return exclusive(() => tx(async (db) => {
    const page = await pageBySlug(db, slug, true);
    if (page.protected && user.role !== 'admin') throw E.forbidden('the page is protected');
    const b = parseJsonBody(raw);
    const f = [];
    let target = null;
    if (!isPosInt(b.revision) || b.revision > INT_MAX) f.push('revision');
    else {
      const r = await db.query('SELECT title, body FROM revisions WHERE page_id = $1 AND number = $2', [page.id, b.revision]);
      if (r.rowCount === 0) f.push('revision'); else target = r.rows[0];
    }
    let summary = checkSummary(b, f);
    if (f.length) throw E.validation(f);
    if (!has(b, 'summary')) summary = `Reverted to revision ${b.revision}`;
    const cur = await db.query('SELECT title, body FROM revisions WHERE page_id = $1 AND number = $2', [page.id, page.current]);
    if (!(cur.rows[0].title === target.title && cur.rows[0].body === target.body)) {
      await newRevision(db, page, target.title, target.body, summary, user);
    }
    return [200, await pageRepr(db, page.id)];
  }));
}

async function listRevisions(slug, url) {
  const page = await pageBySlug(pool, slug, false);
  const f = [];
  const { limit, offset } = pagination(url.searchParams, f);
  if (f.length) throw E.validation(f);
  const r = await pool.query(`SELECT r.number, r.title, r.summary, u.username AS author, r.created_at
    FROM revisions r JOIN users u ON u.id = r.author_id WHERE r.page_id = $1
    ORDER BY r.number DESC LIMIT $2 OFFSET $3`, [page.id, limit, offset]);
  return [200, { items: r.rows.map((x) => ({ number: x.number, title: x.title, summary: x.summary, author: x.author, created_at: iso(x.created_at) })),
    total: page.current, limit, offset }];
}

function revNumber(s) {
  if (typeof s !== 'string' || !/^[1-9][0-9]{0,9}$/.test(s) || +s > INT_MAX) return null;
  return +s;
}

async function getRevision(slug, numStr) {
  const page = await pageBySlug(pool, slug, false);
  const n = revNumber(numStr);
  if (n === null) throw E.notFound('revision not found');
  const r = await pool.query(`SELECT r.number, r.title, r.body, r.summary, u.username AS author, r.created_at
    FROM revisions r JOIN users u ON u.id = r.author_id WHERE r.page_id = $1 AND r.number = $2`, [page.id, n]);
  if (r.rowCount === 0) throw E.notFound('revision not found');
  const x = r.rows[0];
  return [200, { number: x.number, title: x.title, body: x.body, summary: x.summary, author: x.author, created_at: iso(x.created_at) }];
}

async function diff(slug, url) {
  const page = await pageBySlug(pool, slug, false);
  const q = url.searchParams; const f = [];
  const parse = (name) => {
    const v = q.get(name);
    if (v === null || !/^[0-9]+$/.test(v) || !/[1-9]/.test(v)) { f.push(name); return null; }
    return v.replace(/^0+/, '');
  };
  const a = parse('from'), b = parse('to');
  if (f.length) throw E.validation(f);
  const fetchRev = async (s) => {
    if (s.length > 10 || +s > INT_MAX) return null;
    const r = await pool.query('SELECT title, body FROM revisions WHERE page_id = $1 AND number = $2', [page.id, +s]);
    return r.rowCount ? r.rows[0] : null;
  };
  const ra = await fetchRev(a), rb = await fetchRev(b);
  if (!ra || !rb) throw E.notFound('revision not found');
  const F = splitLines(ra.body), T = splitLines(rb.body);
  const L = lcs(F, T);
  return [200, { from: +a, to: +b, removed: F.length - L, added: T.length - L, unchanged: L, title_changed: ra.title !== rb.title }];
}

// ---------- router ----------
function decodeSeg(s) { try { return decodeURIComponent(s); } catch (e) { return null; } }

async function route(req, res) {
  const url = new URL(req.url, 'http://localhost');
  const rawPath = url.pathname;
  const segs = rawPath.split('/').slice(1).map(decodeSeg);
  const m = req.method;
  const raw = ['POST', 'PUT', 'PATCH'].includes(m) ? await readBody(req) : (req.resume(), null);
  const allow = (methods) => { if (!methods.includes(m)) throw new ApiError(405, 'method_not_allowed', 'method not allowed'); };
  const p = segs;

  if (rawPath === '/health') { allow(['GET']); return [200, { status: 'ok' }]; }
  if (rawPath === '/auth/login') { allow(['POST']); return login(req, raw); }
  if (rawPath === '/me') { allow(['GET']); const u = await authenticate(req); return [200, pubUser(u)]; }
  if (rawPath === '/users') {
    allow(['GET', 'POST']);
    const u = await authenticate(req);
    return m === 'GET' ? listUsers(u) : createUser(u, raw);
  }
  if (rawPath === '/pages') {
    allow(['GET', 'POST']);
    const u = await authenticate(req);
    return m === 'GET' ? listPages(url) : createPage(u, raw);
  }
  if (p[0] === 'pages' && p.length >= 2 && p.length <= 4) {
    const slug = p[1];
    if (slug === null) { await authenticate(req); throw E.notFound(); }
    if (p.length === 2) {
      allow(['GET', 'PUT', 'DELETE']);
      const u = await authenticate(req);
      if (m === 'GET') return getPage(slug);
      if (m === 'PUT') return editPage(u, slug, raw);
      return deletePage(u, slug);
    }
    const sub = p[2];
    if (p.length === 3) {
      const u0 = () => authenticate(req);
      if (sub === 'protection') { allow(['PUT']); return setProtection(await u0(), slug, raw); }
      if (sub === 'move') { allow(['POST']); return movePage(await u0(), slug, raw); }
      if (sub === 'revert') { allow(['POST']); return revertPage(await u0(), slug, raw); }
      if (sub === 'revisions') { allow(['GET']); await u0(); return listRevisions(slug, url); }
      if (sub === 'diff') { allow(['GET']); await u0(); return diff(slug, url); }
    }
    if (p.length === 4 && sub === 'revisions') {
      allow(['GET']);
      await authenticate(req);
      return getRevision(slug, p[3]);
    }
  }
  throw E.notFound('no such path');
}

const server = http.createServer((req, res) => {
  route(req, res).then(([status, obj]) => send(res, status, obj)).catch((e) => {
    if (e instanceof ApiError) {
      const b = { error: e.code, message: e.message, ...(e.extra || {}) };
      if (e.status === 413) res.setHeader('Connection', 'close');
      return send(res, e.status, b);
    }
    console.error(e);
    send(res, 500, { error: 'internal_error', message: 'internal error' });
  });
});
server.requestTimeout = 30000;

async function main() {
  for (let attempt = 0; ; attempt++) {
    try { await initDb(); break; } catch (e) {
      if (attempt >= 60) throw e;
      console.error('database not ready:', e.message);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  server.listen(PORT, '0.0.0.0', () => console.log(`wiki listening on ${PORT}`));
}
main().catch((e) => { console.error(e); process.exit(1); });
