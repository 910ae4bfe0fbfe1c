'use strict';
// Booking — independent implementation on Node's standard library only.
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
const calendarUnavailable = (m) => new HttpError(502, 'calendar_unavailable', m || 'the calendar provider failed');

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
  let v;
  try {
    v = JSON.parse(raw);
  } catch (_) {
    throw validation([], 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw validation([], 'request body must be a JSON object');
  if (depthOf(v) > 32) throw validation([], 'request body is nested more than 32 levels deep');
  return v;
}
// Nesting depth of a parsed JSON value, objects and arrays counted together (spec: Limits).
// Stops descending past 33 levels, so a 20000-level body costs no deep recursion.
function depthOf(v, level = 0) {
  if (v === null || typeof v !== 'object') return level;
  if (level > 32) return level + 1;
  let max = level + 1;
  for (const child of Object.values(v)) max = Math.max(max, depthOf(child, level + 1));
  return max;
}

const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const charLen = (s) => Array.from(s).length;
const nonBlank = (s) => /\S/u.test(s);
const nowIso = () => new Date().toISOString();
const newId = () => crypto.randomUUID();

// Per-key async mutex: serialises every state-changing operation on one resource.
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
const page = (items, p) => ({ items: items.slice(p.offset, p.offset + p.limit), total: items.length, limit: p.limit, offset: p.offset });

// ------------------------------------------------------------------ times
const MIN = 60000;
const DAY = 24 * 60 * MIN;

function daysInMonth(y, m) {
  return [31, (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}
function utcMs(y, mo, d, h, mi, s) {
  const dt = new Date(0);
  dt.setUTCFullYear(y, mo - 1, d);
  dt.setUTCHours(h, mi, s, 0);
  return dt.getTime();
}
// A date "YYYY-MM-DD" -> epoch ms of its midnight UTC, or null.
function parseDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return null;
  const y = +m[1], mo = +m[2], d = +m[3];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  return utcMs(y, mo, d, 0, 0, 0);
}
// A booking instant "YYYY-MM-DDTHH:MM:SSZ" on a quarter hour -> epoch ms, or null.
function parseInstant(s) {
  if (typeof s !== 'string') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(s);
  if (!m) return null;
  const y = +m[1], mo = +m[2], d = +m[3], h = +m[4], mi = +m[5], se = +m[6];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || se > 59) return null;
  if (mi % 15 !== 0 || se !== 0) return null;
  return utcMs(y, mo, d, h, mi, se);
}
function fmtInstant(ms) {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}
// Times of day -> minutes; start 00:00-23:45, end 00:15-24:00, quarter hours only.
function todMinutes(s, isEnd) {
  if (typeof s !== 'string') return null;
  const m = /^(\d{2}):(\d{2})$/.exec(s);
  if (!m) return null;
  const h = +m[1], mi = +m[2];
  if (mi % 15 !== 0 || mi > 45) return null;
  const v = h * 60 + mi;
  if (isEnd ? v < 15 || v > 1440 : v > 1425) return null;
  return v;
}
const weekdayOf = (dayMs) => (new Date(dayMs).getUTCDay() + 6) % 7;

// Merges [start, end) intervals, joining those that touch or overlap.
function mergeIntervals(list) {
  const s = list.filter((x) => x[1] > x[0]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = [];
  for (const iv of s) {
    const last = out[out.length - 1];
    if (last && iv[0] <= last[1]) last[1] = Math.max(last[1], iv[1]);
    else out.push([iv[0], iv[1]]);
  }
  return out;
}
function subtract(base, cuts) {
  let cur = base.map((x) => [x[0], x[1]]);
  for (const [cs, ce] of cuts) {
    const next = [];
    for (const [s, e] of cur) {
      if (ce <= s || cs >= e) {
        next.push([s, e]);
        continue;
      }
      if (cs > s) next.push([s, cs]);
      if (ce < e) next.push([ce, e]);
    }
    cur = next;
  }
  return mergeIntervals(cur);
}
// The joined opening windows (absolute ms intervals) of the day starting at dayMs.
function dayWindows(resource, dayMs) {
  const wd = weekdayOf(dayMs);
  return mergeIntervals(
    resource.availability.filter((w) => w.weekday === wd).map((w) => [dayMs + todMinutes(w.start, false) * MIN, dayMs + todMinutes(w.end, true) * MIN]),
  );
}

// ---------------------------------------------------------- calendar client
const CALENDAR_URL = (process.env.CALENDAR_URL || 'http://localhost:9100').replace(/\/+$/, '');
const agent = new http.Agent({ keepAlive: false });

function calendarCall(method, path, body) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(CALENDAR_URL + path);
    } catch (e) {
      resolve({ status: 0, error: e });
      return;
    }
    const data = body === undefined ? null : Buffer.from(JSON.stringify(body), 'utf8');
    const headers = { Accept: 'application/json' };
    if (data) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = data.length;
    }
    const req = http.request(
      { protocol: u.protocol, hostname: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, agent, timeout: 10000 },
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
    if (data) req.write(data);
    req.end();
  });
}
const calPath = (calendarId) => '/calendars/' + calendarId;

// Busy blocks [startMs, endMs, event_id] over [fromMs, toMs); throws 502 on failure.
async function fetchBusy(calendarId, fromMs, toMs) {
  const r = await calendarCall('GET', calPath(calendarId) + '/busy?from=' + fmtInstant(fromMs) + '&to=' + fmtInstant(toMs));
  if (r.status !== 200 || !r.json || !Array.isArray(r.json.busy)) throw calendarUnavailable('could not read busy time from the calendar provider');
  const out = [];
  for (const b of r.json.busy) {
    const s = Date.parse(b && b.start), e = Date.parse(b && b.end);
    if (Number.isNaN(s) || Number.isNaN(e)) throw calendarUnavailable('the calendar provider answered an invalid busy block');
    out.push([s, e, b.event_id]);
  }
  return out;
}

// ------------------------------------------------------------------ state
const users = new Map();
const usersByName = new Map();
const tokens = new Map();
const resources = new Map(); // id -> resource
const calendarsInUse = new Map(); // calendar_id -> resource id
const bookings = new Map(); // id -> booking
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

const resourceView = (r) => ({
  id: r.id, owner_id: r.owner_id, name: r.name, kind: r.kind, calendar_id: r.calendar_id,
  availability: r.availability.map((w) => ({ weekday: w.weekday, start: w.start, end: w.end })), created_at: r.created_at,
});
const bookingView = (b) => ({
  id: b.id, resource_id: b.resource_id, user_id: b.user_id, title: b.title, start: fmtInstant(b.start), end: fmtInstant(b.end),
  status: b.status, calendar_event_id: b.calendar_event_id, created_at: b.created_at, cancelled_at: b.cancelled_at, cancelled_by: b.cancelled_by,
});

const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const CAL_RE = /^[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;

function validName(v) {
  return typeof v === 'string' && nonBlank(v) && charLen(v) >= 1 && charLen(v) <= 100;
}
// Returns the normalised window list or null when invalid.
function validAvailability(v) {
  if (!Array.isArray(v) || v.length > 50) return null;
  const out = [];
  for (const w of v) {
    if (w === null || typeof w !== 'object' || Array.isArray(w)) return null;
    if (typeof w.weekday !== 'number' || !Number.isInteger(w.weekday) || w.weekday < 0 || w.weekday > 6) return null;
    const s = todMinutes(w.start, false), e = todMinutes(w.end, true);
    if (s === null || e === null || e <= s) return null;
    out.push({ weekday: w.weekday, start: w.start, end: w.end, s, e });
  }
  for (let i = 0; i < out.length; i++)
    for (let j = i + 1; j < out.length; j++)
      if (out[i].weekday === out[j].weekday && out[i].s < out[j].e && out[j].s < out[i].e) return null;
  return out.map((w) => ({ weekday: w.weekday, start: w.start, end: w.end }));
}

function validTitle(v) {
  return typeof v === 'string' && nonBlank(v) && charLen(v) >= 1 && charLen(v) <= 100;
}

// Validates start/end of a booking body; pushes bad field names; returns {start, end} ms.
function validateInterval(b, bad) {
  const s = parseInstant(b.start), e = parseInstant(b.end);
  if (s === null) bad.push('start');
  if (e === null) bad.push('end');
  if (s !== null && e !== null) {
    if (!(e > s) || e - s > 8 * 60 * MIN) bad.push('end');
    if (!(s > Date.now())) bad.push('start');
  }
  return { start: s, end: e };
}

// Bookings can be seen by the booker and by the owner of the (existing) resource.
function visibleBooking(user, id) {
  const b = bookings.get(id);
  if (!b) throw notFound('booking not found');
  const r = resources.get(b.resource_id);
  const isOwner = !!r && r.owner_id === user.id;
  if (b.user_id !== user.id && !isOwner) throw notFound('booking not found');
  return { b, r, isOwner };
}

// State rules 1 and 2 for an interval on a resource (ignoring booking `selfId`).
function checkSlot(resource, start, end, selfId) {
  const dayMs = Math.floor(start / DAY) * DAY;
  const windows = dayWindows(resource, dayMs);
  if (!windows.some(([ws, we]) => ws <= start && end <= we)) throw conflict('outside_availability', 'the booking is not within the opening hours');
  for (const o of bookings.values()) {
    if (o.resource_id !== resource.id || o.status !== 'confirmed' || o.id === selfId) continue;
    if (o.start < end && start < o.end) throw conflict('booking_conflict', 'the time overlaps another booking');
  }
}

async function checkCalendar(resource, start, end, selfEventId) {
  const busy = await fetchBusy(resource.calendar_id, start, end);
  if (busy.some(([s, e, id]) => s < end && start < e && !(selfEventId && id === selfEventId)))
    throw conflict('calendar_conflict', 'the calendar is busy at that time');
}

// Deletes the booking's event; 404/410 count as success. Throws 502 otherwise.
async function deleteEvent(resource, b) {
  const r = await calendarCall('DELETE', calPath(resource.calendar_id) + '/events/' + encodeURIComponent(b.calendar_event_id));
  if (!(r.status >= 200 && r.status < 300) && r.status !== 404 && r.status !== 410) throw calendarUnavailable('could not delete the calendar event');
}

function sortBookings(list) {
  return list.sort((x, y) => x.start - y.start || x.seq - y.seq);
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
    if (bad.length) throw validation(bad);
    if (usersByName.has(b.username)) throw conflict('conflict', 'username is taken');
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
  ['GET', /^\/resources$/, listResources],
  ['POST', /^\/resources$/, createResource],
  ['GET', /^\/resources\/([^/]+)$/, ({ params, res }) => {
    const r = resources.get(params[0]);
    if (!r) throw notFound('resource not found');
    sendJson(res, 200, resourceView(r));
  }],
  ['PATCH', /^\/resources\/([^/]+)$/, updateResource],
  ['DELETE', /^\/resources\/([^/]+)$/, deleteResource],
  ['GET', /^\/resources\/([^/]+)\/availability$/, freeTime],
  ['GET', /^\/resources\/([^/]+)\/bookings$/, listResourceBookings],
  ['POST', /^\/resources\/([^/]+)\/bookings$/, createBooking],
  ['GET', /^\/bookings$/, listMyBookings],
  ['GET', /^\/bookings\/([^/]+)$/, ({ user, params, res }) => sendJson(res, 200, bookingView(visibleBooking(user, params[0]).b))],
  ['PATCH', /^\/bookings\/([^/]+)$/, rescheduleBooking],
  ['POST', /^\/bookings\/([^/]+)\/cancel$/, cancelBooking],
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

// ---- resources
function listResources({ q, res }) {
  const bad = [];
  const pg = parsePaging(q, bad);
  let kind = null;
  if (q.has('kind')) {
    kind = q.get('kind');
    if (kind !== 'room' && kind !== 'practitioner') bad.push('kind');
  }
  if (bad.length) throw validation(bad);
  const items = Array.from(resources.values()).filter((r) => kind === null || r.kind === kind).sort((a, b) => a.seq - b.seq);
  sendJson(res, 200, page(items.map(resourceView), pg));
}

function createResource({ user, raw, res }) {
  const b = parseObject(raw);
  const bad = [];
  if (!validName(b.name)) bad.push('name');
  if (b.kind !== 'room' && b.kind !== 'practitioner') bad.push('kind');
  if (typeof b.calendar_id !== 'string' || charLen(b.calendar_id) > 200 || !CAL_RE.test(b.calendar_id)) bad.push('calendar_id');
  let availability = [];
  if (has(b, 'availability')) {
    availability = validAvailability(b.availability);
    if (availability === null) bad.push('availability');
  }
  if (bad.length) throw validation(bad);
  if (calendarsInUse.has(b.calendar_id)) throw conflict('conflict', 'the calendar is used by another resource');
  const r = {
    id: newId(), owner_id: user.id, name: b.name, kind: b.kind, calendar_id: b.calendar_id, availability,
    created_at: nowIso(), seq: ++seq,
  };
  resources.set(r.id, r);
  calendarsInUse.set(r.calendar_id, r.id);
  sendJson(res, 201, resourceView(r));
}

function ownResource(user, id) {
  const r = resources.get(id);
  if (!r) throw notFound('resource not found');
  if (r.owner_id !== user.id) throw forbidden('only the owner may do this');
  return r;
}

function updateResource({ user, params, raw, res }) {
  const r = ownResource(user, params[0]);
  const b = parseObject(raw);
  const bad = [];
  const ch = {};
  if (has(b, 'name')) {
    if (!validName(b.name)) bad.push('name');
    else ch.name = b.name;
  }
  if (has(b, 'availability')) {
    const a = validAvailability(b.availability);
    if (a === null) bad.push('availability');
    else ch.availability = a;
  }
  if (bad.length) throw validation(bad);
  Object.assign(r, ch);
  sendJson(res, 200, resourceView(r));
}

async function deleteResource({ user, params, res }) {
  const r0 = ownResource(user, params[0]);
  await withLock(r0.id, async () => {
    const r = ownResource(user, r0.id);
    const list = sortBookings(Array.from(bookings.values()).filter((b) => b.resource_id === r.id && b.status === 'confirmed'));
    for (const b of list) {
      await deleteEvent(r, b);
      b.status = 'cancelled';
      b.cancelled_at = nowIso();
      b.cancelled_by = user.id;
    }
    resources.delete(r.id);
    if (calendarsInUse.get(r.calendar_id) === r.id) calendarsInUse.delete(r.calendar_id);
  });
  sendJson(res, 204);
}

async function freeTime({ params, q, res }) {
  const r = resources.get(params[0]);
  if (!r) throw notFound('resource not found');
  const date = q.has('date') ? q.get('date') : null;
  const dayMs = date === null ? null : parseDate(date);
  if (dayMs === null) throw validation(['date']);
  const windows = dayWindows(r, dayMs);
  const busy = await fetchBusy(r.calendar_id, dayMs, dayMs + DAY);
  const cuts = busy.map(([s, e]) => [Math.max(s, dayMs), Math.min(e, dayMs + DAY)]);
  for (const b of bookings.values()) if (b.resource_id === r.id && b.status === 'confirmed') cuts.push([b.start, b.end]);
  const free = subtract(windows, cuts).map(([s, e]) => ({ start: fmtInstant(s), end: fmtInstant(e) }));
  sendJson(res, 200, { resource_id: r.id, date, free });
}

// ---- bookings
function statusFilter(q, bad) {
  if (!q.has('status')) return null;
  const s = q.get('status');
  if (s !== 'confirmed' && s !== 'cancelled') bad.push('status');
  return s;
}

function listMyBookings({ user, q, res }) {
  const bad = [];
  const pg = parsePaging(q, bad);
  const st = statusFilter(q, bad);
  if (bad.length) throw validation(bad);
  const items = sortBookings(Array.from(bookings.values()).filter((b) => b.user_id === user.id && (st === null || b.status === st)));
  sendJson(res, 200, page(items.map(bookingView), pg));
}

function listResourceBookings({ user, params, q, res }) {
  const r = ownResource(user, params[0]);
  const bad = [];
  const pg = parsePaging(q, bad);
  const st = statusFilter(q, bad);
  if (bad.length) throw validation(bad);
  const items = sortBookings(Array.from(bookings.values()).filter((b) => b.resource_id === r.id && (st === null || b.status === st)));
  sendJson(res, 200, page(items.map(bookingView), pg));
}

async function createBooking({ user, params, raw, res }) {
  if (!resources.has(params[0])) throw notFound('resource not found');
  const b = parseObject(raw);
  const bad = [];
  const { start, end } = validateInterval(b, bad);
  let title = 'Booking';
  if (has(b, 'title')) {
    if (!validTitle(b.title)) bad.push('title');
    else title = b.title;
  }
  if (bad.length) throw validation(bad);
  const booking = await withLock(params[0], async () => {
    const r = resources.get(params[0]);
    if (!r) throw notFound('resource not found');
    checkSlot(r, start, end, null);
    await checkCalendar(r, start, end, null);
    const id = newId();
    const ev = await calendarCall('POST', calPath(r.calendar_id) + '/events', { summary: title, start: fmtInstant(start), end: fmtInstant(end), reference: id });
    if (ev.status !== 201 && ev.status !== 200) throw calendarUnavailable('could not create the calendar event');
    if (!ev.json || (typeof ev.json.id !== 'string' && typeof ev.json.id !== 'number')) throw calendarUnavailable('the calendar provider answered no event id');
    const bk = {
      id, resource_id: r.id, user_id: user.id, title, start, end, status: 'confirmed', calendar_event_id: String(ev.json.id),
      created_at: nowIso(), cancelled_at: null, cancelled_by: null, seq: ++seq,
    };
    bookings.set(id, bk);
    return bk;
  });
  sendJson(res, 201, bookingView(booking));
}

async function cancelBooking({ user, params, res }) {
  const { b: b0 } = visibleBooking(user, params[0]);
  const out = await withLock(b0.resource_id, async () => {
    const { b, r } = visibleBooking(user, params[0]);
    if (b.status !== 'confirmed' || !r) throw conflict('invalid_state', 'the booking is already cancelled');
    await deleteEvent(r, b);
    b.status = 'cancelled';
    b.cancelled_at = nowIso();
    b.cancelled_by = user.id;
    return b;
  });
  sendJson(res, 200, bookingView(out));
}

async function rescheduleBooking({ user, params, raw, res }) {
  const { b: b0 } = visibleBooking(user, params[0]);
  if (b0.user_id !== user.id) throw forbidden('only the booker may reschedule');
  const body = parseObject(raw);
  const bad = [];
  const hasS = has(body, 'start'), hasE = has(body, 'end');
  let start = null, end = null;
  if (hasS || hasE) {
    if (hasS && !hasE) {
      bad.push('end');
      if (parseInstant(body.start) === null) bad.push('start');
    } else if (hasE && !hasS) {
      bad.push('start');
      if (parseInstant(body.end) === null) bad.push('end');
    } else {
      ({ start, end } = validateInterval(body, bad));
    }
  }
  let title = null;
  if (has(body, 'title')) {
    if (!validTitle(body.title)) bad.push('title');
    else title = body.title;
  }
  if (bad.length) throw validation(bad);
  const out = await withLock(b0.resource_id, async () => {
    const { b, r } = visibleBooking(user, params[0]);
    if (b.status !== 'confirmed' || !r) throw conflict('invalid_state', 'the booking is cancelled');
    const ns = start !== null ? start : b.start;
    const ne = end !== null ? end : b.end;
    const nt = title !== null ? title : b.title;
    if (start !== null) {
      checkSlot(r, ns, ne, b.id);
      await checkCalendar(r, ns, ne, b.calendar_event_id);
    }
    const ev = await calendarCall('PATCH', calPath(r.calendar_id) + '/events/' + encodeURIComponent(b.calendar_event_id), {
      summary: nt, start: fmtInstant(ns), end: fmtInstant(ne),
    });
    if (!(ev.status >= 200 && ev.status < 300)) throw calendarUnavailable('could not update the calendar event');
    b.start = ns;
    b.end = ne;
    b.title = nt;
    return b;
  });
  sendJson(res, 200, bookingView(out));
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
server.listen(port, '0.0.0.0', () => console.log('booking listening on ' + port));
