'use strict';
// URL shortener — independent implementation on Node's standard library only.
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
const validation = (fields, m) =>
  new HttpError(422, 'validation_error', m || 'validation failed: ' + fields.join(', '), fields);

function sendJson(res, status, body, headers) {
  const h = Object.assign({}, headers || {});
  if (status === 204) {
    res.writeHead(204, h);
    res.end();
    return;
  }
  const data = Buffer.from(JSON.stringify(body), 'utf8');
  h['Content-Type'] = 'application/json';
  h['Content-Length'] = data.length;
  res.writeHead(status, h);
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

// Parses the body; must be a JSON object, else 422 with an empty field list.
function parseObject(raw) {
  // Spec: a body over 1 MiB gets 413 or 422.
  if (Buffer.byteLength(raw, 'utf8') > 1048576) throw validation([], 'request body is larger than 1 MiB');
  let v;
  try {
    v = JSON.parse(raw);
  } catch (_) {
    throw validation([], 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw validation([], 'request body must be a JSON object');
  }
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

// ------------------------------------------------------------- timestamps
// A parsed timestamp is {ms: epoch milliseconds (float, sub-ms kept), secs, frac}
const TS_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.(\d+))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(y, m) {
  return [31, (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

function parseTimestamp(s) {
  if (typeof s !== 'string') return null;
  const m = TS_RE.exec(s);
  if (!m) return null;
  const y = +m[1], mo = +m[2], d = +m[3], h = +m[4], mi = +m[5], se = +m[6];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || se > 59) return null;
  let off = 0;
  if (m[10]) {
    const oh = +m[11], om = +m[12];
    if (oh > 23 || om > 59) return null;
    off = (oh * 60 + om) * (m[10] === '-' ? -1 : 1);
  }
  const dt = new Date(0);
  dt.setUTCFullYear(y, mo - 1, d);
  dt.setUTCHours(h, mi, se, 0);
  const secs = dt.getTime() / 1000 - off * 60;
  const frac = m[8] || '';
  return { secs, frac, ms: secs * 1000 + (frac ? Number('0.' + frac) * 1000 : 0) };
}

function pad(n, w) {
  let s = String(Math.abs(n));
  while (s.length < w) s = '0' + s;
  return (n < 0 ? '-' : '') + s;
}

function formatParsed(p) {
  const dt = new Date(p.secs * 1000);
  return (
    pad(dt.getUTCFullYear(), 4) + '-' + pad(dt.getUTCMonth() + 1, 2) + '-' + pad(dt.getUTCDate(), 2) +
    'T' + pad(dt.getUTCHours(), 2) + ':' + pad(dt.getUTCMinutes(), 2) + ':' + pad(dt.getUTCSeconds(), 2) +
    (p.frac ? '.' + p.frac : '') + 'Z'
  );
}

const nowIso = () => new Date().toISOString();

// ------------------------------------------------------------- pagination
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
function page(items, p) {
  return { items: items.slice(p.offset, p.offset + p.limit), total: items.length, limit: p.limit, offset: p.offset };
}

// ------------------------------------------------------------------ state
const users = new Map(); // id -> user
const usersByName = new Map(); // username -> user
const tokens = new Map(); // token -> user id
const links = new Map(); // id -> link
const slugs = new Map(); // slug -> link id
let seq = 0;

const newId = () => crypto.randomUUID();

function hashPassword(pw, salt) {
  return crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
}

function publicUser(u) {
  return { id: u.id, username: u.username, created_at: u.created_at };
}

function authenticate(req) {
  const h = req.headers['authorization'];
  if (typeof h !== 'string') throw unauthorized('missing bearer token');
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  const uid = tokens.get(m[1]);
  if (!uid || !users.has(uid)) throw unauthorized('invalid or revoked token');
  return { user: users.get(uid), token: m[1] };
}

// ------------------------------------------------------------------ links
const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const SLUG_RE = /^[A-Za-z0-9_-]{3,32}$/;
const TAG_RE = /^[a-z0-9-]{1,24}$/;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

// Extracts the host of an absolute http(s) URL, or null.
function httpHost(s) {
  const m = /^https?:\/\/([^/?#]*)/i.exec(s);
  if (!m) return null;
  let auth = m[1];
  const at = auth.lastIndexOf('@');
  if (at >= 0) auth = auth.slice(at + 1);
  let host;
  if (auth.startsWith('[')) {
    const end = auth.indexOf(']');
    if (end < 0) return null;
    host = auth.slice(0, end + 1);
    const rest = auth.slice(end + 1);
    if (rest !== '' && !/^:\d*$/.test(rest)) return null;
  } else {
    const c = auth.indexOf(':');
    host = c >= 0 ? auth.slice(0, c) : auth;
    if (c >= 0 && !/^\d*$/.test(auth.slice(c + 1))) return null;
  }
  if (host === '') return null;
  return host;
}

function validUrl(u) {
  if (typeof u !== 'string') return false;
  const n = charLen(u);
  if (n < 1 || n > 2048) return false;
  if (/\s/.test(u)) return false;
  return httpHost(u) !== null;
}

function normTags(t) {
  if (!Array.isArray(t) || t.length > 10) return null;
  for (const x of t) if (typeof x !== 'string' || !TAG_RE.test(x)) return null;
  return Array.from(new Set(t)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function linkStatus(l) {
  if (l.disabled) return 'disabled';
  if (l.expires && l.expires.ms <= Date.now()) return 'expired';
  return 'active';
}

function linkView(l) {
  return {
    id: l.id,
    slug: l.slug,
    url: l.url,
    tags: l.tags.slice(),
    owner_id: l.owner_id,
    disabled: l.disabled,
    expires_at: l.expires ? formatParsed(l.expires) : null,
    status: linkStatus(l),
    visit_count: l.visits.length,
    last_visited_at: l.visits.length ? l.visits[l.visits.length - 1].visited_at : null,
    created_at: l.created_at,
    updated_at: l.updated_at,
  };
}

function genSlug() {
  for (;;) {
    const b = crypto.randomBytes(7);
    let s = '';
    for (let i = 0; i < 7; i++) s += ALNUM[b[i] % 62];
    if (!slugs.has(s)) return s;
  }
}

function ownedLink(user, id) {
  const l = links.get(id);
  if (!l || l.owner_id !== user.id) throw notFound('link not found');
  return l;
}

function headerLocation(url) {
  // Node writes header strings as latin1; send the URL's UTF-8 bytes unchanged.
  let v = Buffer.from(url, 'utf8').toString('latin1');
  // Control characters cannot appear in a header value: percent-encode them.
  v = v.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0'));
  return v;
}

// ---------------------------------------------------------------- handlers
async function handle(req, res) {
  const u = new URL(req.url, 'http://localhost');
  const path = u.pathname;
  const q = u.searchParams;
  const method = req.method;
  const raw = await readBody(req);
  let m;

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
    const h = hashPassword(b.password, user.salt);
    if (!crypto.timingSafeEqual(Buffer.from(h, 'hex'), Buffer.from(user.hash, 'hex'))) throw unauthorized('invalid credentials');
    const token = crypto.randomBytes(32).toString('base64url');
    tokens.set(token, user.id);
    return sendJson(res, 200, { token, token_type: 'bearer', user: publicUser(user) });
  }

  if ((m = /^\/r\/([^/]+)$/.exec(path))) {
    if (method !== 'GET') return methodNotAllowed(res);
    let slug;
    try {
      slug = decodeURIComponent(m[1]);
    } catch (_) {
      throw notFound('unknown slug');
    }
    const id = slugs.get(slug);
    const l = id && links.get(id);
    if (!l) throw notFound('unknown slug');
    const st = linkStatus(l);
    if (st === 'disabled') throw new HttpError(410, 'link_disabled', 'this link is disabled');
    if (st === 'expired') throw new HttpError(410, 'link_expired', 'this link has expired');
    let referrer = null;
    const ref = req.headers['referer'];
    if (typeof ref === 'string') {
      const r = ref.trim();
      if (!/\s/.test(r)) {
        const host = httpHost(r);
        if (host) referrer = host.toLowerCase();
      }
    }
    l.visits.push({ visited_at: nowIso(), referrer, seq: ++seq });
    return sendJson(res, 302, { url: l.url }, { Location: headerLocation(l.url) });
  }

  // Every other known route needs authentication.
  const route = matchRoute(method, path);
  if (!route) throw notFound('no such route');
  if (route === 405) {
    authenticate(req);
    return methodNotAllowed(res);
  }
  const auth = authenticate(req);
  return route.fn(auth, route.params, q, raw, res);
}

function methodNotAllowed(res) {
  sendJson(res, 405, { error: 'method_not_allowed', message: 'method not allowed' });
}

const routes = [
  ['POST', /^\/auth\/logout$/, (a, p, q, raw, res) => {
    tokens.delete(a.token);
    sendJson(res, 204);
  }],
  ['GET', /^\/me$/, (a, p, q, raw, res) => sendJson(res, 200, publicUser(a.user))],
  ['GET', /^\/links$/, listLinks],
  ['POST', /^\/links$/, createLink],
  ['GET', /^\/links\/([^/]+)$/, (a, p, q, raw, res) => sendJson(res, 200, linkView(ownedLink(a.user, p[0])))],
  ['PATCH', /^\/links\/([^/]+)$/, updateLink],
  ['DELETE', /^\/links\/([^/]+)$/, (a, p, q, raw, res) => {
    const l = ownedLink(a.user, p[0]);
    links.delete(l.id);
    if (slugs.get(l.slug) === l.id) slugs.delete(l.slug);
    sendJson(res, 204);
  }],
  ['GET', /^\/links\/([^/]+)\/visits$/, (a, p, q, raw, res) => {
    const l = ownedLink(a.user, p[0]);
    const bad = [];
    const pg = parsePaging(q, bad);
    if (bad.length) throw validation(bad);
    const items = l.visits.slice().sort((x, y) => y.seq - x.seq).map((v) => ({ visited_at: v.visited_at, referrer: v.referrer }));
    sendJson(res, 200, page(items, pg));
  }],
  ['DELETE', /^\/links\/([^/]+)\/visits$/, (a, p, q, raw, res) => {
    const l = ownedLink(a.user, p[0]);
    l.visits = [];
    sendJson(res, 204);
  }],
  ['GET', /^\/links\/([^/]+)\/stats$/, (a, p, q, raw, res) => {
    const l = ownedLink(a.user, p[0]);
    const days = new Map();
    const refs = new Map();
    for (const v of l.visits) {
      const d = v.visited_at.slice(0, 10);
      days.set(d, (days.get(d) || 0) + 1);
      refs.set(v.referrer, (refs.get(v.referrer) || 0) + 1);
    }
    const by_day = Array.from(days, ([date, visits]) => ({ date, visits })).sort((x, y) => (x.date < y.date ? -1 : 1));
    const by_referrer = Array.from(refs, ([referrer, visits]) => ({ referrer, visits })).sort((x, y) => {
      if (x.visits !== y.visits) return y.visits - x.visits;
      if (x.referrer === null) return 1;
      if (y.referrer === null) return -1;
      return x.referrer < y.referrer ? -1 : x.referrer > y.referrer ? 1 : 0;
    });
    sendJson(res, 200, { link_id: l.id, total_visits: l.visits.length, by_day, by_referrer });
  }],
  ['GET', /^\/tags$/, (a, p, q, raw, res) => {
    const counts = new Map();
    for (const l of links.values()) {
      if (l.owner_id !== a.user.id) continue;
      for (const t of l.tags) counts.set(t, (counts.get(t) || 0) + 1);
    }
    const items = Array.from(counts, ([tag, n]) => ({ tag, links: n })).sort((x, y) => (x.tag < y.tag ? -1 : 1));
    sendJson(res, 200, { items });
  }],
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

function listLinks(a, p, q, raw, res) {
  const bad = [];
  const pg = parsePaging(q, bad);
  let status = null;
  if (q.has('status')) {
    status = q.get('status');
    if (!['active', 'disabled', 'expired'].includes(status)) bad.push('status');
  }
  if (bad.length) throw validation(bad);
  const tag = q.has('tag') ? q.get('tag') : null;
  const items = [];
  for (const l of links.values()) {
    if (l.owner_id !== a.user.id) continue;
    if (tag !== null && !l.tags.includes(tag)) continue;
    if (status !== null && linkStatus(l) !== status) continue;
    items.push(l);
  }
  items.sort((x, y) => y.seq - x.seq);
  sendJson(res, 200, page(items.map(linkView), pg));
}

function createLink(a, p, q, raw, res) {
  const b = parseObject(raw);
  const bad = [];
  if (!validUrl(b.url)) bad.push('url');
  let slug = null;
  if (has(b, 'slug')) {
    if (typeof b.slug !== 'string' || !SLUG_RE.test(b.slug)) bad.push('slug');
    else slug = b.slug;
  }
  let tags = [];
  if (has(b, 'tags')) {
    tags = normTags(b.tags);
    if (tags === null) bad.push('tags');
  }
  let expires = null;
  if (has(b, 'expires_at') && b.expires_at !== null) {
    expires = parseTimestamp(b.expires_at);
    if (!expires || expires.ms <= Date.now()) bad.push('expires_at');
  }
  if (bad.length) throw validation(bad);
  if (slug !== null && slugs.has(slug)) throw conflict('slug is taken');
  if (slug === null) slug = genSlug();
  const now = nowIso();
  const l = {
    id: newId(), slug, url: b.url, tags, owner_id: a.user.id, disabled: false, expires,
    visits: [], created_at: now, updated_at: now, seq: ++seq,
  };
  links.set(l.id, l);
  slugs.set(slug, l.id);
  sendJson(res, 201, linkView(l));
}

function updateLink(a, p, q, raw, res) {
  const l = ownedLink(a.user, p[0]);
  const b = parseObject(raw);
  const bad = [];
  const ch = {};
  if (has(b, 'url')) {
    if (!validUrl(b.url)) bad.push('url');
    else ch.url = b.url;
  }
  if (has(b, 'tags')) {
    const t = normTags(b.tags);
    if (t === null) bad.push('tags');
    else ch.tags = t;
  }
  if (has(b, 'disabled')) {
    if (typeof b.disabled !== 'boolean') bad.push('disabled');
    else ch.disabled = b.disabled;
  }
  if (has(b, 'expires_at')) {
    if (b.expires_at === null) ch.expires = null;
    else {
      const e = parseTimestamp(b.expires_at);
      if (!e) bad.push('expires_at');
      else ch.expires = e;
    }
  }
  if (bad.length) throw validation(bad);
  Object.assign(l, ch);
  l.updated_at = nowIso();
  sendJson(res, 200, linkView(l));
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
server.listen(port, '0.0.0.0', () => console.log('url-shortener listening on ' + port));
