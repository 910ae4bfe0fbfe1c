'use strict';
// File share: users with quotas, uploads stored under DATA_DIR, public share links.
// Node 18, CommonJS, node:http only. Metadata in memory, file contents on disk.

const http = require('node:http');
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const PORT = parseInt(process.env.PORT || '8000', 10);
const ADMIN_USERNAME = process.env.ADMIN_USERNAME || 'admin';
const ADMIN_PASSWORD = process.env.ADMIN_PASSWORD || 'admin-password';
const DATA_DIR = process.env.DATA_DIR || path.join(os.tmpdir(), 'file-share-data');

const MAX_FILE = 1048576;
const MAX_JSON = 1048576;
const DRAIN_CAP = 16 * 1048576; // past this much unread body the connection is dropped
const MAX_DEPTH = 32;
const DEFAULT_QUOTA = 10485760;
const MAX_QUOTA = 1099511627776;
const USERNAME_RE = /^[a-z0-9_]{3,32}$/;

// ---------------------------------------------------------------- storage
fs.mkdirSync(DATA_DIR, { recursive: true });
const STORE_DIR = fs.mkdtempSync(path.join(DATA_DIR, 'instance-'));

const users = new Map();        // id -> user
const usersOrder = [];          // ids in creation order
const usernames = new Map();    // username -> id
const sessions = new Map();     // bearer token -> user id
const files = new Map();        // id -> file
const fileNames = new Map();    // user id -> Map(name -> file id)
const shares = new Map();       // id -> share
const shareTokens = new Map();  // token -> share id

function newId(prefix) {
  return prefix + crypto.randomBytes(12).toString('hex');
}

function nowIso() {
  return new Date().toISOString();
}

// ---------------------------------------------------------------- passwords (scrypt)
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function hashPassword(password) {
  return new Promise((resolve, reject) => {
    const salt = crypto.randomBytes(16);
    crypto.scrypt(password, salt, 32, SCRYPT, (err, key) => {
      if (err) return reject(err);
      resolve('scrypt$16384$8$1$' + salt.toString('base64') + '$' + key.toString('base64'));
    });
  });
}

function verifyPassword(password, stored) {
  return new Promise((resolve) => {
    const parts = String(stored).split('$');
    if (parts.length !== 6) return resolve(false);
    const salt = Buffer.from(parts[4], 'base64');
    const expected = Buffer.from(parts[5], 'base64');
    const opts = { N: +parts[1], r: +parts[2], p: +parts[3], maxmem: 64 * 1024 * 1024 };
    crypto.scrypt(password, salt, expected.length, opts, (err, key) => {
      if (err) return resolve(false);
      resolve(crypto.timingSafeEqual(key, expected));
    });
  });
}

let DUMMY_HASH = null;

// ---------------------------------------------------------------- helpers
class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}

const notFound = (what) => new ApiError(404, 'not_found', (what || 'resource') + ' not found');

function sendJson(res, status, obj, extraHeaders) {
  if (res.headersSent) return;
  const body = obj === undefined ? '' : JSON.stringify(obj);
  const headers = Object.assign({}, extraHeaders || {});
  if (status !== 204) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = Buffer.byteLength(body);
  }
  res.writeHead(status, headers);
  res.end(status === 204 ? undefined : body);
}

function sendError(res, e, extraHeaders) {
  const body = { error: e.code, message: e.message };
  if (e.status === 422) body.fields = Array.from(new Set(e.fields || []));
  sendJson(res, e.status, body, extraHeaders);
}

function charLen(s) {
  let n = 0;
  for (const _ of s) n++; // eslint-disable-line no-unused-vars
  return n;
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function has(obj, key) {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

function isInt(v) {
  return typeof v === 'number' && Number.isInteger(v);
}

function depthOk(value) {
  const stack = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop();
    if (v !== null && typeof v === 'object') {
      if (d > MAX_DEPTH) return false;
      const kids = Array.isArray(v) ? v : Object.values(v);
      for (const k of kids) if (k !== null && typeof k === 'object') stack.push([k, d + 1]);
    }
  }
  return true;
}

function compareCodePoints(a, b) {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done && y.done) return 0;
    if (x.done) return -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0);
    const cy = y.value.codePointAt(0);
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

// RFC 3339 date-time with a mandatory zone; returns epoch ms or null.
const TS_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
function parseTimestamp(s) {
  const m = TS_RE.exec(s);
  if (!m) return null;
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60) return null;
  const dim = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > dim) return null;
  let ms = m[7] ? Math.floor(Number('0' + m[7]) * 1000) : 0;
  let t = Date.UTC(y, mo - 1, d, h, mi, Math.min(se, 59), ms);
  if (y < 100) t = new Date(t).setUTCFullYear(y);
  const z = m[8];
  if (z !== 'Z' && z !== 'z') {
    const sign = z[0] === '+' ? 1 : -1;
    const oh = Number(z.slice(1, 3));
    const om = Number(z.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    t -= sign * (oh * 60 + om) * 60000;
  }
  return Number.isFinite(t) ? t : null;
}

// Reads the request body up to `limit` bytes; past it the rest is drained (up to DRAIN_CAP).
function readBody(req, limit) {
  return new Promise((resolve) => {
    const chunks = [];
    let size = 0;
    let done = false;
    const cl = req.headers['content-length'];
    const finish = (r) => { if (!done) { done = true; resolve(r); } };
    if (cl !== undefined && /^\d+$/.test(cl) && Number(cl) > DRAIN_CAP) {
      // Far too large: answer at once and drop the connection afterwards.
      req.pause();
      return finish({ tooLarge: true, abort: true });
    }
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
      else if (size > DRAIN_CAP) {
        req.pause();
        finish({ tooLarge: true, abort: true });
      }
    });
    req.on('end', () => finish(size > limit ? { tooLarge: true } : { buf: Buffer.concat(chunks, size) }));
    req.on('error', () => finish({ tooLarge: false, error: true, abort: true }));
    req.on('aborted', () => finish({ error: true, abort: true }));
  });
}

// Parses a JSON object body; returns {value} or throws the right ApiError.
function parseJsonObject(body) {
  if (body.tooLarge) throw new ApiError(413, 'payload_too_large', 'request body larger than 1 MiB');
  let value;
  try {
    value = JSON.parse(body.buf.toString('utf8'));
  } catch (e) {
    throw new ApiError(422, 'validation_error', 'body must be a JSON object', []);
  }
  if (!isObject(value)) throw new ApiError(422, 'validation_error', 'body must be a JSON object', []);
  if (!depthOk(value)) throw new ApiError(422, 'validation_error', 'body nested more than 32 levels', []);
  return value;
}

// ---------------------------------------------------------------- views
function usedBytes(userId) {
  const names = fileNames.get(userId);
  let total = 0;
  if (names) for (const fid of names.values()) total += files.get(fid).size;
  return total;
}

function userView(u) {
  return { id: u.id, username: u.username, role: u.role, quota_bytes: u.quota_bytes,
    used_bytes: usedBytes(u.id), created_at: u.created_at };
}

function fileView(f) {
  return { id: f.id, name: f.name, size: f.size, content_type: f.content_type, sha256: f.sha256,
    created_at: f.created_at, updated_at: f.updated_at };
}

function shareView(s) {
  return { id: s.id, file_id: s.file_id, token: s.token, password_protected: s.password_hash !== null,
    expires_at: s.expires_at, max_downloads: s.max_downloads, download_count: s.download_count,
    created_at: s.created_at };
}

function addUser(username, passwordHash, role, quota) {
  const u = { id: newId('u_'), username, password_hash: passwordHash, role, quota_bytes: quota,
    created_at: nowIso() };
  users.set(u.id, u);
  usersOrder.push(u.id);
  usernames.set(username, u.id);
  fileNames.set(u.id, new Map());
  return u;
}

// ---------------------------------------------------------------- auth
function authenticate(req) {
  const h = req.headers.authorization;
  if (typeof h === 'string') {
    const m = /^Bearer +(\S+)$/i.exec(h);
    if (m) {
      const uid = sessions.get(m[1]);
      if (uid !== undefined && users.has(uid)) return users.get(uid);
    }
  }
  throw new ApiError(401, 'unauthorized', 'missing or invalid bearer token');
}

function requireAdmin(user) {
  if (user.role !== 'admin') throw new ApiError(403, 'forbidden', 'administrators only');
}

function ownedFile(user, fileId) {
  const f = files.get(fileId);
  if (!f || f.owner_id !== user.id) throw notFound('file');
  return f;
}

// ---------------------------------------------------------------- handlers
async function login(req, body) {
  const data = parseJsonObject(body);
  const bad = [];
  if (typeof data.username !== 'string') bad.push('username');
  if (typeof data.password !== 'string') bad.push('password');
  if (bad.length) throw new ApiError(422, 'validation_error', 'username and password must be strings', bad);
  const uid = usernames.get(data.username);
  const u = uid !== undefined ? users.get(uid) : undefined;
  const ok = await verifyPassword(data.password, u ? u.password_hash : DUMMY_HASH);
  if (!u || !ok || !users.has(u.id)) throw new ApiError(401, 'unauthorized', 'invalid username or password');
  const token = crypto.randomBytes(32).toString('base64url');
  sessions.set(token, u.id);
  return [200, { token, token_type: 'bearer', user: userView(u) }];
}

async function createUser(req, body) {
  const me = authenticate(req);
  requireAdmin(me);
  const data = parseJsonObject(body);
  const bad = [];
  if (typeof data.username !== 'string' || !USERNAME_RE.test(data.username)) bad.push('username');
  if (typeof data.password !== 'string' || charLen(data.password) < 8 || charLen(data.password) > 128) bad.push('password');
  let role = 'user';
  if (has(data, 'role')) {
    if (data.role !== 'admin' && data.role !== 'user') bad.push('role');
    else role = data.role;
  }
  let quota = DEFAULT_QUOTA;
  if (has(data, 'quota_bytes')) {
    if (!isInt(data.quota_bytes) || data.quota_bytes < 0 || data.quota_bytes > MAX_QUOTA) bad.push('quota_bytes');
    else quota = data.quota_bytes;
  }
  if (bad.length) throw new ApiError(422, 'validation_error', 'invalid user', bad);
  const taken = () => { if (usernames.has(data.username)) throw new ApiError(409, 'conflict', 'username already taken'); };
  taken();
  const hash = await hashPassword(data.password);
  authenticate(req); // the caller may have vanished meanwhile (never happens: users are not deleted)
  taken();
  return [201, userView(addUser(data.username, hash, role, quota))];
}

function listUsers(req) {
  const me = authenticate(req);
  requireAdmin(me);
  return [200, { items: usersOrder.map((id) => userView(users.get(id))) }];
}

function patchUser(req, body, userId) {
  const me = authenticate(req);
  requireAdmin(me);
  const u = users.get(userId);
  if (!u) throw notFound('user');
  const data = parseJsonObject(body);
  if (has(data, 'quota_bytes')) {
    const q = data.quota_bytes;
    if (!isInt(q) || q < 0 || q > MAX_QUOTA) throw new ApiError(422, 'validation_error', 'invalid quota_bytes', ['quota_bytes']);
    u.quota_bytes = q;
  }
  return [200, userView(u)];
}

function nameProblem(name) {
  if (typeof name !== 'string') return true;
  const n = charLen(name);
  if (n < 1 || n > 255) return true;
  if (name === '.' || name === '..') return true;
  // eslint-disable-next-line no-control-regex
  return /[\/\\\u0000-\u001f\u007f]/.test(name);
}

function upload(req, body, query) {
  const me = authenticate(req);
  const name = query.get('name');
  if (name === null || nameProblem(name)) throw new ApiError(422, 'validation_error', 'invalid file name', ['name']);
  if (body.tooLarge) throw new ApiError(413, 'file_too_large', 'file larger than 1,048,576 bytes');
  const buf = body.buf;
  const names = fileNames.get(me.id);
  const existingId = names.get(name);
  const existing = existingId !== undefined ? files.get(existingId) : null;
  const after = usedBytes(me.id) - (existing ? existing.size : 0) + buf.length;
  if (after > me.quota_bytes) throw new ApiError(409, 'quota_exceeded', 'the upload would exceed your quota');
  const ct = req.headers['content-type'];
  const contentType = typeof ct === 'string' && ct !== '' ? ct : 'application/octet-stream';
  const sha256 = crypto.createHash('sha256').update(buf).digest('hex');
  const diskName = crypto.randomBytes(16).toString('hex');
  const diskPath = path.join(STORE_DIR, diskName);
  try {
    fs.writeFileSync(diskPath, buf, { flag: 'wx' });
  } catch (e) {
    try { fs.unlinkSync(diskPath); } catch (_) { /* nothing written */ }
    throw e;
  }
  const now = nowIso();
  if (existing) {
    const oldPath = existing.disk_path;
    Object.assign(existing, { size: buf.length, content_type: contentType, sha256, updated_at: now, disk_path: diskPath });
    try { fs.unlinkSync(oldPath); } catch (_) { /* already gone */ }
    return [200, fileView(existing)];
  }
  const f = { id: newId('f_'), owner_id: me.id, name, size: buf.length, content_type: contentType, sha256,
    created_at: now, updated_at: now, disk_path: diskPath, share_ids: [] };
  files.set(f.id, f);
  names.set(name, f.id);
  return [201, fileView(f)];
}

function listFiles(req) {
  const me = authenticate(req);
  const items = Array.from(fileNames.get(me.id).values()).map((id) => files.get(id));
  items.sort((a, b) => compareCodePoints(a.name, b.name));
  return [200, { items: items.map(fileView), used_bytes: usedBytes(me.id), quota_bytes: me.quota_bytes }];
}

function getFile(req, _body, fileId) {
  const me = authenticate(req);
  return [200, fileView(ownedFile(me, fileId))];
}

function contentDisposition(name) {
  const enc = encodeURIComponent(name).replace(/['()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  return "attachment; filename*=UTF-8''" + enc;
}

function sendFile(res, f) {
  const data = fs.readFileSync(f.disk_path);
  res.writeHead(200, {
    'Content-Type': f.content_type,
    'Content-Length': data.length,
    'Content-Disposition': contentDisposition(f.name),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
  res.end(data);
}

function download(req, res, fileId) {
  const me = authenticate(req);
  sendFile(res, ownedFile(me, fileId));
  return null;
}

function removeShare(s) {
  shares.delete(s.id);
  shareTokens.delete(s.token);
  const f = files.get(s.file_id);
  if (f) f.share_ids = f.share_ids.filter((id) => id !== s.id);
}

function deleteFile(req, _body, fileId) {
  const me = authenticate(req);
  const f = ownedFile(me, fileId);
  for (const sid of f.share_ids.slice()) {
    const s = shares.get(sid);
    if (s) removeShare(s);
  }
  files.delete(f.id);
  fileNames.get(me.id).delete(f.name);
  try { fs.unlinkSync(f.disk_path); } catch (_) { /* already gone */ }
  return [204];
}

async function createShare(req, body, fileId) {
  const me = authenticate(req);
  ownedFile(me, fileId);
  const data = parseJsonObject(body);
  const bad = [];
  let password = null;
  if (has(data, 'password') && data.password !== null) {
    if (typeof data.password !== 'string' || charLen(data.password) < 8 || charLen(data.password) > 128) bad.push('password');
    else password = data.password;
  }
  let expiresAt = null;
  if (has(data, 'expires_at') && data.expires_at !== null) {
    const t = typeof data.expires_at === 'string' ? parseTimestamp(data.expires_at) : null;
    if (t === null || t <= Date.now()) bad.push('expires_at');
    else expiresAt = t;
  }
  let maxDownloads = null;
  if (has(data, 'max_downloads') && data.max_downloads !== null) {
    const m = data.max_downloads;
    if (!isInt(m) || m < 1 || m > 1000000) bad.push('max_downloads');
    else maxDownloads = m;
  }
  if (bad.length) throw new ApiError(422, 'validation_error', 'invalid share', bad);
  const hash = password === null ? null : await hashPassword(password);
  const f = ownedFile(authenticate(req), fileId); // still there after hashing?
  let token;
  do { token = crypto.randomBytes(24).toString('base64url'); } while (shareTokens.has(token));
  const s = { id: newId('s_'), file_id: f.id, token, password_hash: hash,
    expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(), expires_ms: expiresAt,
    max_downloads: maxDownloads, download_count: 0, created_at: nowIso() };
  shares.set(s.id, s);
  shareTokens.set(token, s.id);
  f.share_ids.push(s.id);
  return [201, shareView(s)];
}

function listShares(req, _body, fileId) {
  const me = authenticate(req);
  const f = ownedFile(me, fileId);
  return [200, { items: f.share_ids.map((id) => shareView(shares.get(id))) }];
}

function revokeShare(req, _body, shareId) {
  const me = authenticate(req);
  const s = shares.get(shareId);
  const f = s ? files.get(s.file_id) : null;
  if (!s || !f || f.owner_id !== me.id) throw notFound('share');
  removeShare(s);
  return [204];
}

function shareState(token) {
  const sid = shareTokens.get(token);
  const s = sid !== undefined ? shares.get(sid) : undefined;
  const f = s ? files.get(s.file_id) : undefined;
  if (!s || !f) throw notFound('share');
  if ((s.expires_ms !== null && s.expires_ms <= Date.now())
      || (s.max_downloads !== null && s.download_count >= s.max_downloads)) {
    throw new ApiError(410, 'gone', 'this share link has expired or reached its download limit');
  }
  return [s, f];
}

async function publicDownload(req, res, token) {
  let [s] = shareState(token);
  if (s.password_hash !== null) {
    const given = req.headers['x-share-password'];
    let ok = typeof given === 'string' && await verifyPassword(given, s.password_hash);
    if (!ok && typeof given === 'string' && /[\u0080-\u00ff]/.test(given)) {
      // Node decodes header bytes as latin1; a UTF-8 password arrives as mojibake.
      ok = await verifyPassword(Buffer.from(given, 'latin1').toString('utf8'), s.password_hash);
    }
    if (!ok) {
      shareState(token); // 404 / 410 win if the share changed meanwhile
      throw new ApiError(401, 'password_required', 'this share needs its password in X-Share-Password');
    }
  }
  const [s2, f] = shareState(token); // re-check after the asynchronous password check
  s = s2;
  s.download_count += 1;
  try {
    sendFile(res, f);
  } catch (e) {
    s.download_count -= 1;
    throw e;
  }
  return null;
}

// ---------------------------------------------------------------- routing
function splitPath(rawPath) {
  const segs = rawPath.split('/').slice(1);
  return segs.map((s) => {
    try { return decodeURIComponent(s); } catch (e) { return null; }
  });
}

// Returns {methods: {METHOD: handler}, auth: bool, params: [...]} or null.
function route(segs) {
  const n = segs.length;
  const s0 = segs[0];
  if (n === 1 && s0 === 'health') return { auth: false, methods: { GET: () => [200, { status: 'ok' }] } };
  if (n === 2 && s0 === 'auth' && segs[1] === 'token') return { auth: false, json: true, methods: { POST: login } };
  if (n === 1 && s0 === 'me') return { auth: true, methods: { GET: (req) => [200, userView(authenticate(req))] } };
  if (n === 1 && s0 === 'users') return { auth: true, json: true, methods: { GET: listUsers, POST: createUser } };
  if (n === 2 && s0 === 'users') return { auth: true, json: true, params: [segs[1]], methods: { PATCH: patchUser } };
  if (n === 1 && s0 === 'files') return { auth: true, upload: true, methods: { GET: listFiles, POST: upload } };
  if (n === 2 && s0 === 'files') return { auth: true, params: [segs[1]], methods: { GET: getFile, DELETE: deleteFile } };
  if (n === 3 && s0 === 'files' && segs[2] === 'content') return { auth: true, raw: true, params: [segs[1]], methods: { GET: download } };
  if (n === 3 && s0 === 'files' && segs[2] === 'shares') return { auth: true, json: true, params: [segs[1]], methods: { GET: listShares, POST: createShare } };
  if (n === 2 && s0 === 'shares') return { auth: true, params: [segs[1]], methods: { DELETE: revokeShare } };
  if (n === 2 && s0 === 's') return { auth: false, raw: true, params: [segs[1]], methods: { GET: publicDownload } };
  return null;
}

async function handle(req, res) {
  let body = null;
  let abort = false;
  try {
    const url = req.url || '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const segs = splitPath(rawPath);
    const r = route(segs);
    const limit = r && r.upload ? MAX_FILE : MAX_JSON;
    body = await readBody(req, limit);
    abort = !!body.abort;
    if (body.error && !body.tooLarge) { req.destroy(); return; }
    if (!r) throw notFound('path');
    const h = r.methods[req.method];
    if (!h) {
      if (r.auth) authenticate(req);
      throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    }
    const params = r.params || [];
    if (params.some((p) => p === null)) {
      if (r.auth) authenticate(req);
      throw notFound('resource');
    }
    let result;
    if (r.raw) result = await h(req, res, ...params);
    else if (r.upload && req.method === 'POST') result = await h(req, body, query);
    else result = await h(req, body, ...params);
    if (result) {
      sendJson(res, result[0], result[1], abort ? { Connection: 'close' } : undefined);
    }
  } catch (e) {
    if (e instanceof ApiError) {
      sendError(res, e, abort ? { Connection: 'close' } : undefined);
    } else {
      console.error(e);
      sendError(res, new ApiError(500, 'internal_error', 'internal error'), { Connection: 'close' });
    }
  } finally {
    if (abort) res.on('finish', () => setTimeout(() => req.destroy(), 50));
  }
}

const server = http.createServer((req, res) => {
  handle(req, res).catch(() => { try { req.destroy(); } catch (_) { /* ignore */ } });
});
server.keepAliveTimeout = 5000;
server.requestTimeout = 60000;
server.headersTimeout = 30000;

function cleanup() {
  try { fs.rmSync(STORE_DIR, { recursive: true, force: true }); } catch (_) { /* ignore */ }
}
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => { cleanup(); process.exit(0); });
}

(async () => {
  DUMMY_HASH = await hashPassword(crypto.randomBytes(12).toString('hex'));
  addUser(ADMIN_USERNAME, await hashPassword(ADMIN_PASSWORD), 'admin', DEFAULT_QUOTA);
  server.listen(PORT, '0.0.0.0', () => {
    console.log('file-share listening on 0.0.0.0:' + PORT + ', files in ' + STORE_DIR);
  });
})();
