'use strict';
// Feature flags — environments, segments, rollouts, evaluation.
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
const unauthorized = (m) => new ApiError(401, 'unauthorized', m || 'missing or invalid API key');
const forbidden = (m) => new ApiError(403, 'forbidden', m || 'your key\'s role does not allow this request');
const notFound = (m) => new ApiError(404, 'not_found', m || 'not found');
const conflict = (m) => new ApiError(409, 'conflict', m || 'conflict');
const validation = (fields, m) => {
  const uniq = [];
  for (const f of fields) if (!uniq.includes(f)) uniq.push(f);
  return new ApiError(422, 'validation_error', m || ('invalid: ' + (uniq.join(', ') || 'body')), uniq);
};

const now = () => new Date().toISOString();
const ulen = (s) => { let n = 0; for (const _ of s) n++; return n; };
const isStr = (v) => typeof v === 'string';
const isBool = (v) => typeof v === 'boolean';
const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const nonBlank = (s) => /\S/u.test(s);
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
function parseObject(raw) {
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
function pageParams(q) {
  const bad = [];
  const limit = parseIntParam(q, 'limit', 20, 1, 100, bad);
  const offset = parseIntParam(q, 'offset', 0, 0, undefined, bad);
  if (bad.length) throw validation(bad);
  return { limit, offset };
}
const page = (all, p) => ({ items: all.slice(p.offset, p.offset + p.limit), total: all.length, limit: p.limit, offset: p.offset });

// ---------------------------------------------------------------- state

const BOOTSTRAP_SECRET = process.env.ADMIN_API_KEY || '';
const BOOTSTRAP = { id: 'bootstrap', name: 'bootstrap', role: 'admin', environment: null };

const apiKeys = new Map();    // id -> {id, name, role, environment, created_at, secret}
const secrets = new Map();    // secret -> key id
const environments = new Map(); // key -> {key, name, created_at} (creation order)
const flags = new Map();      // key -> {key, name, description, created_at, updated_at, configs: Map env -> cfg}
const segments = new Map();   // key -> {key, name, conditions, created_at, updated_at}
const audit = [];             // oldest first
let auditSeq = 0;
let keySeq = 0;

{
  const ts = now();
  for (const [key, name] of [['development', 'Development'], ['staging', 'Staging'], ['production', 'Production']]) {
    environments.set(key, { key, name, created_at: ts });
  }
}

const newConfig = () => ({ enabled: false, rollout_percentage: 0, rules: [], served_true: 0, served_false: 0 });
const keyIdentity = (k) => ({ id: k.id, name: k.name, role: k.role, environment: k.environment });
const keyView = (k) => ({ id: k.id, name: k.name, role: k.role, environment: k.environment, created_at: k.created_at });
const envView = (e) => ({ key: e.key, name: e.name, created_at: e.created_at });
const cfgBody = (c) => ({ enabled: c.enabled, rollout_percentage: c.rollout_percentage, rules: c.rules.map((r) => ({ segment_key: r.segment_key, value: r.value })) });
function flagView(f) {
  const envs = {};
  for (const ek of environments.keys()) {
    const c = f.configs.get(ek);
    if (c) envs[ek] = cfgBody(c);
  }
  return { key: f.key, name: f.name, description: f.description, created_at: f.created_at, updated_at: f.updated_at, environments: envs };
}
const configView = (f, ek, c) => Object.assign({ flag_key: f.key, environment: ek }, cfgBody(c), { served_true: c.served_true, served_false: c.served_false });
const segmentView = (s) => ({
  key: s.key, name: s.name,
  conditions: s.conditions.map((c) => ({ attribute: c.attribute, operator: c.operator, values: c.values.slice() })),
  created_at: s.created_at, updated_at: s.updated_at,
});

function addAudit(action, actor, flagKey, env) {
  audit.push({ id: 'aud_' + (++auditSeq), action, actor, flag_key: flagKey, environment: env, created_at: now() });
}

// ---------------------------------------------------------------- validation

const ENV_KEY_RE = /^[a-z][a-z0-9-]{1,31}$/;
const FLAG_KEY_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const ATTR_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const ROLES = ['admin', 'editor', 'viewer', 'sdk'];
const STRING_OPS = ['in', 'not_in', 'starts_with', 'ends_with'];
const NUM_OPS = ['gt', 'lt'];

const validName = (v, max) => isStr(v) && nonBlank(v) && ulen(v) <= max;

function validCondition(c) {
  if (!isObj(c)) return false;
  if (!isStr(c.attribute) || !ATTR_RE.test(c.attribute)) return false;
  if (!isStr(c.operator)) return false;
  const v = c.values;
  if (!Array.isArray(v)) return false;
  if (STRING_OPS.includes(c.operator)) return v.length >= 1 && v.length <= 50 && v.every(isStr);
  if (NUM_OPS.includes(c.operator)) return v.length === 1 && isNum(v[0]);
  return false;
}
function validConditions(v) {
  return Array.isArray(v) && v.length >= 1 && v.length <= 20 && v.every(validCondition);
}
const copyConditions = (v) => v.map((c) => ({ attribute: c.attribute, operator: c.operator, values: c.values.slice() }));

// Validates an evaluation context; pushes invalid field names.
function validateContext(body, fields) {
  const uid = body.user_id;
  if (!isStr(uid) || ulen(uid) < 1 || ulen(uid) > 256) fields.push('user_id');
  let attrs = {};
  if (has(body, 'attributes')) {
    const a = body.attributes;
    if (!isObj(a) || !Object.values(a).every((x) => isStr(x) || isBool(x) || isNum(x))) fields.push('attributes');
    else attrs = a;
  }
  return { user_id: uid, attributes: attrs };
}

// ---------------------------------------------------------------- evaluation

function conditionHolds(cond, ctx) {
  let val;
  if (cond.attribute === 'user_id') val = ctx.user_id;
  else {
    if (!has(ctx.attributes, cond.attribute)) return false;
    val = ctx.attributes[cond.attribute];
  }
  switch (cond.operator) {
    case 'in': return isStr(val) && cond.values.includes(val);
    case 'not_in': return isStr(val) && !cond.values.includes(val);
    case 'starts_with': return isStr(val) && cond.values.some((p) => val.startsWith(p));
    case 'ends_with': return isStr(val) && cond.values.some((p) => val.endsWith(p));
    case 'gt': return isNum(val) && val > cond.values[0];
    case 'lt': return isNum(val) && val < cond.values[0];
    default: return false;
  }
}
function segmentMatches(seg, ctx) {
  return seg.conditions.every((c) => conditionHolds(c, ctx));
}
function bucketOf(flagKey, userId) {
  const h = crypto.createHash('sha256').update(Buffer.from(flagKey + '/' + userId, 'utf8')).digest('hex');
  return parseInt(h.slice(0, 8), 16) % 100;
}
function evaluate(f, cfg, ctx) {
  let r;
  if (!cfg.enabled) r = { flag_key: f.key, value: false, reason: 'disabled', bucket: null, segment_key: null };
  else {
    for (const rule of cfg.rules) {
      const seg = segments.get(rule.segment_key);
      if (seg && segmentMatches(seg, ctx)) {
        r = { flag_key: f.key, value: rule.value, reason: 'rule', bucket: null, segment_key: rule.segment_key };
        break;
      }
    }
    if (!r) {
      const b = bucketOf(f.key, ctx.user_id);
      r = { flag_key: f.key, value: b < cfg.rollout_percentage, reason: 'rollout', bucket: b, segment_key: null };
    }
  }
  return r;
}
function count(cfg, value) {
  if (value) cfg.served_true++; else cfg.served_false++;
}

// ---------------------------------------------------------------- handlers

function health() { return [200, { status: 'ok' }]; }
function me(ctx) { return [200, keyIdentity(ctx.key)]; }

function listKeys() {
  return [200, { items: [...apiKeys.values()].map(keyView) }];
}
function createKey(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!validName(body.name, 60)) fields.push('name');
  const role = body.role;
  const roleOk = isStr(role) && ROLES.includes(role);
  if (!roleOk) fields.push('role');
  const env = has(body, 'environment') ? body.environment : null;
  let envOk;
  if (env === null) envOk = !(roleOk && role === 'sdk');
  else if (!isStr(env) || !environments.has(env)) envOk = false;
  else envOk = !roleOk || role === 'sdk';
  if (!envOk) fields.push('environment');
  if (fields.length) throw validation(fields);
  let secret;
  do { secret = 'ffk_' + crypto.randomBytes(24).toString('base64url'); } while (secrets.has(secret) || secret === BOOTSTRAP_SECRET);
  const k = { id: 'key_' + (++keySeq) + '_' + crypto.randomBytes(4).toString('hex'), name: body.name, role, environment: env, created_at: now(), secret };
  apiKeys.set(k.id, k);
  secrets.set(secret, k.id);
  return [201, Object.assign(keyIdentity(k), { secret, created_at: k.created_at })];
}
function revokeKeyRecord(k) {
  apiKeys.delete(k.id);
  secrets.delete(k.secret);
}
function deleteKey(ctx) {
  const k = apiKeys.get(ctx.params.key_id);
  if (!k) throw notFound('API key not found');
  revokeKeyRecord(k);
  return [204];
}

function listEnvironments() {
  return [200, { items: [...environments.values()].map(envView) }];
}
function createEnvironment(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.key) || !ENV_KEY_RE.test(body.key)) fields.push('key');
  let name = isStr(body.key) ? body.key : '';
  if (has(body, 'name')) {
    if (!validName(body.name, 60)) fields.push('name'); else name = body.name;
  }
  if (fields.length) throw validation(fields);
  if (environments.has(body.key)) throw conflict('environment key already taken');
  const e = { key: body.key, name, created_at: now() };
  environments.set(e.key, e);
  for (const f of flags.values()) f.configs.set(e.key, newConfig());
  return [201, envView(e)];
}
function deleteEnvironment(ctx) {
  const ek = ctx.params.env_key;
  if (!environments.has(ek)) throw notFound('environment not found');
  environments.delete(ek);
  for (const f of flags.values()) f.configs.delete(ek);
  for (const k of [...apiKeys.values()]) if (k.role === 'sdk' && k.environment === ek) revokeKeyRecord(k);
  return [204];
}

function getFlagOr404(key) {
  const f = flags.get(key);
  if (!f) throw notFound('flag not found');
  return f;
}
function getEnvOr404(key) {
  const e = environments.get(key);
  if (!e) throw notFound('environment not found');
  return e;
}

function listFlags(ctx) {
  const q = ctx.query;
  const pg = pageParams(q);
  const prefix = q.has('prefix') ? q.get('prefix') : '';
  const all = [...flags.values()].filter((f) => f.key.startsWith(prefix)).sort((a, b) => cmp(a.key, b.key)).map(flagView);
  return [200, page(all, pg)];
}
function createFlag(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.key) || !FLAG_KEY_RE.test(body.key)) fields.push('key');
  let name = isStr(body.key) ? body.key : '';
  if (has(body, 'name')) {
    if (!validName(body.name, 100)) fields.push('name'); else name = body.name;
  }
  let description = '';
  if (has(body, 'description')) {
    if (!isStr(body.description) || ulen(body.description) > 1000) fields.push('description'); else description = body.description;
  }
  if (fields.length) throw validation(fields);
  if (flags.has(body.key)) throw conflict('flag key already taken');
  const ts = now();
  const f = { key: body.key, name, description, created_at: ts, updated_at: ts, configs: new Map() };
  for (const ek of environments.keys()) f.configs.set(ek, newConfig());
  flags.set(f.key, f);
  addAudit('flag_created', ctx.key.id, f.key, null);
  return [201, flagView(f)];
}
function getFlag(ctx) {
  return [200, flagView(getFlagOr404(ctx.params.flag_key))];
}
function updateFlag(ctx) {
  const f = getFlagOr404(ctx.params.flag_key);
  const body = parseObject(ctx.raw);
  const fields = [];
  if (has(body, 'name') && !validName(body.name, 100)) fields.push('name');
  if (has(body, 'description') && (!isStr(body.description) || ulen(body.description) > 1000)) fields.push('description');
  if (fields.length) throw validation(fields);
  if (has(body, 'name')) f.name = body.name;
  if (has(body, 'description')) f.description = body.description;
  f.updated_at = now();
  addAudit('flag_updated', ctx.key.id, f.key, null);
  return [200, flagView(f)];
}
function deleteFlag(ctx) {
  const f = getFlagOr404(ctx.params.flag_key);
  flags.delete(f.key);
  addAudit('flag_deleted', ctx.key.id, f.key, null);
  return [204];
}
function getFlagConfig(ctx) {
  const f = getFlagOr404(ctx.params.flag_key);
  const e = getEnvOr404(ctx.params.env_key);
  return [200, configView(f, e.key, f.configs.get(e.key))];
}
function updateFlagConfig(ctx) {
  const f = getFlagOr404(ctx.params.flag_key);
  const e = getEnvOr404(ctx.params.env_key);
  const cfg = f.configs.get(e.key);
  const body = parseObject(ctx.raw);
  const fields = [];
  if (has(body, 'enabled') && !isBool(body.enabled)) fields.push('enabled');
  if (has(body, 'rollout_percentage')) {
    const r = body.rollout_percentage;
    if (!isNum(r) || !Number.isInteger(r) || r < 0 || r > 100) fields.push('rollout_percentage');
  }
  if (has(body, 'rules')) {
    const rules = body.rules;
    const ok = Array.isArray(rules) && rules.length <= 20 && rules.every((r) =>
      isObj(r) && isStr(r.segment_key) && segments.has(r.segment_key) && isBool(r.value));
    if (!ok) fields.push('rules');
  }
  if (fields.length) throw validation(fields);
  if (has(body, 'enabled')) cfg.enabled = body.enabled;
  if (has(body, 'rollout_percentage')) cfg.rollout_percentage = body.rollout_percentage;
  if (has(body, 'rules')) cfg.rules = body.rules.map((r) => ({ segment_key: r.segment_key, value: r.value }));
  f.updated_at = now();
  addAudit('flag_config_updated', ctx.key.id, f.key, e.key);
  return [200, configView(f, e.key, cfg)];
}

function listSegments(ctx) {
  const prefix = ctx.query.has('prefix') ? ctx.query.get('prefix') : '';
  const items = [...segments.values()].filter((s) => s.key.startsWith(prefix)).sort((a, b) => cmp(a.key, b.key)).map(segmentView);
  return [200, { items }];
}
function getSegmentOr404(key) {
  const s = segments.get(key);
  if (!s) throw notFound('segment not found');
  return s;
}
function createSegment(ctx) {
  const body = parseObject(ctx.raw);
  const fields = [];
  if (!isStr(body.key) || !FLAG_KEY_RE.test(body.key)) fields.push('key');
  let name = isStr(body.key) ? body.key : '';
  if (has(body, 'name')) {
    if (!validName(body.name, 100)) fields.push('name'); else name = body.name;
  }
  if (!validConditions(body.conditions)) fields.push('conditions');
  if (fields.length) throw validation(fields);
  if (segments.has(body.key)) throw conflict('segment key already taken');
  const ts = now();
  const s = { key: body.key, name, conditions: copyConditions(body.conditions), created_at: ts, updated_at: ts };
  segments.set(s.key, s);
  return [201, segmentView(s)];
}
function getSegment(ctx) {
  return [200, segmentView(getSegmentOr404(ctx.params.segment_key))];
}
function updateSegment(ctx) {
  const s = getSegmentOr404(ctx.params.segment_key);
  const body = parseObject(ctx.raw);
  const fields = [];
  if (has(body, 'name') && !validName(body.name, 100)) fields.push('name');
  if (has(body, 'conditions') && !validConditions(body.conditions)) fields.push('conditions');
  if (fields.length) throw validation(fields);
  if (has(body, 'name')) s.name = body.name;
  if (has(body, 'conditions')) s.conditions = copyConditions(body.conditions);
  s.updated_at = now();
  return [200, segmentView(s)];
}
function deleteSegment(ctx) {
  const s = getSegmentOr404(ctx.params.segment_key);
  for (const f of flags.values()) {
    for (const cfg of f.configs.values()) {
      if (cfg.rules.some((r) => r.segment_key === s.key)) throw conflict('segment is used by a flag rule');
    }
  }
  segments.delete(s.key);
  return [204];
}

function evaluateFlag(ctx) {
  const e = getEnvOr404(ctx.params.env_key);
  const f = getFlagOr404(ctx.params.flag_key);
  const body = parseObject(ctx.raw);
  const fields = [];
  const c = validateContext(body, fields);
  if (fields.length) throw validation(fields);
  const cfg = f.configs.get(e.key);
  const r = evaluate(f, cfg, c);
  count(cfg, r.value);
  return [200, r];
}
function evaluateFlags(ctx) {
  const e = getEnvOr404(ctx.params.env_key);
  const body = parseObject(ctx.raw);
  const fields = [];
  const c = validateContext(body, fields);
  let keys = null;
  if (has(body, 'flags')) {
    const fl = body.flags;
    if (!Array.isArray(fl) || fl.length > 100 || !fl.every(isStr)) fields.push('flags');
    else keys = [...new Set(fl)];
  }
  if (fields.length) throw validation(fields);
  if (keys === null) keys = [...flags.keys()];
  keys.sort(cmp);
  const results = [];
  const toCount = [];
  for (const k of keys) {
    const f = flags.get(k);
    if (!f) {
      results.push({ flag_key: k, value: false, reason: 'unknown_flag', bucket: null, segment_key: null });
      continue;
    }
    const cfg = f.configs.get(e.key);
    const r = evaluate(f, cfg, c);
    results.push(r);
    toCount.push([cfg, r.value]);
  }
  for (const [cfg, v] of toCount) count(cfg, v);
  return [200, { environment: e.key, user_id: c.user_id, results }];
}

function listAudit(ctx) {
  const q = ctx.query;
  const pg = pageParams(q);
  const fk = q.has('flag_key') ? q.get('flag_key') : null;
  const all = [];
  for (let i = audit.length - 1; i >= 0; i--) {
    const a = audit[i];
    if (fk !== null && a.flag_key !== fk) continue;
    all.push({ id: a.id, action: a.action, actor: a.actor, flag_key: a.flag_key, environment: a.environment, created_at: a.created_at });
  }
  return [200, page(all, pg)];
}

// ---------------------------------------------------------------- routing and roles

const ADMIN = ['admin'];
const EDIT = ['admin', 'editor'];
const READ = ['admin', 'editor', 'viewer'];
const ANY = ['admin', 'editor', 'viewer', 'sdk'];

// roles: list of roles allowed; 'eval' means admin/editor/viewer anywhere, sdk in own env.
const routes = [
  ['GET', '/health', health, null],
  ['GET', '/me', me, ANY],
  ['GET', '/keys', listKeys, ADMIN],
  ['POST', '/keys', createKey, ADMIN],
  ['DELETE', '/keys/:key_id', deleteKey, ADMIN],
  ['GET', '/environments', listEnvironments, READ],
  ['POST', '/environments', createEnvironment, ADMIN],
  ['DELETE', '/environments/:env_key', deleteEnvironment, ADMIN],
  ['GET', '/flags', listFlags, READ],
  ['POST', '/flags', createFlag, EDIT],
  ['GET', '/flags/:flag_key', getFlag, READ],
  ['PATCH', '/flags/:flag_key', updateFlag, EDIT],
  ['DELETE', '/flags/:flag_key', deleteFlag, EDIT],
  ['GET', '/flags/:flag_key/environments/:env_key', getFlagConfig, READ],
  ['PATCH', '/flags/:flag_key/environments/:env_key', updateFlagConfig, EDIT],
  ['GET', '/segments', listSegments, READ],
  ['POST', '/segments', createSegment, EDIT],
  ['GET', '/segments/:segment_key', getSegment, READ],
  ['PATCH', '/segments/:segment_key', updateSegment, EDIT],
  ['DELETE', '/segments/:segment_key', deleteSegment, EDIT],
  ['POST', '/environments/:env_key/flags/:flag_key/evaluate', evaluateFlag, 'eval'],
  ['POST', '/environments/:env_key/evaluate', evaluateFlags, 'eval'],
  ['GET', '/audit', listAudit, READ],
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

function authenticate(req) {
  const h = req.headers['authorization'];
  if (!isStr(h)) throw unauthorized('missing Authorization header');
  const m = /^Bearer +(\S+) *$/i.exec(h);
  if (!m) throw unauthorized('malformed Authorization header');
  const secret = m[1];
  if (BOOTSTRAP_SECRET && secret === BOOTSTRAP_SECRET) return BOOTSTRAP;
  const id = secrets.get(secret);
  const k = id && apiKeys.get(id);
  if (!k) throw unauthorized('unknown or revoked API key');
  return k;
}

function authorize(key, roles, params) {
  if (roles === 'eval') {
    if (key.role === 'sdk') {
      if (key.environment !== params.env_key) throw forbidden('sdk keys may only evaluate in their own environment');
      return;
    }
    if (!READ.includes(key.role)) throw forbidden();
    return;
  }
  if (!roles.includes(key.role)) throw forbidden();
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
        ctx.key = authenticate(req);
        authorize(ctx.key, r.roles, params);
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
server.listen(port, '0.0.0.0', () => console.log(`feature-flags listening on 0.0.0.0:${port}`));
