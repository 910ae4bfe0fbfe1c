'use strict';
// Forms: owners build typed forms, publish them, collect public responses; summaries and CSV.
// One node:http service: JSON API under /api, the respondent page at /f/{slug}, state in
// PostgreSQL (pg). Bearer tokens live in memory (the spec allows losing them on restart).

const http = require('node:http');
const crypto = require('node:crypto');
const { Pool } = require('pg');

const PORT = parseInt(process.env.PORT || '8000', 10);
const MAX_BODY = 1024 * 1024;
const DRAIN_LIMIT = 64 * 1024 * 1024;
const MAX_DEPTH = 32;
const INT_MAX = 2147483647;
const TYPES = ['short_text', 'number', 'single_choice', 'multiple_choice'];

// ---------------------------------------------------------------------------------------------
// Database

function poolConfig() {
  if (process.env.DATABASE_URL) return { connectionString: process.env.DATABASE_URL };
  return {
    host: process.env.DB_HOST || '127.0.0.1',
    port: parseInt(process.env.DB_PORT || '5432', 10),
    user: process.env.DB_USERNAME || 'postgres',
    password: process.env.DB_PASSWORD || '',
    database: process.env.DB_NAME || 'postgres',
  };
}

const pool = new Pool({ ...poolConfig(), max: parseInt(process.env.DB_POOL_SIZE || '10', 10) });
pool.on('error', (err) => console.error('idle client error', err.message));

const SCHEMA = `
CREATE TABLE IF NOT EXISTS owners (
  id SERIAL PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS forms (
  id SERIAL PRIMARY KEY,
  owner_id INTEGER NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL CHECK (status IN ('draft', 'published', 'closed')),
  response_limit INTEGER CHECK (response_limit IS NULL OR response_limit BETWEEN 1 AND 100000),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS questions (
  id SERIAL PRIMARY KEY,
  form_id INTEGER NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  position INTEGER NOT NULL CHECK (position >= 1),
  type TEXT NOT NULL,
  title TEXT NOT NULL,
  required BOOLEAN NOT NULL DEFAULT false,
  settings TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS responses (
  id SERIAL PRIMARY KEY,
  form_id INTEGER NOT NULL REFERENCES forms(id) ON DELETE CASCADE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  answers TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS forms_owner_idx ON forms (owner_id, id);
CREATE INDEX IF NOT EXISTS questions_form_idx ON questions (form_id, position);
CREATE INDEX IF NOT EXISTS responses_form_idx ON responses (form_id, id);
`;

async function initDb() {
  let lastErr;
  for (let attempt = 0; attempt < 60; attempt++) {
    try {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock(5524001)');
        try {
          await client.query(SCHEMA);
        } finally {
          await client.query('SELECT pg_advisory_unlock(5524001)');
        }
      } finally {
        client.release();
      }
      return;
    } catch (err) {
      lastErr = err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  throw lastErr;
}

async function tx(fn) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    try { await client.query('ROLLBACK'); } catch (_) { /* connection already broken */ }
    throw err;
  } finally {
    client.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Errors and responses

class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

const notFound = (what) => new ApiError(404, 'not_found', `${what || 'resource'} not found`);
const unauthorized = () => new ApiError(401, 'unauthorized', 'a valid bearer token is required');
const invalid = (fields, message) =>
  new ApiError(422, 'validation_error', message || `invalid or missing fields: ${fields.join(', ')}`, fields);

function send(res, status, payload, headers) {
  if (status === 204) {
    res.writeHead(204, headers || {});
    res.end();
    return;
  }
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length, ...(headers || {}) });
  res.end(body);
}

function sendError(res, err) {
  const payload = { error: err.code, message: err.message };
  if (err.fields) payload.fields = err.fields;
  send(res, err.status, payload, err.headers);
}

// ---------------------------------------------------------------------------------------------
// Passwords: Werkzeug-compatible scrypt hashes, "scrypt:32768:8:1$<salt>$<hex>".

const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const SALT_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function genSalt(length) {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += SALT_CHARS[bytes[i] % SALT_CHARS.length];
  return out;
}

function scryptHex(password, salt, N, r, p) {
  return new Promise((resolve, reject) => {
    crypto.scrypt(Buffer.from(password, 'utf8'), Buffer.from(salt, 'utf8'), 64,
      { N, r, p, maxmem: Math.max(SCRYPT.maxmem, 132 * N * r * p) },
      (err, key) => (err ? reject(err) : resolve(key.toString('hex'))));
  });
}

async function hashPassword(password) {
  const salt = genSalt(16);
  const hex = await scryptHex(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p);
  return `scrypt:${SCRYPT.N}:${SCRYPT.r}:${SCRYPT.p}$${salt}$${hex}`;
}

async function verifyPassword(stored, password) {
  const m = /^scrypt:(\d+):(\d+):(\d+)\$([^$]+)\$([0-9a-f]+)$/.exec(stored || '');
  if (!m) return false;
  const hex = await scryptHex(password, m[4], +m[1], +m[2], +m[3]);
  const a = Buffer.from(hex, 'hex');
  const b = Buffer.from(m[5], 'hex');
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

let dummyHash = null;

// ---------------------------------------------------------------------------------------------
// Tokens (in memory)

const tokens = new Map(); // sha256(token) -> owner id

function tokenDigest(token) {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

async function authenticate(req) {
  const header = req.headers.authorization || '';
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw unauthorized();
  const ownerId = tokens.get(tokenDigest(m[1]));
  if (ownerId === undefined) throw unauthorized();
  const { rows } = await pool.query('SELECT id, email, created_at FROM owners WHERE id = $1', [ownerId]);
  if (!rows.length) throw unauthorized();
  return rows[0];
}

// ---------------------------------------------------------------------------------------------
// Bodies and validation helpers

function readBody(req) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        tooLarge = true;
        if (size > DRAIN_LIMIT) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve({ tooLarge, raw: tooLarge ? null : Buffer.concat(chunks) }));
    req.on('error', () => resolve({ tooLarge, raw: null, broken: true }));
    req.on('close', () => resolve({ tooLarge, raw: tooLarge ? null : Buffer.concat(chunks) }));
  });
}

function jsonDepth(text) {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped char
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > MAX_DEPTH) return max;
      }
    } else if (c === 125 || c === 93) depth--;
  }
  return max;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parseBody(body) {
  if (body.tooLarge) {
    throw new ApiError(413, 'payload_too_large', 'the body is larger than 1 MiB');
  }
  let text;
  try {
    text = utf8.decode(body.raw || Buffer.alloc(0));
  } catch (_) {
    throw invalid(['body'], 'the body is not valid UTF-8 JSON');
  }
  if (jsonDepth(text) > MAX_DEPTH) throw invalid(['body'], 'the body is nested more than 32 levels deep');
  let data;
  try {
    data = JSON.parse(text);
  } catch (_) {
    throw invalid(['body'], 'the body must be a JSON object');
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw invalid(['body'], 'the body must be a JSON object');
  }
  return data;
}

const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);
const ulen = (s) => { let n = 0; for (const _ of s) n++; return n; }; // eslint-disable-line no-unused-vars
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (s) => !LONE_SURROGATE.test(s);
const nonBlank = (s) => s.trim().length > 0 && /[^\s\uFEFF\u00A0]/.test(s);
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
// Text that PostgreSQL's text type can hold verbatim (no NUL, valid UTF-16).
const storable = (s) => wellFormed(s) && !s.includes('\u0000');

function pathId(raw) {
  if (!/^[0-9]{1,10}$/.test(raw)) return null;
  const n = parseInt(raw, 10);
  if (n < 1 || n > INT_MAX) return null;
  return n;
}

function iso(d) {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, (m) => (m === '.000Z' ? 'Z' : m));
}

// ---------------------------------------------------------------------------------------------
// Serialisation

function questionJson(row) {
  const s = JSON.parse(row.settings || '{}');
  const q = { id: row.id, position: row.position, type: row.type, title: row.title, required: row.required };
  if (row.type === 'short_text') q.max_length = s.max_length;
  else if (row.type === 'number') { q.min = s.min; q.max = s.max; }
  else if (row.type === 'single_choice') q.options = s.options;
  else if (row.type === 'multiple_choice') {
    q.options = s.options;
    q.min_selections = s.min_selections;
    q.max_selections = s.max_selections;
  }
  return q;
}

function formJson(row, questions) {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    status: row.status,
    response_limit: row.response_limit,
    response_count: Number(row.response_count || 0),
    questions: questions.map(questionJson),
    created_at: iso(row.created_at),
  };
}

const FORM_SELECT = `SELECT f.*, (SELECT count(*) FROM responses r WHERE r.form_id = f.id) AS response_count FROM forms f`;

async function loadQuestions(db, formId) {
  const { rows } = await db.query('SELECT * FROM questions WHERE form_id = $1 ORDER BY position, id', [formId]);
  return rows;
}

async function ownedForm(db, owner, rawId, lock) {
  const id = pathId(rawId);
  if (id === null) throw notFound('form');
  const sql = lock
    ? 'SELECT * FROM forms WHERE id = $1 AND owner_id = $2 FOR UPDATE'
    : FORM_SELECT + ' WHERE f.id = $1 AND f.owner_id = $2';
  const { rows } = await db.query(sql, [id, owner.id]);
  if (!rows.length) throw notFound('form');
  return rows[0];
}

async function fullForm(db, formId) {
  const { rows } = await db.query(FORM_SELECT + ' WHERE f.id = $1', [formId]);
  return formJson(rows[0], await loadQuestions(db, formId));
}

// ---------------------------------------------------------------------------------------------
// Accounts

const EMAIL_RE = /^[^\s@]+@(?:[^\s@.]+\.)+[^\s@.]+$/;

async function registerOwner(req, res, body) {
  const data = parseBody(body);
  const bad = [];
  const { email, password } = data;
  if (typeof email !== 'string' || ulen(email) > 254 || !EMAIL_RE.test(email) || /[\u0000-\u001f\u007f]/.test(email) || !wellFormed(email)) bad.push('email');
  if (typeof password !== 'string' || ulen(password) < 8 || ulen(password) > 128 || !wellFormed(password)) bad.push('password');
  if (bad.length) throw invalid(bad);
  const lower = email.toLowerCase();
  const hash = await hashPassword(password);
  try {
    const { rows } = await pool.query(
      'INSERT INTO owners (email, password_hash) VALUES ($1, $2) RETURNING id, email, created_at', [lower, hash]);
    send(res, 201, ownerJson(rows[0]));
  } catch (err) {
    if (err.code === '23505') throw new ApiError(409, 'email_taken', 'this email is already registered');
    throw err;
  }
}

function ownerJson(row) {
  return { id: row.id, email: row.email, created_at: iso(row.created_at) };
}

async function logIn(req, res, body) {
  const data = parseBody(body);
  const bad = [];
  if (typeof data.email !== 'string') bad.push('email');
  if (typeof data.password !== 'string') bad.push('password');
  if (bad.length) throw invalid(bad);
  let row = null;
  if (storable(data.email)) {
    const { rows } = await pool.query('SELECT * FROM owners WHERE email = $1', [data.email.toLowerCase()]);
    row = rows[0] || null;
  }
  const ok = await verifyPassword(row ? row.password_hash : dummyHash, data.password);
  if (!row || !ok) throw new ApiError(401, 'invalid_credentials', 'wrong email or password');
  const token = crypto.randomBytes(32).toString('base64url');
  tokens.set(tokenDigest(token), row.id);
  send(res, 200, { token, owner: ownerJson(row) });
}

// ---------------------------------------------------------------------------------------------
// Forms

function newSlug() {
  return crypto.randomBytes(12).toString('base64url'); // 16 chars of A-Za-z0-9-_
}

async function createForm(req, res, owner, body) {
  const data = parseBody(body);
  const bad = [];
  const { title } = data;
  if (typeof title !== 'string' || !nonBlank(title) || ulen(title) > 200 || !storable(title)) bad.push('title');
  let limit = null;
  if (has(data, 'response_limit') && data.response_limit !== null) {
    limit = data.response_limit;
    if (!isInt(limit) || limit < 1 || limit > 100000) bad.push('response_limit');
  }
  if (bad.length) throw invalid(bad);
  for (let attempt = 0; ; attempt++) {
    try {
      const { rows } = await pool.query(
        `INSERT INTO forms (owner_id, title, slug, status, response_limit) VALUES ($1, $2, $3, 'draft', $4) RETURNING *, 0 AS response_count`,
        [owner.id, title, newSlug(), limit]);
      send(res, 201, formJson(rows[0], []));
      return;
    } catch (err) {
      if (err.code === '23505' && attempt < 5) continue;
      throw err;
    }
  }
}

async function listForms(req, res, owner) {
  const { rows } = await pool.query(FORM_SELECT + ' WHERE f.owner_id = $1 ORDER BY f.id', [owner.id]);
  const { rows: qs } = await pool.query(
    'SELECT q.* FROM questions q JOIN forms f ON f.id = q.form_id WHERE f.owner_id = $1 ORDER BY q.form_id, q.position, q.id', [owner.id]);
  const byForm = new Map();
  for (const q of qs) {
    if (!byForm.has(q.form_id)) byForm.set(q.form_id, []);
    byForm.get(q.form_id).push(q);
  }
  send(res, 200, { items: rows.map((f) => formJson(f, byForm.get(f.id) || [])) });
}

async function getForm(req, res, owner, id) {
  const form = await ownedForm(pool, owner, id);
  send(res, 200, formJson(form, await loadQuestions(pool, form.id)));
}

async function deleteForm(req, res, owner, id) {
  await tx(async (db) => {
    const form = await ownedForm(db, owner, id, true);
    await db.query('DELETE FROM responses WHERE form_id = $1', [form.id]);
    await db.query('DELETE FROM questions WHERE form_id = $1', [form.id]);
    await db.query('DELETE FROM forms WHERE id = $1', [form.id]);
  });
  send(res, 204);
}

function validateOptions(data, bad) {
  const opts = data.options;
  if (!Array.isArray(opts) || opts.length < 2 || opts.length > 20) { bad.push('options'); return null; }
  const seen = new Set();
  for (const o of opts) {
    if (typeof o !== 'string' || !nonBlank(o) || ulen(o) > 100 || !storable(o) || seen.has(o)) { bad.push('options'); return null; }
    seen.add(o);
  }
  return opts.slice();
}

function validateQuestion(data) {
  const bad = [];
  const { type, title } = data;
  if (typeof type !== 'string' || !TYPES.includes(type)) bad.push('type');
  if (typeof title !== 'string' || !nonBlank(title) || ulen(title) > 500 || !storable(title)) bad.push('title');
  let required = false;
  if (has(data, 'required')) {
    if (typeof data.required !== 'boolean') bad.push('required');
    else required = data.required;
  }
  const settings = {};
  if (type === 'short_text') {
    settings.max_length = 500;
    if (has(data, 'max_length')) {
      const v = data.max_length;
      if (!isInt(v) || v < 1 || v > 5000) bad.push('max_length');
      else settings.max_length = v;
    }
  } else if (type === 'number') {
    settings.min = null;
    settings.max = null;
    for (const k of ['min', 'max']) {
      if (has(data, k) && data[k] !== null) {
        if (!isNum(data[k])) bad.push(k);
        else settings[k] = data[k];
      }
    }
    if (settings.min !== null && settings.max !== null && settings.min > settings.max) bad.push('min', 'max');
  } else if (type === 'single_choice') {
    settings.options = validateOptions(data, bad);
  } else if (type === 'multiple_choice') {
    const opts = validateOptions(data, bad);
    settings.options = opts;
    let minSel = 0;
    let maxSel = opts ? opts.length : null;
    let minOk = true;
    let maxOk = true;
    if (has(data, 'min_selections')) {
      const v = data.min_selections;
      if (!isInt(v) || v < 0 || (opts && v > opts.length)) { bad.push('min_selections'); minOk = false; } else minSel = v;
    }
    if (has(data, 'max_selections')) {
      const v = data.max_selections;
      if (!isInt(v) || v < 0 || (opts && v > opts.length)) { bad.push('max_selections'); maxOk = false; } else maxSel = v;
    }
    if (minOk && maxOk && maxSel !== null && minSel > maxSel) bad.push('min_selections', 'max_selections');
    settings.min_selections = minSel;
    settings.max_selections = maxSel;
  }
  if (bad.length) throw invalid([...new Set(bad)]);
  return { type, title, required, settings };
}

async function addQuestion(req, res, owner, id, body) {
  const row = await tx(async (db) => {
    const form = await ownedForm(db, owner, id, true);
    if (form.status !== 'draft') throw new ApiError(409, 'form_not_draft', 'questions change only while the form is a draft');
    const q = validateQuestion(parseBody(body));
    const { rows: pos } = await db.query('SELECT COALESCE(max(position), 0) + 1 AS p FROM questions WHERE form_id = $1', [form.id]);
    const { rows } = await db.query(
      'INSERT INTO questions (form_id, position, type, title, required, settings) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
      [form.id, pos[0].p, q.type, q.title, q.required, JSON.stringify(q.settings)]);
    return rows[0];
  });
  send(res, 201, questionJson(row));
}

async function deleteQuestion(req, res, owner, id, rawQid) {
  await tx(async (db) => {
    const form = await ownedForm(db, owner, id, true);
    const qid = pathId(rawQid);
    if (qid === null) throw notFound('question');
    const { rows } = await db.query('SELECT id FROM questions WHERE id = $1 AND form_id = $2', [qid, form.id]);
    if (!rows.length) throw notFound('question');
    if (form.status !== 'draft') throw new ApiError(409, 'form_not_draft', 'questions change only while the form is a draft');
    await db.query('DELETE FROM questions WHERE id = $1', [qid]);
    await db.query(
      `UPDATE questions q SET position = n.rn FROM (
         SELECT id, row_number() OVER (ORDER BY position, id) AS rn FROM questions WHERE form_id = $1) n
       WHERE q.id = n.id`, [form.id]);
  });
  send(res, 204);
}

async function transition(req, res, owner, id, target) {
  const formId = await tx(async (db) => {
    const form = await ownedForm(db, owner, id, true);
    if (target === 'published') {
      if (form.status !== 'draft') throw new ApiError(409, 'invalid_transition', `a ${form.status} form cannot be published`);
      const { rows } = await db.query('SELECT count(*)::int AS n FROM questions WHERE form_id = $1', [form.id]);
      if (rows[0].n === 0) throw new ApiError(409, 'no_questions', 'a form needs at least one question to be published');
    } else if (form.status !== 'published') {
      throw new ApiError(409, 'invalid_transition', `a ${form.status} form cannot be closed`);
    }
    await db.query('UPDATE forms SET status = $1 WHERE id = $2', [target, form.id]);
    return form.id;
  });
  send(res, 200, await fullForm(pool, formId));
}

// ---------------------------------------------------------------------------------------------
// Public

const SLUG_RE = /^[A-Za-z0-9_-]{1,64}$/;
const FORM_NOT_FOUND = 'form not found';

async function publicForm(slug) {
  if (slug === null || !SLUG_RE.test(slug)) return null;
  const { rows } = await pool.query("SELECT * FROM forms WHERE slug = $1 AND status <> 'draft'", [slug]);
  if (!rows.length) return null;
  const form = rows[0];
  const questions = await loadQuestions(pool, form.id);
  return { slug: form.slug, title: form.title, status: form.status, questions: questions.map(questionJson) };
}

function decodeSegment(raw) {
  try { return decodeURIComponent(raw); } catch (_) { return null; }
}

async function getPublicForm(req, res, rawSlug) {
  const pf = await publicForm(decodeSegment(rawSlug));
  if (!pf) throw new ApiError(404, 'not_found', FORM_NOT_FOUND);
  send(res, 200, pf);
}

function isUnanswered(q, v) {
  if (v === undefined || v === null) return true;
  if (q.type === 'short_text' && typeof v === 'string' && !nonBlank(v)) return true;
  if (q.type === 'multiple_choice' && Array.isArray(v) && v.length === 0) return true;
  return false;
}

function answerValid(q, v) {
  const s = q.s;
  switch (q.type) {
    case 'short_text':
      return typeof v === 'string' && ulen(v) <= s.max_length && wellFormed(v);
    case 'number':
      return isNum(v) && (s.min === null || v >= s.min) && (s.max === null || v <= s.max);
    case 'single_choice':
      return typeof v === 'string' && s.options.includes(v);
    case 'multiple_choice': {
      if (!Array.isArray(v)) return false;
      const seen = new Set();
      for (const x of v) {
        if (typeof x !== 'string' || !s.options.includes(x) || seen.has(x)) return false;
        seen.add(x);
      }
      return v.length >= s.min_selections && v.length <= s.max_selections;
    }
    default:
      return false;
  }
}

async function submitResponse(req, res, rawSlug, body) {
  const slug = decodeSegment(rawSlug);
  if (slug === null || !SLUG_RE.test(slug)) throw new ApiError(404, 'not_found', FORM_NOT_FOUND);
  const created = await tx(async (db) => {
    const { rows } = await db.query("SELECT * FROM forms WHERE slug = $1 AND status <> 'draft' FOR UPDATE", [slug]);
    if (!rows.length) throw new ApiError(404, 'not_found', FORM_NOT_FOUND);
    const form = rows[0];
    if (form.status === 'closed') throw new ApiError(409, 'form_closed', 'this form is closed and accepts no more responses');
    const data = parseBody(body);
    const answers = data.answers;
    if (answers === null || typeof answers !== 'object' || Array.isArray(answers)) {
      throw invalid(['answers'], 'answers must be an object of question ids to values');
    }
    const questions = (await loadQuestions(db, form.id)).map((q) => ({ ...q, s: JSON.parse(q.settings) }));
    const byId = new Map(questions.map((q) => [String(q.id), q]));
    const bad = [];
    const stored = {};
    for (const key of Object.keys(answers)) {
      if (!byId.has(key)) bad.push(key);
    }
    for (const q of questions) {
      const key = String(q.id);
      const v = has(answers, key) ? answers[key] : undefined;
      if (isUnanswered(q, v)) {
        if (q.required) bad.push(key);
        continue;
      }
      if (!answerValid(q, v)) bad.push(key);
      else stored[key] = v;
    }
    if (bad.length) {
      const names = [];
      for (const k of bad) {
        const q = byId.get(k);
        names.push(q ? `"${q.title}"` : `unknown question ${k}`);
      }
      throw invalid(bad, `invalid or missing answers: ${names.join(', ')}`);
    }
    if (form.response_limit !== null) {
      const { rows: c } = await db.query('SELECT count(*)::int AS n FROM responses WHERE form_id = $1', [form.id]);
      if (c[0].n >= form.response_limit) {
        throw new ApiError(409, 'response_limit_reached', 'this form has reached its response limit');
      }
    }
    const { rows: ins } = await db.query(
      'INSERT INTO responses (form_id, answers) VALUES ($1, $2) RETURNING id, created_at', [form.id, JSON.stringify(stored)]);
    return ins[0];
  });
  send(res, 201, { id: created.id, created_at: iso(created.created_at) });
}

// ---------------------------------------------------------------------------------------------
// Results

async function loadResults(owner, id) {
  const form = await ownedForm(pool, owner, id);
  const questions = (await loadQuestions(pool, form.id)).map((q) => ({ ...q, s: JSON.parse(q.settings) }));
  const { rows } = await pool.query('SELECT id, created_at, answers FROM responses WHERE form_id = $1 ORDER BY id', [form.id]);
  const responses = rows.map((r) => ({ id: r.id, created_at: iso(r.created_at), answers: JSON.parse(r.answers) }));
  return { form, questions, responses };
}

async function listResponses(req, res, owner, id) {
  const { responses } = await loadResults(owner, id);
  send(res, 200, { items: responses });
}

async function summary(req, res, owner, id) {
  const { questions, responses } = await loadResults(owner, id);
  const out = questions.map((q) => {
    const key = String(q.id);
    const values = responses.map((r) => r.answers[key]).filter((v) => !isUnanswered(q, v));
    const entry = { question_id: q.id, type: q.type, title: q.title, answered: values.length };
    if (q.type === 'single_choice' || q.type === 'multiple_choice') {
      const counts = {};
      for (const o of q.s.options) counts[o] = 0;
      for (const v of values) {
        for (const o of Array.isArray(v) ? v : [v]) if (has(counts, o)) counts[o]++;
      }
      entry.counts = counts;
    } else if (q.type === 'number') {
      if (values.length) {
        entry.mean = values.reduce((a, b) => a + b, 0) / values.length;
        entry.min = Math.min(...values);
        entry.max = Math.max(...values);
      } else {
        entry.mean = null;
        entry.min = null;
        entry.max = null;
      }
    }
    return entry;
  });
  send(res, 200, { response_count: responses.length, questions: out });
}

function csvText(s) {
  return /^[=+\-@]/.test(s) ? `'${s}` : s;
}

function csvField(s) {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function exportCsv(req, res, owner, id) {
  const { questions, responses } = await loadResults(owner, id);
  const lines = [];
  lines.push(['response_id', 'submitted_at', ...questions.map((q) => csvText(q.title))]);
  for (const r of responses) {
    const row = [String(r.id), r.created_at];
    for (const q of questions) {
      const v = r.answers[String(q.id)];
      if (isUnanswered(q, v)) row.push('');
      else if (q.type === 'number') row.push(String(v));
      else if (q.type === 'multiple_choice') row.push(csvText(q.s.options.filter((o) => v.includes(o)).join('; ')));
      else row.push(csvText(String(v)));
    }
    lines.push(row);
  }
  const text = lines.map((l) => l.map(csvField).join(',') + '\r\n').join('');
  const buf = Buffer.from(text, 'utf8');
  res.writeHead(200, {
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="form-${parseInt(id, 10)}.csv"`,
    'Content-Length': buf.length,
  });
  res.end(buf);
}

// ---------------------------------------------------------------------------------------------
// Pages

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

function scriptJson(value) {
  // JSON that is safe inside <script>: no "</script>", no HTML comment openers, no U+2028/9.
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

const PAGE_STYLE = `
body{font-family:system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#222}
.question{border:1px solid #ddd;border-radius:6px;padding:1rem;margin:1rem 0}
.question-title{font-weight:600;margin-bottom:.5rem;white-space:pre-wrap}
.req{color:#b00}
.option{display:block;margin:.25rem 0;cursor:pointer}
.option span{white-space:pre-wrap}
input[type=text]{width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;font-size:1rem}
[data-testid=message]{color:#b00;min-height:1.2em;white-space:pre-wrap}
[data-testid=thank-you]{color:#070;font-weight:600}
`;

const PAGE_SCRIPT = `
(function () {
  var data = JSON.parse(document.getElementById('form-data').textContent);
  var message = document.querySelector('[data-testid="message"]');
  var thanks = document.querySelector('[data-testid="thank-you"]');
  var button = document.querySelector('[data-testid="submit"]');
  if (!data.form || !button) return;
  var NUMBER = /^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
  function setFlag(name, fields) {
    var value = Object.assign({slug: data.form.slug}, fields);
    try { localStorage.setItem(name, JSON.stringify(value)); } catch (e) {}
  }
  data.form.questions.forEach(function (q) {
    var box = document.getElementById('q-' + q.id);
    if (box) box.addEventListener('input', function () { setFlag('forms.answerChanged', {question_id: q.id}); });
  });
  setFlag('forms.formShown', {questions: data.form.questions.length});
  function collect() {
    var answers = {};
    data.form.questions.forEach(function (q) {
      var box = document.getElementById('q-' + q.id);
      if (q.type === 'short_text' || q.type === 'number') {
        var text = box.querySelector('[data-testid="answer-input"]').value;
        if (q.type === 'short_text') {
          if (text !== '') answers[String(q.id)] = text;
        } else {
          var t = text.trim();
          if (t === '') return;
          answers[String(q.id)] = NUMBER.test(t) ? Number(t) : text;
        }
      } else {
        var picked = [];
        box.querySelectorAll('input').forEach(function (input) {
          if (input.checked) picked.push(q.options[Number(input.getAttribute('data-index'))]);
        });
        if (q.type === 'single_choice') {
          if (picked.length) answers[String(q.id)] = picked[0];
        } else if (picked.length) {
          answers[String(q.id)] = picked;
        }
      }
    });
    return answers;
  }
  var busy = false;
  button.addEventListener('click', function (ev) {
    ev.preventDefault();
    if (busy) return;
    busy = true;
    button.disabled = true;
    message.textContent = '';
    thanks.hidden = true;
    thanks.style.display = 'none';
    var answers = collect();
    setFlag('forms.submitted', {answers: answers});
    fetch('/api/public/forms/' + encodeURIComponent(data.form.slug) + '/responses', {
      method: 'POST',
      headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({answers: answers})
    }).then(function (resp) {
      return resp.text().then(function (text) {
        var body = null;
        try { body = JSON.parse(text); } catch (e) { body = null; }
        if (resp.status === 201) {
          setFlag('forms.responseRecorded', {response_id: body && body.id});
          message.textContent = '';
          thanks.hidden = false;
          thanks.style.display = '';
        } else {
          message.textContent = (body && typeof body.message === 'string') ? body.message : ('Error ' + resp.status);
        }
      });
    }).catch(function () {
      message.textContent = 'The answers could not be sent. Please try again.';
    }).then(function () {
      busy = false;
      button.disabled = false;
    });
  });
})();
`;

function renderQuestion(q) {
  const idAttr = `q-${q.id}`;
  let inner = `<div class="question-title" data-testid="question-title" id="${idAttr}-title">${escapeHtml(q.title)}</div>`;
  if (q.required) inner += '<div class="req">Required</div>';
  if (q.type === 'short_text') {
    inner += `<input type="text" data-testid="answer-input" aria-labelledby="${idAttr}-title" maxlength="${q.max_length}" autocomplete="off">`;
  } else if (q.type === 'number') {
    inner += `<input type="text" inputmode="decimal" data-testid="answer-input" aria-labelledby="${idAttr}-title" autocomplete="off">`;
    const hint = [];
    if (q.min !== null) hint.push(`minimum ${q.min}`);
    if (q.max !== null) hint.push(`maximum ${q.max}`);
    if (hint.length) inner += `<div class="hint">${escapeHtml(hint.join(', '))}</div>`;
  } else {
    const kind = q.type === 'single_choice' ? 'radio' : 'checkbox';
    inner += `<div role="${kind === 'radio' ? 'radiogroup' : 'group'}" aria-labelledby="${idAttr}-title">`;
    q.options.forEach((o, i) => {
      inner += `<label class="option" data-testid="option"><input type="${kind}" name="${idAttr}" data-index="${i}"><span>${escapeHtml(o)}</span></label>`;
    });
    inner += '</div>';
    if (q.type === 'multiple_choice' && (q.min_selections > 0 || q.max_selections < q.options.length)) {
      inner += `<div class="hint">Choose ${q.min_selections} to ${q.max_selections}</div>`;
    }
  }
  return `<div class="question" data-testid="question" id="${idAttr}" data-question-id="${q.id}">${inner}</div>`;
}

function renderFormPage(pf, errorMessage) {
  const title = pf ? pf.title : 'Form not available';
  let main;
  if (pf) {
    main = `<h1 data-testid="form-title">${escapeHtml(pf.title)}</h1>
<form id="respond" novalidate onsubmit="return false">
${pf.questions.map(renderQuestion).join('\n')}
<button type="submit" data-testid="submit">Submit</button>
</form>
<p data-testid="message" role="alert" aria-live="polite"></p>
<p data-testid="thank-you" hidden style="display:none">Thank you! Your response has been recorded.</p>`;
  } else {
    main = `<h1>Form not available</h1>
<p data-testid="message" role="alert">${escapeHtml(errorMessage)}</p>`;
  }
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><link rel="icon" href="data:,"><style>${PAGE_STYLE}</style></head>
<body>
${main}
<script type="application/json" id="form-data">${scriptJson({ form: pf })}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>`;
}

function sendHtml(res, status, html) {
  const buf = Buffer.from(html, 'utf8');
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': buf.length,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'",
  });
  res.end(buf);
}

async function formPage(req, res, rawSlug) {
  const pf = await publicForm(decodeSegment(rawSlug));
  if (!pf) return sendHtml(res, 404, renderFormPage(null, FORM_NOT_FOUND));
  return sendHtml(res, 200, renderFormPage(pf));
}

function homePage(req, res) {
  sendHtml(res, 200, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Forms</title><link rel="icon" href="data:,"><style>${PAGE_STYLE}</style></head>
<body><h1>Forms</h1><p>Build forms through the JSON API under <code>/api</code>; respondents answer a published form at <code>/f/&lt;slug&gt;</code>.</p></body></html>`);
}

// ---------------------------------------------------------------------------------------------
// Routing

// [method, regex, handler, needs owner]
const ROUTES = [
  ['GET', /^\/health$/, (req, res) => send(res, 200, { status: 'ok' })],
  ['GET', /^\/$/, homePage],
  ['GET', /^\/f\/([^/]+)$/, formPage],
  ['POST', /^\/api\/users$/, registerOwner, false, true],
  ['POST', /^\/api\/auth\/token$/, logIn, false, true],
  ['GET', /^\/api\/me$/, (req, res, owner) => send(res, 200, ownerJson(owner)), true],
  ['GET', /^\/api\/forms$/, listForms, true],
  ['POST', /^\/api\/forms$/, createForm, true, true],
  ['GET', /^\/api\/forms\/([^/]+)$/, getForm, true],
  ['DELETE', /^\/api\/forms\/([^/]+)$/, deleteForm, true],
  ['POST', /^\/api\/forms\/([^/]+)\/questions$/, addQuestion, true, true],
  ['DELETE', /^\/api\/forms\/([^/]+)\/questions\/([^/]+)$/, deleteQuestion, true],
  ['POST', /^\/api\/forms\/([^/]+)\/publish$/, (req, res, o, id) => transition(req, res, o, id, 'published'), true],
  ['POST', /^\/api\/forms\/([^/]+)\/close$/, (req, res, o, id) => transition(req, res, o, id, 'closed'), true],
  ['GET', /^\/api\/forms\/([^/]+)\/responses$/, listResponses, true],
  ['GET', /^\/api\/forms\/([^/]+)\/summary$/, summary, true],
  ['GET', /^\/api\/forms\/([^/]+)\/export\.csv$/, exportCsv, true],
  ['GET', /^\/api\/public\/forms\/([^/]+)$/, getPublicForm],
  ['POST', /^\/api\/public\/forms\/([^/]+)\/responses$/, submitResponse, false, true],
];

function isOwnerPath(path) {
  return path === '/api/me' || path === '/api/forms' || path.startsWith('/api/forms/');
}

async function handle(req, res) {
  const body = await readBody(req);
  const path = (req.url || '/').split('?')[0];
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  let owner = null;
  if (isOwnerPath(path)) owner = await authenticate(req);
  const allowed = [];
  for (const [m, re, handler, needsOwner, takesBody] of ROUTES) {
    const match = re.exec(path);
    if (!match) continue;
    if (m !== method) { allowed.push(m); continue; }
    const params = match.slice(1);
    const args = [req, res];
    if (needsOwner) args.push(owner);
    args.push(...params);
    if (takesBody) args.push(body);
    return handler(...args);
  }
  if (allowed.length) {
    const err = new ApiError(405, 'method_not_allowed', `${req.method} is not allowed on this path`);
    err.headers = { Allow: allowed.join(', ') };
    throw err;
  }
  throw notFound('path');
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    if (res.headersSent) { res.end(); return; }
    if (err instanceof ApiError) return sendError(res, err);
    console.error(err);
    sendError(res, new ApiError(500, 'internal_error', 'an unexpected error occurred'));
  });
});
server.keepAliveTimeout = 65000;
server.on('clientError', (err, socket) => {
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
});

async function main() {
  await initDb();
  dummyHash = await hashPassword(crypto.randomBytes(16).toString('hex'));
  server.listen(PORT, '0.0.0.0', () => console.log(`forms listening on ${PORT}`));
}

main().catch((err) => {
  console.error('start-up failed', err);
  process.exit(1);
});
