'use strict';
// Inventory — products, suppliers, warehouses, purchase orders, stock.
// Node standard library only (node:http, node:crypto); in-memory state.
const http = require('node:http');
const crypto = require('node:crypto');

// ---------------------------------------------------------------- helpers

class ApiError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status;
    this.code = code;
    this.fields = fields;
  }
}
const unauthorized = (m) => new ApiError(401, 'unauthorized', m || 'authentication required');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'your role does not allow this action');
const notFound = (m) => new ApiError(404, 'not_found', m || 'not found');
const conflict = (m) => new ApiError(409, 'conflict', m || 'conflict');
const invalidState = (m) => new ApiError(409, 'invalid_state', m || 'the order\'s status does not allow this action');
const overReceipt = (m) => new ApiError(409, 'over_receipt', m || 'more than remains to be received');
const insufficientStock = (m) => new ApiError(409, 'insufficient_stock', m || 'stock would become negative');
const validation = (fields, m) => {
  const uniq = [];
  for (const f of fields) if (!uniq.includes(f)) uniq.push(f);
  return new ApiError(422, 'validation_error', m || ('invalid: ' + (uniq.join(', ') || 'body')), uniq);
};

const now = () => new Date().toISOString();
const newId = () => crypto.randomUUID();
const ulen = (s) => { let n = 0; for (const _ of s) n++; return n; };
const isStr = (v) => typeof v === 'string';
const isBool = (v) => typeof v === 'boolean';
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v) => typeof v === 'number' && Number.isInteger(v);
const intIn = (v, lo, hi) => isInt(v) && v >= lo && v <= hi;
const nonBlank = (s) => /\S/u.test(s);
const validText = (v, max) => isStr(v) && nonBlank(v) && ulen(v) <= max;
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

function send(res, status, body) {
  if (status === 204 || body === undefined) {
    res.writeHead(status);
    res.end();
    return;
  }
  const data = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}
function sendError(res, err) {
  const body = { error: err.code, message: err.message };
  if (err.status === 422) body.fields = err.fields || [];
  send(res, err.status, body);
}
function parseObject(raw, allowEmpty) {
  if (allowEmpty && raw.trim() === '') return {};
  let v;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    throw validation([], 'request body is not valid JSON');
  }
  if (!isObj(v)) throw validation([], 'request body must be a JSON object');
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
function parseIntParam(q, name, def, min, max, bad) {
  if (!q.has(name)) return def;
  const s = q.get(name);
  if (!/^[+-]?\d+$/.test(s)) { bad.push(name); return def; }
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < min || (max !== undefined && n > max)) { bad.push(name); return def; }
  return n;
}
function pageParams(q, bad) {
  return {
    limit: parseIntParam(q, 'limit', 20, 1, 100, bad),
    offset: parseIntParam(q, 'offset', 0, 0, undefined, bad),
  };
}
function boolParam(q, name, bad) {
  if (!q.has(name)) return undefined;
  const s = q.get(name);
  if (s === 'true') return true;
  if (s === 'false') return false;
  bad.push(name);
  return undefined;
}
const page = (all, p) => ({ items: all.slice(p.offset, p.offset + p.limit), total: all.length, limit: p.limit, offset: p.offset });

// ---------------------------------------------------------------- state

const users = new Map();      // id -> {id, username, role, active, created_at, salt, hash}
const usersByName = new Map();
const tokens = new Map();     // token -> user id
const products = new Map();   // id -> product
const suppliers = new Map();  // id -> supplier (creation order)
const warehouses = new Map(); // id -> warehouse
const orders = new Map();     // id -> order (creation order)
const movements = [];         // oldest first
const stock = new Map();      // `${productId}|${warehouseId}` -> quantity

const ROLES = ['admin', 'manager', 'buyer', 'clerk'];
const ORDER_STATUSES = ['draft', 'submitted', 'partially_received', 'received', 'cancelled'];
const REASONS = ['damaged', 'lost', 'found', 'returned', 'count_correction'];
const MOVEMENT_TYPES = ['receipt', 'adjustment'];

const SKU_RE = /^[A-Z0-9][A-Z0-9-]{2,31}$/;
const CODE_RE = /^[A-Z0-9]{2,10}$/;
const USERNAME_RE = /^[a-z0-9_]{3,32}$/;
const EMAIL_RE = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function hashPassword(pw, salt) {
  return crypto.scryptSync(pw, salt, 32, { N: 1024, r: 8, p: 1 }).toString('hex');
}
function createUserRecord(username, password, role) {
  const salt = crypto.randomBytes(16).toString('hex');
  const u = { id: newId(), username, role, active: true, created_at: now(), salt, hash: hashPassword(password, salt) };
  users.set(u.id, u);
  usersByName.set(username, u.id);
  return u;
}
createUserRecord(process.env.ADMIN_USERNAME || 'admin', process.env.ADMIN_PASSWORD || 'admin-password', 'admin');

const stockKey = (pid, wid) => pid + '|' + wid;
const getStock = (pid, wid) => stock.get(stockKey(pid, wid)) || 0;
function onHand(pid) {
  let n = 0;
  for (const w of warehouses.keys()) n += getStock(pid, w);
  return n;
}
function addStock(pid, wid, q) {
  const k = stockKey(pid, wid);
  const v = (stock.get(k) || 0) + q;
  if (v === 0) stock.delete(k); else stock.set(k, v);
}

const userView = (u) => ({ id: u.id, username: u.username, role: u.role, active: u.active, created_at: u.created_at });
const productView = (p) => ({
  id: p.id, sku: p.sku, name: p.name, unit: p.unit, reorder_level: p.reorder_level, active: p.active,
  on_hand: onHand(p.id), created_at: p.created_at,
});
const supplierView = (s) => ({ id: s.id, name: s.name, email: s.email, created_at: s.created_at });
const warehouseView = (w) => ({ id: w.id, code: w.code, name: w.name, created_at: w.created_at });
const orderView = (o) => ({
  id: o.id, supplier_id: o.supplier_id, warehouse_id: o.warehouse_id, status: o.status,
  lines: o.lines.map((l) => ({ product_id: l.product_id, quantity: l.quantity, unit_cost: l.unit_cost, received_quantity: l.received_quantity })),
  notes: o.notes, total_cost: o.lines.reduce((s, l) => s + l.quantity * l.unit_cost, 0),
  created_by: o.created_by, created_at: o.created_at, submitted_at: o.submitted_at,
  received_at: o.received_at, cancelled_at: o.cancelled_at,
});
const movementView = (m) => ({
  id: m.id, type: m.type, product_id: m.product_id, warehouse_id: m.warehouse_id, quantity: m.quantity,
  reason: m.reason, purchase_order_id: m.purchase_order_id, note: m.note, actor_id: m.actor_id, created_at: m.created_at,
});
function addMovement(fields) {
  const m = Object.assign({ id: newId(), created_at: now() }, fields);
  movements.push(m);
  addStock(m.product_id, m.warehouse_id, m.quantity);
  return m;
}

// ---------------------------------------------------------------- auth

function authenticate(req) {
  const h = req.headers['authorization'];
  if (!isStr(h)) throw unauthorized('missing bearer token');
  const m = /^Bearer +(\S+) *$/i.exec(h);
  if (!m) throw unauthorized('malformed authorization header');
  const uid = tokens.get(m[1]);
  const u = uid && users.get(uid);
  if (!u || !u.active) throw unauthorized('unknown or revoked token');
  return u;
}

// ---------------------------------------------------------------- users

function login(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.username)) fields.push('username');
  if (!isStr(body.password)) fields.push('password');
  if (fields.length) throw validation(fields);
  const uid = usersByName.get(body.username);
  const u = uid && users.get(uid);
  if (!u) throw unauthorized('invalid credentials');
  const h = hashPassword(body.password, u.salt);
  if (!crypto.timingSafeEqual(Buffer.from(h, 'hex'), Buffer.from(u.hash, 'hex'))) throw unauthorized('invalid credentials');
  if (!u.active) throw unauthorized('user is inactive');
  const token = crypto.randomBytes(32).toString('base64url');
  tokens.set(token, u.id);
  return [200, { token, token_type: 'bearer', user: userView(u) }];
}
function me(ctx) { return [200, userView(ctx.user)]; }
function listUsers() { return [200, { items: [...users.values()].map(userView) }]; }
function createUser(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.username) || !USERNAME_RE.test(body.username)) fields.push('username');
  if (!isStr(body.password) || ulen(body.password) < 8 || ulen(body.password) > 128) fields.push('password');
  if (!isStr(body.role) || !ROLES.includes(body.role)) fields.push('role');
  if (fields.length) throw validation(fields);
  if (usersByName.has(body.username)) throw conflict('username already taken');
  return [201, userView(createUserRecord(body.username, body.password, body.role))];
}
function updateUser(ctx) {
  const u = users.get(ctx.params.user_id);
  if (!u) throw notFound('user not found');
  const body = parseObject(ctx.raw);
  const fields = [];
  if (has(body, 'role') && (!isStr(body.role) || !ROLES.includes(body.role))) fields.push('role');
  if (has(body, 'active') && !isBool(body.active)) fields.push('active');
  if (fields.length) throw validation(fields);
  if (u.id === ctx.user.id) {
    if ((has(body, 'role') && body.role !== 'admin') || (has(body, 'active') && body.active === false)) {
      throw conflict('an admin may not demote or deactivate themselves');
    }
  }
  if (has(body, 'role')) u.role = body.role;
  if (has(body, 'active')) {
    if (u.active && !body.active) {
      for (const [t, id] of [...tokens]) if (id === u.id) tokens.delete(t);
    }
    u.active = body.active;
  }
  return [200, userView(u)];
}

// ---------------------------------------------------------------- products

function getProductOr404(id) {
  const p = products.get(id);
  if (!p) throw notFound('product not found');
  return p;
}
function validateProductFields(body, fields, creating) {
  if (creating) {
    if (!isStr(body.sku) || !SKU_RE.test(body.sku)) fields.push('sku');
    if (!validText(body.name, 120)) fields.push('name');
  } else if (has(body, 'name') && !validText(body.name, 120)) fields.push('name');
  if (has(body, 'unit') && !validText(body.unit, 16)) fields.push('unit');
  if (has(body, 'reorder_level') && !intIn(body.reorder_level, 0, 1000000)) fields.push('reorder_level');
  if (!creating && has(body, 'active') && !isBool(body.active)) fields.push('active');
}
function listProducts(ctx) {
  const q = ctx.query;
  const bad = [];
  const active = boolParam(q, 'active', bad);
  const low = boolParam(q, 'low_stock', bad);
  const pg = pageParams(q, bad);
  if (bad.length) throw validation(bad);
  const text = q.has('q') ? q.get('q').toLowerCase() : '';
  const all = [...products.values()]
    .filter((p) => !text || p.sku.toLowerCase().includes(text) || p.name.toLowerCase().includes(text))
    .filter((p) => active === undefined || p.active === active)
    .filter((p) => low === undefined || (onHand(p.id) < p.reorder_level) === low)
    .sort((a, b) => cmp(a.sku, b.sku))
    .map(productView);
  return [200, page(all, pg)];
}
function createProduct(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  validateProductFields(body, fields, true);
  if (fields.length) throw validation(fields);
  for (const p of products.values()) if (p.sku === body.sku) throw conflict('SKU already taken');
  const p = {
    id: newId(), sku: body.sku, name: body.name, unit: has(body, 'unit') ? body.unit : 'each',
    reorder_level: has(body, 'reorder_level') ? body.reorder_level : 0, active: true, created_at: now(),
  };
  products.set(p.id, p);
  return [201, productView(p)];
}
function getProduct(ctx) { return [200, productView(getProductOr404(ctx.params.product_id))]; }
function updateProduct(ctx) {
  const p = getProductOr404(ctx.params.product_id);
  const body = parseObject(ctx.raw);
  const fields = [];
  validateProductFields(body, fields, false);
  if (fields.length) throw validation(fields);
  for (const k of ['name', 'unit', 'reorder_level', 'active']) if (has(body, k)) p[k] = body[k];
  return [200, productView(p)];
}
function deleteProduct(ctx) {
  const p = getProductOr404(ctx.params.product_id);
  if (movements.some((m) => m.product_id === p.id)) throw conflict('product has stock movements');
  for (const o of orders.values()) {
    if (o.lines.some((l) => l.product_id === p.id)) throw conflict('product is named on a purchase order');
  }
  products.delete(p.id);
  return [204];
}
function productStock(ctx) {
  const p = getProductOr404(ctx.params.product_id);
  const list = [];
  for (const w of warehouses.values()) {
    const n = getStock(p.id, w.id);
    if (n !== 0) list.push({ warehouse_id: w.id, code: w.code, on_hand: n });
  }
  list.sort((a, b) => cmp(a.code, b.code));
  return [200, { product_id: p.id, on_hand: onHand(p.id), warehouses: list }];
}

// ---------------------------------------------------------------- suppliers

function getSupplierOr404(id) {
  const s = suppliers.get(id);
  if (!s) throw notFound('supplier not found');
  return s;
}
const validEmail = (v) => v === null || (isStr(v) && ulen(v) <= 254 && EMAIL_RE.test(v));
function supplierNameTaken(name, exceptId) {
  const n = name.toLowerCase();
  for (const s of suppliers.values()) if (s.id !== exceptId && s.name.toLowerCase() === n) return true;
  return false;
}
function listSuppliers() { return [200, { items: [...suppliers.values()].map(supplierView) }]; }
function createSupplier(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!validText(body.name, 120)) fields.push('name');
  if (has(body, 'email') && !validEmail(body.email)) fields.push('email');
  if (fields.length) throw validation(fields);
  if (supplierNameTaken(body.name, null)) throw conflict('supplier name already taken');
  const s = { id: newId(), name: body.name, email: has(body, 'email') ? body.email : null, created_at: now() };
  suppliers.set(s.id, s);
  return [201, supplierView(s)];
}
function getSupplier(ctx) { return [200, supplierView(getSupplierOr404(ctx.params.supplier_id))]; }
function updateSupplier(ctx) {
  const s = getSupplierOr404(ctx.params.supplier_id);
  const body = parseObject(ctx.raw);
  const fields = [];
  if (has(body, 'name') && !validText(body.name, 120)) fields.push('name');
  if (has(body, 'email') && !validEmail(body.email)) fields.push('email');
  if (fields.length) throw validation(fields);
  if (has(body, 'name') && supplierNameTaken(body.name, s.id)) throw conflict('supplier name already taken');
  if (has(body, 'name')) s.name = body.name;
  if (has(body, 'email')) s.email = body.email;
  return [200, supplierView(s)];
}
function deleteSupplier(ctx) {
  const s = getSupplierOr404(ctx.params.supplier_id);
  for (const o of orders.values()) if (o.supplier_id === s.id) throw conflict('a purchase order names this supplier');
  suppliers.delete(s.id);
  return [204];
}

// ---------------------------------------------------------------- warehouses

function getWarehouseOr404(id) {
  const w = warehouses.get(id);
  if (!w) throw notFound('warehouse not found');
  return w;
}
function listWarehouses() {
  return [200, { items: [...warehouses.values()].sort((a, b) => cmp(a.code, b.code)).map(warehouseView) }];
}
function createWarehouse(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.code) || !CODE_RE.test(body.code)) fields.push('code');
  if (!validText(body.name, 120)) fields.push('name');
  if (fields.length) throw validation(fields);
  for (const w of warehouses.values()) if (w.code === body.code) throw conflict('warehouse code already taken');
  const w = { id: newId(), code: body.code, name: body.name, created_at: now() };
  warehouses.set(w.id, w);
  return [201, warehouseView(w)];
}
function getWarehouse(ctx) { return [200, warehouseView(getWarehouseOr404(ctx.params.warehouse_id))]; }
function updateWarehouse(ctx) {
  const w = getWarehouseOr404(ctx.params.warehouse_id);
  const body = parseObject(ctx.raw);
  if (has(body, 'name') && !validText(body.name, 120)) throw validation(['name']);
  if (has(body, 'name')) w.name = body.name;
  return [200, warehouseView(w)];
}
const OPEN = ['draft', 'submitted', 'partially_received'];
function deleteWarehouse(ctx) {
  const w = getWarehouseOr404(ctx.params.warehouse_id);
  for (const p of products.keys()) if (getStock(p, w.id) !== 0) throw conflict('warehouse holds stock');
  for (const o of orders.values()) {
    if (o.warehouse_id === w.id && OPEN.includes(o.status)) throw conflict('an open purchase order is destined for this warehouse');
  }
  warehouses.delete(w.id);
  return [204];
}
function warehouseStock(ctx) {
  const w = getWarehouseOr404(ctx.params.warehouse_id);
  const items = [];
  for (const p of products.values()) {
    const n = getStock(p.id, w.id);
    if (n !== 0) items.push({ product_id: p.id, sku: p.sku, on_hand: n });
  }
  items.sort((a, b) => cmp(a.sku, b.sku));
  return [200, { warehouse_id: w.id, items }];
}

// ---------------------------------------------------------------- purchase orders

function getOrderOr404(id) {
  const o = orders.get(id);
  if (!o) throw notFound('purchase order not found');
  return o;
}
function checkOwnership(ctx, o) {
  if (ctx.user.role === 'buyer' && o.created_by !== ctx.user.id) throw forbidden('buyers may act only on their own orders');
}
function validLines(v) {
  if (!Array.isArray(v) || v.length > 50) return false;
  const seen = new Set();
  for (const l of v) {
    if (!isObj(l)) return false;
    if (!isStr(l.product_id)) return false;
    const p = products.get(l.product_id);
    if (!p || !p.active) return false;
    if (seen.has(l.product_id)) return false;
    seen.add(l.product_id);
    if (!intIn(l.quantity, 1, 1000000)) return false;
    if (!intIn(l.unit_cost, 0, 100000000)) return false;
  }
  return true;
}
function validateOrderFields(body, fields, creating) {
  if (creating || has(body, 'supplier_id')) {
    if (!isStr(body.supplier_id) || !suppliers.has(body.supplier_id)) fields.push('supplier_id');
  }
  if (creating || has(body, 'warehouse_id')) {
    if (!isStr(body.warehouse_id) || !warehouses.has(body.warehouse_id)) fields.push('warehouse_id');
  }
  if (has(body, 'lines') && !validLines(body.lines)) fields.push('lines');
  if (has(body, 'notes') && (!isStr(body.notes) || ulen(body.notes) > 1000)) fields.push('notes');
}
const copyLines = (v) => v.map((l) => ({ product_id: l.product_id, quantity: l.quantity, unit_cost: l.unit_cost, received_quantity: 0 }));

function listOrders(ctx) {
  const q = ctx.query;
  const bad = [];
  let status;
  if (q.has('status')) {
    status = q.get('status');
    if (!ORDER_STATUSES.includes(status)) bad.push('status');
  }
  const pg = pageParams(q, bad);
  if (bad.length) throw validation(bad);
  const sup = q.has('supplier_id') ? q.get('supplier_id') : undefined;
  const wh = q.has('warehouse_id') ? q.get('warehouse_id') : undefined;
  const all = [];
  const list = [...orders.values()];
  for (let i = list.length - 1; i >= 0; i--) {
    const o = list[i];
    if (status !== undefined && o.status !== status) continue;
    if (sup !== undefined && o.supplier_id !== sup) continue;
    if (wh !== undefined && o.warehouse_id !== wh) continue;
    all.push(orderView(o));
  }
  return [200, page(all, pg)];
}
function createOrder(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  validateOrderFields(body, fields, true);
  if (fields.length) throw validation(fields);
  const o = {
    id: newId(), supplier_id: body.supplier_id, warehouse_id: body.warehouse_id, status: 'draft',
    lines: has(body, 'lines') ? copyLines(body.lines) : [], notes: has(body, 'notes') ? body.notes : '',
    created_by: ctx.user.id, created_at: now(), submitted_at: null, received_at: null, cancelled_at: null,
  };
  orders.set(o.id, o);
  return [201, orderView(o)];
}
function getOrder(ctx) { return [200, orderView(getOrderOr404(ctx.params.order_id))]; }
function updateOrder(ctx) {
  const o = getOrderOr404(ctx.params.order_id);
  checkOwnership(ctx, o);
  const body = parseObject(ctx.raw);
  const fields = [];
  validateOrderFields(body, fields, false);
  if (fields.length) throw validation(fields);
  if (o.status !== 'draft') throw invalidState('only a draft can be changed');
  if (has(body, 'supplier_id')) o.supplier_id = body.supplier_id;
  if (has(body, 'warehouse_id')) o.warehouse_id = body.warehouse_id;
  if (has(body, 'lines')) o.lines = copyLines(body.lines);
  if (has(body, 'notes')) o.notes = body.notes;
  return [200, orderView(o)];
}
function deleteOrder(ctx) {
  const o = getOrderOr404(ctx.params.order_id);
  checkOwnership(ctx, o);
  if (o.status !== 'draft') throw invalidState('only a draft can be deleted');
  orders.delete(o.id);
  return [204];
}
function submitOrder(ctx) {
  const o = getOrderOr404(ctx.params.order_id);
  checkOwnership(ctx, o);
  if (o.status !== 'draft') throw invalidState('only a draft can be submitted');
  if (o.lines.length === 0) throw invalidState('an order without lines cannot be submitted');
  o.status = 'submitted';
  o.submitted_at = now();
  return [200, orderView(o)];
}
function cancelOrder(ctx) {
  const o = getOrderOr404(ctx.params.order_id);
  checkOwnership(ctx, o);
  if (o.status !== 'draft' && o.status !== 'submitted') throw invalidState('only a draft or submitted order can be cancelled');
  o.status = 'cancelled';
  o.cancelled_at = now();
  return [200, orderView(o)];
}
function receiveOrder(ctx) {
  const o = getOrderOr404(ctx.params.order_id);
  const body = parseObject(ctx.raw, true);
  let delivery = null;
  if (has(body, 'lines')) {
    const v = body.lines;
    let ok = Array.isArray(v) && v.length >= 1;
    if (ok) {
      const seen = new Set();
      for (const l of v) {
        if (!isObj(l) || !isStr(l.product_id) || seen.has(l.product_id) ||
            !o.lines.some((x) => x.product_id === l.product_id) || !isInt(l.quantity) || l.quantity < 1) {
          ok = false;
          break;
        }
        seen.add(l.product_id);
      }
    }
    if (!ok) throw validation(['lines']);
    delivery = v.map((l) => ({ line: o.lines.find((x) => x.product_id === l.product_id), quantity: l.quantity }));
  }
  if (o.status !== 'submitted' && o.status !== 'partially_received') throw invalidState('this order cannot receive goods');
  if (delivery === null) {
    delivery = o.lines.filter((l) => l.quantity > l.received_quantity).map((l) => ({ line: l, quantity: l.quantity - l.received_quantity }));
  }
  for (const d of delivery) {
    if (d.quantity > d.line.quantity - d.line.received_quantity) {
      throw overReceipt(`product ${d.line.product_id}: only ${d.line.quantity - d.line.received_quantity} remain`);
    }
  }
  for (const d of delivery) {
    d.line.received_quantity += d.quantity;
    addMovement({
      type: 'receipt', product_id: d.line.product_id, warehouse_id: o.warehouse_id, quantity: d.quantity,
      reason: null, purchase_order_id: o.id, note: '', actor_id: ctx.user.id,
    });
  }
  if (o.lines.every((l) => l.received_quantity >= l.quantity)) {
    o.status = 'received';
    o.received_at = now();
  } else {
    o.status = 'partially_received';
  }
  return [200, orderView(o)];
}

// ---------------------------------------------------------------- adjustments and movements

function createAdjustment(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.warehouse_id) || !warehouses.has(body.warehouse_id)) fields.push('warehouse_id');
  if (!isStr(body.product_id) || !products.has(body.product_id)) fields.push('product_id');
  const q = body.quantity;
  const qOk = intIn(q, -1000000, 1000000) && q !== 0;
  if (!qOk) fields.push('quantity');
  const reason = body.reason;
  const rOk = isStr(reason) && REASONS.includes(reason);
  if (!rOk) fields.push('reason');
  if (qOk && rOk) {
    if ((reason === 'damaged' || reason === 'lost') && q > 0) fields.push('quantity');
    if ((reason === 'found' || reason === 'returned') && q < 0) fields.push('quantity');
  }
  if (has(body, 'note') && (!isStr(body.note) || ulen(body.note) > 500)) fields.push('note');
  if (fields.length) throw validation(fields);
  if (getStock(body.product_id, body.warehouse_id) + q < 0) throw insufficientStock('the adjustment would make stock negative');
  const m = addMovement({
    type: 'adjustment', product_id: body.product_id, warehouse_id: body.warehouse_id, quantity: q,
    reason, purchase_order_id: null, note: has(body, 'note') ? body.note : '', actor_id: ctx.user.id,
  });
  return [201, movementView(m)];
}
function listMovements(ctx) {
  const q = ctx.query;
  const bad = [];
  let type;
  if (q.has('type')) {
    type = q.get('type');
    if (!MOVEMENT_TYPES.includes(type)) bad.push('type');
  }
  const pg = pageParams(q, bad);
  if (bad.length) throw validation(bad);
  const pid = q.has('product_id') ? q.get('product_id') : undefined;
  const wid = q.has('warehouse_id') ? q.get('warehouse_id') : undefined;
  const all = [];
  for (let i = movements.length - 1; i >= 0; i--) {
    const m = movements[i];
    if (type !== undefined && m.type !== type) continue;
    if (pid !== undefined && m.product_id !== pid) continue;
    if (wid !== undefined && m.warehouse_id !== wid) continue;
    all.push(movementView(m));
  }
  return [200, page(all, pg)];
}

function health() { return [200, { status: 'ok' }]; }

// ---------------------------------------------------------------- routing

const ALL = ['admin', 'manager', 'buyer', 'clerk'];
const ADMIN = ['admin'];
const CATALOG = ['admin', 'manager'];
const BUYING = ['admin', 'manager', 'buyer'];
const STOCKING = ['admin', 'manager', 'clerk'];

// roles: null = no authentication; otherwise the roles that may ever perform the action
const routes = [
  ['GET', '/health', health, null],
  ['POST', '/auth/token', login, null],
  ['GET', '/me', me, ALL],
  ['GET', '/users', listUsers, ADMIN],
  ['POST', '/users', createUser, ADMIN],
  ['PATCH', '/users/:user_id', updateUser, ADMIN],
  ['GET', '/products', listProducts, ALL],
  ['POST', '/products', createProduct, CATALOG],
  ['GET', '/products/:product_id', getProduct, ALL],
  ['PATCH', '/products/:product_id', updateProduct, CATALOG],
  ['DELETE', '/products/:product_id', deleteProduct, CATALOG],
  ['GET', '/products/:product_id/stock', productStock, ALL],
  ['GET', '/suppliers', listSuppliers, ALL],
  ['POST', '/suppliers', createSupplier, CATALOG],
  ['GET', '/suppliers/:supplier_id', getSupplier, ALL],
  ['PATCH', '/suppliers/:supplier_id', updateSupplier, CATALOG],
  ['DELETE', '/suppliers/:supplier_id', deleteSupplier, CATALOG],
  ['GET', '/warehouses', listWarehouses, ALL],
  ['POST', '/warehouses', createWarehouse, CATALOG],
  ['GET', '/warehouses/:warehouse_id', getWarehouse, ALL],
  ['PATCH', '/warehouses/:warehouse_id', updateWarehouse, CATALOG],
  ['DELETE', '/warehouses/:warehouse_id', deleteWarehouse, CATALOG],
  ['GET', '/warehouses/:warehouse_id/stock', warehouseStock, ALL],
  ['GET', '/purchase-orders', listOrders, ALL],
  ['POST', '/purchase-orders', createOrder, BUYING],
  ['GET', '/purchase-orders/:order_id', getOrder, ALL],
  ['PATCH', '/purchase-orders/:order_id', updateOrder, BUYING],
  ['DELETE', '/purchase-orders/:order_id', deleteOrder, BUYING],
  ['POST', '/purchase-orders/:order_id/submit', submitOrder, BUYING],
  ['POST', '/purchase-orders/:order_id/cancel', cancelOrder, BUYING],
  ['POST', '/purchase-orders/:order_id/receive', receiveOrder, STOCKING],
  ['POST', '/adjustments', createAdjustment, STOCKING],
  ['GET', '/movements', listMovements, ALL],
].map(([method, pattern, handler, roles]) => ({ method, parts: pattern.split('/').slice(1), handler, roles }));

function matchRoute(segs, parts) {
  if (segs.length !== parts.length) return null;
  const params = {};
  for (let i = 0; i < parts.length; i++) {
    if (parts[i].startsWith(':')) {
      if (segs[i] === '') return null;
      params[parts[i].slice(1)] = segs[i];
    } else if (parts[i] !== segs[i]) return null;
  }
  return params;
}

function handle(req, res, raw) {
  try {
    const url = new URL(req.url, 'http://localhost');
    let path = url.pathname;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    let segs;
    try {
      segs = path.split('/').slice(1).map(decodeURIComponent);
    } catch (e) {
      throw notFound('not found');
    }
    let pathMatched = false;
    for (const r of routes) {
      const params = matchRoute(segs, r.parts);
      if (!params) continue;
      pathMatched = true;
      if (r.method !== req.method) continue;
      const ctx = { req, raw, query: url.searchParams, params };
      if (r.roles) {
        ctx.user = authenticate(req);
        if (!r.roles.includes(ctx.user.role)) throw forbidden();
      }
      const [status, body] = r.handler(ctx);
      send(res, status, body);
      return;
    }
    if (pathMatched) throw new ApiError(405, 'method_not_allowed', 'method not allowed');
    throw notFound('no such route');
  } catch (err) {
    if (err instanceof ApiError) return sendError(res, err);
    console.error(err);
    send(res, 500, { error: 'internal_error', message: 'internal server error' });
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  req.on('error', () => { try { send(res, 400, { error: 'bad_request', message: 'bad request' }); } catch (e) { /* ignore */ } });
});
server.keepAliveTimeout = 65000;
const port = parseInt(process.env.PORT || '8000', 10);
server.listen(port, '0.0.0.0', () => console.log(`inventory listening on 0.0.0.0:${port}`));
