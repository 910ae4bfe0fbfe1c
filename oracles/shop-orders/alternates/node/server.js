'use strict';
// Shop orders — independent implementation on Node's standard library only.
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
const forbidden = (m) => new HttpError(403, 'forbidden', m || 'your role may not do this');
const notFound = (m) => new HttpError(404, 'not_found', m || 'not found');
const conflict = (code, m) => new HttpError(409, code, m || code);
const validation = (fields, m) =>
  new HttpError(422, 'validation_error', m || 'validation failed: ' + fields.join(', '), fields);
const paymentUnavailable = (m) => new HttpError(502, 'payment_unavailable', m || 'the payments provider failed');

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

// spec.md "Limits and hostile input": > 1 MiB gets 413 or 422, nesting > 32 levels gets 422.
function nestingDepth(raw) {
  let depth = 0, max = 0, inStr = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
    } else if (c === '"') inStr = true;
    else if (c === '{' || c === '[') { if (++depth > max) max = depth; }
    else if (c === '}' || c === ']') depth--;
  }
  return max;
}

function parseObject(raw) {
  if (Buffer.byteLength(raw, 'utf8') > 1048576) throw validation([], 'request body larger than 1 MiB');
  if (nestingDepth(raw) > 32) throw validation([], 'request body nested more than 32 levels deep');
  let v;
  try {
    v = JSON.parse(raw);
  } catch (_) {
    throw validation([], 'request body is not valid JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw validation([], 'request body must be a JSON object');
  return v;
}

const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const charLen = (s) => Array.from(s).length;
const nonBlank = (s) => /\S/u.test(s);
const nowIso = () => new Date().toISOString();
const newId = () => crypto.randomUUID();
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);

// Per-key async mutex.
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

// ---------------------------------------------------------- payments client
const PAYMENTS_URL = (process.env.PAYMENTS_URL || 'http://localhost:9000').replace(/\/+$/, '');
const STAFF_TOKEN = process.env.SHOP_STAFF_TOKEN || '';
const agent = new http.Agent({ keepAlive: false });

function paymentsPost(path, body) {
  return new Promise((resolve) => {
    let u;
    try {
      u = new URL(PAYMENTS_URL + path);
    } catch (e) {
      resolve({ status: 0, error: e });
      return;
    }
    const data = Buffer.from(JSON.stringify(body), 'utf8');
    const headers = { 'Content-Type': 'application/json', 'Content-Length': data.length, Accept: 'application/json' };
    if (process.env.PAYMENTS_API_KEY) headers.Authorization = 'Bearer ' + process.env.PAYMENTS_API_KEY;
    const req = http.request(
      { protocol: u.protocol, hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: 'POST', headers, agent, timeout: 10000 },
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
    req.write(data);
    req.end();
  });
}

// ------------------------------------------------------------------ state
const users = new Map();
const usersByName = new Map();
const tokens = new Map();
const products = new Map();
const skus = new Map();
const carts = new Map(); // customer id -> [{product_id, quantity}]
const orders = new Map();
const idempotency = new Map(); // customer id + '\n' + key -> {order_id, address}
let seq = 0;

const hashPassword = (pw, salt) => crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
const publicUser = (u) => ({ id: u.id, username: u.username, created_at: u.created_at });

// Returns {staff: true} or {staff: false, user}.
function authenticate(req) {
  const h = req.headers['authorization'];
  if (typeof h !== 'string') throw unauthorized('missing bearer token');
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  if (STAFF_TOKEN && m[1] === STAFF_TOKEN) return { staff: true };
  const uid = tokens.get(m[1]);
  if (!uid || !users.has(uid)) throw unauthorized('invalid token');
  return { staff: false, user: users.get(uid) };
}

const productView = (p) => ({
  id: p.id, sku: p.sku, name: p.name, description: p.description, price: p.price, currency: 'usd',
  stock: p.stock, active: p.active, created_at: p.created_at,
});
const orderView = (o) => ({
  id: o.id, customer_id: o.customer_id, status: o.status, items: o.items.map((l) => Object.assign({}, l)), total: o.total,
  currency: 'usd', shipping_address: o.shipping_address, charge_id: o.charge_id, refund_id: o.refund_id,
  created_at: o.created_at, paid_at: o.paid_at, shipped_at: o.shipped_at, cancelled_at: o.cancelled_at,
});

function cartOf(uid) {
  if (!carts.has(uid)) carts.set(uid, []);
  return carts.get(uid);
}
function cartView(uid) {
  const items = cartOf(uid).map((l) => {
    const p = products.get(l.product_id);
    return { product_id: p.id, sku: p.sku, name: p.name, unit_price: p.price, quantity: l.quantity, line_total: p.price * l.quantity };
  });
  return { items, total: items.reduce((s, l) => s + l.line_total, 0), currency: 'usd' };
}

const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const SKU_RE = /^[A-Z0-9-]{3,32}$/;
const IDEM_RE = /^[A-Za-z0-9_-]{1,64}$/;

// Validates product fields present in b; pushes bad names; returns the changes.
function validateProductFields(b, bad, creating) {
  const ch = {};
  if (creating || has(b, 'name')) {
    if (typeof b.name !== 'string' || !nonBlank(b.name) || charLen(b.name) > 100) bad.push('name');
    else ch.name = b.name;
  }
  if (has(b, 'description')) {
    if (typeof b.description !== 'string' || charLen(b.description) > 1000) bad.push('description');
    else ch.description = b.description;
  }
  if (creating || has(b, 'price')) {
    if (!isInt(b.price) || b.price < 1 || b.price > 1000000) bad.push('price');
    else ch.price = b.price;
  }
  if (has(b, 'stock')) {
    if (!isInt(b.stock) || b.stock < 0 || b.stock > 100000) bad.push('stock');
    else ch.stock = b.stock;
  }
  if (has(b, 'active')) {
    if (typeof b.active !== 'boolean') bad.push('active');
    else ch.active = b.active;
  }
  return ch;
}

// An order visible to the caller (its customer or staff), else 404.
function visibleOrder(who, id) {
  const o = orders.get(id);
  if (!o || (!who.staff && o.customer_id !== who.user.id)) throw notFound('order not found');
  return o;
}

function restoreStock(o) {
  for (const l of o.items) {
    const p = products.get(l.product_id);
    if (p) p.stock += l.quantity;
  }
}

// ---------------------------------------------------------------- handlers
async function handle(req, res) {
  const u = new URL(req.url, 'http://localhost');
  const path = u.pathname;
  const method = req.method;
  const raw = await readBody(req);
  const q = u.searchParams;
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
  // Public product reads.
  if (path === '/products' && method === 'GET') {
    const bad = [];
    const pg = parsePaging(q, bad);
    if (bad.length) throw validation(bad);
    const items = Array.from(products.values()).filter((p) => p.active).sort((a, b) => a.seq - b.seq);
    return sendJson(res, 200, page(items.map(productView), pg));
  }
  if ((m = /^\/products\/([^/]+)$/.exec(path)) && method === 'GET') {
    const p = products.get(safeDecode(m[1]));
    if (!p) throw notFound('product not found');
    return sendJson(res, 200, productView(p));
  }

  const route = matchRoute(method, path);
  if (!route) throw notFound('no such route');
  const who = authenticate(req);
  if (route === 405) return methodNotAllowed(res);
  return route.fn({ who, params: route.params, q, raw, res, req });
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch (_) {
    return s;
  }
}

function methodNotAllowed(res) {
  sendJson(res, 405, { error: 'method_not_allowed', message: 'method not allowed' });
}

const routes = [
  ['GET', /^\/products$/, null], // public, handled above
  ['POST', /^\/products$/, createProduct],
  ['GET', /^\/products\/([^/]+)$/, null],
  ['PATCH', /^\/products\/([^/]+)$/, updateProduct],
  ['GET', /^\/cart$/, ({ who, res }) => {
    if (who.staff) throw forbidden('staff have no cart');
    sendJson(res, 200, cartView(who.user.id));
  }],
  ['PUT', /^\/cart\/items\/([^/]+)$/, putCartItem],
  ['DELETE', /^\/cart\/items\/([^/]+)$/, deleteCartItem],
  ['GET', /^\/orders$/, listOrders],
  ['POST', /^\/orders$/, checkout],
  ['GET', /^\/orders\/([^/]+)$/, ({ who, params, res }) => sendJson(res, 200, orderView(visibleOrder(who, params[0])))],
  ['POST', /^\/orders\/([^/]+)\/pay$/, payOrder],
  ['POST', /^\/orders\/([^/]+)\/ship$/, shipOrder],
  ['POST', /^\/orders\/([^/]+)\/cancel$/, cancelOrder],
];

function matchRoute(method, path) {
  let pathMatched = false;
  for (const [mt, re, fn] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (mt !== method || !fn) continue;
    return { fn, params: m.slice(1).map(safeDecode) };
  }
  return pathMatched ? 405 : null;
}

// ---- products
function createProduct({ who, raw, res }) {
  if (!who.staff) throw forbidden('staff only');
  const b = parseObject(raw);
  const bad = [];
  if (typeof b.sku !== 'string' || !SKU_RE.test(b.sku)) bad.push('sku');
  const ch = validateProductFields(b, bad, true);
  if (bad.length) throw validation(bad);
  if (skus.has(b.sku)) throw conflict('conflict', 'the SKU is taken');
  const p = Object.assign({ id: newId(), sku: b.sku, description: '', stock: 0, active: true, created_at: nowIso(), seq: ++seq }, ch);
  products.set(p.id, p);
  skus.set(p.sku, p.id);
  sendJson(res, 201, productView(p));
}

function updateProduct({ who, params, raw, res }) {
  const p = products.get(params[0]);
  if (!p) throw notFound('product not found');
  if (!who.staff) throw forbidden('staff only');
  const b = parseObject(raw);
  const bad = [];
  const ch = validateProductFields(b, bad, false);
  if (bad.length) throw validation(bad);
  Object.assign(p, ch);
  sendJson(res, 200, productView(p));
}

// ---- cart
function putCartItem({ who, params, raw, res }) {
  const p = products.get(params[0]);
  if (!p) throw notFound('product not found');
  if (who.staff) throw forbidden('staff have no cart');
  const b = parseObject(raw);
  if (!isInt(b.quantity) || b.quantity < 1 || b.quantity > 99) throw validation(['quantity']);
  if (!p.active) throw conflict('product_unavailable', 'the product is not available');
  if (b.quantity > p.stock) throw conflict('insufficient_stock', 'not enough stock');
  const cart = cartOf(who.user.id);
  const line = cart.find((l) => l.product_id === p.id);
  if (line) line.quantity = b.quantity;
  else cart.push({ product_id: p.id, quantity: b.quantity });
  sendJson(res, 200, cartView(who.user.id));
}

function deleteCartItem({ who, params, res }) {
  const p = products.get(params[0]);
  if (!p) throw notFound('product not found');
  if (who.staff) throw forbidden('staff have no cart');
  const cart = cartOf(who.user.id);
  const i = cart.findIndex((l) => l.product_id === p.id);
  if (i < 0) throw notFound('the product is not in your cart');
  cart.splice(i, 1);
  sendJson(res, 200, cartView(who.user.id));
}

// ---- orders
const STATUSES = ['pending', 'paid', 'shipped', 'cancelled', 'refunded'];

function listOrders({ who, q, res }) {
  const bad = [];
  const pg = parsePaging(q, bad);
  let st = null;
  if (q.has('status')) {
    st = q.get('status');
    if (!STATUSES.includes(st)) bad.push('status');
  }
  if (bad.length) throw validation(bad);
  const items = Array.from(orders.values())
    .filter((o) => (who.staff || o.customer_id === who.user.id) && (st === null || o.status === st))
    .sort((a, b) => b.seq - a.seq);
  sendJson(res, 200, page(items.map(orderView), pg));
}

function checkout({ who, raw, res, req }) {
  if (who.staff) throw forbidden('staff cannot check out');
  const bad = [];
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string' || !IDEM_RE.test(key)) bad.push('Idempotency-Key');
  let b;
  try {
    b = parseObject(raw);
  } catch (e) {
    throw validation(bad, e.message);
  }
  const addr = b.shipping_address;
  if (typeof addr !== 'string' || !nonBlank(addr) || charLen(addr) > 300) bad.push('shipping_address');
  if (bad.length) throw validation(bad);
  const uid = who.user.id;
  const idemKey = uid + '\n' + key;
  const prior = idempotency.get(idemKey);
  if (prior) {
    if (prior.address !== addr) throw conflict('idempotency_conflict', 'this Idempotency-Key was used with a different body');
    return sendJson(res, 200, orderView(orders.get(prior.order_id)));
  }
  const cart = cartOf(uid);
  if (cart.length === 0) throw conflict('cart_empty', 'the cart is empty');
  for (const l of cart) if (!products.get(l.product_id).active) throw conflict('product_unavailable', 'a product in the cart is not available');
  for (const l of cart) if (l.quantity > products.get(l.product_id).stock) throw conflict('insufficient_stock', 'not enough stock');
  // No await between the checks above and the changes below: this is atomic.
  const items = cart.map((l) => {
    const p = products.get(l.product_id);
    return { product_id: p.id, sku: p.sku, name: p.name, unit_price: p.price, quantity: l.quantity, line_total: p.price * l.quantity };
  });
  for (const l of cart) products.get(l.product_id).stock -= l.quantity;
  const o = {
    id: newId(), customer_id: uid, status: 'pending', items, total: items.reduce((s, l) => s + l.line_total, 0),
    shipping_address: addr, charge_id: null, refund_id: null, created_at: nowIso(), paid_at: null, shipped_at: null,
    cancelled_at: null, seq: ++seq,
  };
  orders.set(o.id, o);
  idempotency.set(idemKey, { order_id: o.id, address: addr });
  carts.set(uid, []);
  sendJson(res, 201, orderView(o));
}

async function payOrder({ who, params, raw, res }) {
  const o0 = visibleOrder(who, params[0]);
  if (who.staff) throw forbidden('only the customer pays');
  const b = parseObject(raw);
  const src = b.payment_source;
  if (typeof src !== 'string' || !nonBlank(src) || charLen(src) > 100) throw validation(['payment_source']);
  const o = await withLock(o0.id, async () => {
    if (o0.status !== 'pending') throw conflict('invalid_state', 'only a pending order can be paid');
    const r = await paymentsPost('/charges', {
      amount: o0.total, currency: 'usd', source: src, description: 'Order ' + o0.id, metadata: { order_id: o0.id },
    });
    if ((r.status === 200 || r.status === 201) && r.json && r.json.status === 'declined') {
      throw new HttpError(402, 'payment_declined', 'the payment was declined' + (r.json.failure_code ? ' (' + r.json.failure_code + ')' : ''));
    }
    if (!((r.status === 200 || r.status === 201) && r.json && r.json.status === 'succeeded' && r.json.id)) {
      throw paymentUnavailable('the payments provider failed');
    }
    o0.status = 'paid';
    o0.charge_id = String(r.json.id);
    o0.paid_at = nowIso();
    return o0;
  });
  sendJson(res, 200, orderView(o));
}

async function shipOrder({ who, params, res }) {
  const o0 = visibleOrder(who, params[0]);
  if (!who.staff) throw forbidden('staff only');
  const o = await withLock(o0.id, async () => {
    if (o0.status !== 'paid') throw conflict('invalid_state', 'only a paid order can be shipped');
    o0.status = 'shipped';
    o0.shipped_at = nowIso();
    return o0;
  });
  sendJson(res, 200, orderView(o));
}

async function cancelOrder({ who, params, res }) {
  const o0 = visibleOrder(who, params[0]);
  const o = await withLock(o0.id, async () => {
    if (o0.status === 'pending') {
      o0.status = 'cancelled';
      o0.cancelled_at = nowIso();
      restoreStock(o0);
      return o0;
    }
    if (o0.status !== 'paid') throw conflict('invalid_state', 'this order can no longer be cancelled');
    const r = await paymentsPost('/refunds', { charge: o0.charge_id, amount: o0.total });
    if (!((r.status === 200 || r.status === 201) && r.json && r.json.id)) throw paymentUnavailable('the refund failed');
    o0.status = 'refunded';
    o0.refund_id = String(r.json.id);
    o0.cancelled_at = nowIso();
    restoreStock(o0);
    return o0;
  });
  sendJson(res, 200, orderView(o));
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
server.listen(port, '0.0.0.0', () => console.log('shop-orders listening on ' + port));
