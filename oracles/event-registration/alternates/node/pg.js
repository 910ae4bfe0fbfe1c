'use strict';
// A small PostgreSQL client over `net`, using only Node's standard library.
// Protocol 3.0: startup, authentication (trust, cleartext, MD5, SCRAM-SHA-256),
// the simple query protocol (for parameterless statements) and the extended
// query protocol (Parse/Bind/Describe/Execute/Sync) with bound text parameters,
// text-format results, ErrorResponse with SQLSTATE, and a small pool.

const net = require('net');
const crypto = require('crypto');

// Type OIDs converted from text; every other type stays a string.
const INT_OIDS = new Set([20, 21, 23, 26]); // int8, int2, int4, oid
const BOOL_OID = 16;

class PgError extends Error {
  constructor(fields) {
    super(fields.M || 'PostgreSQL error');
    this.name = 'PgError';
    this.code = fields.C;            // SQLSTATE, e.g. 23505
    this.severity = fields.S;
    this.detail = fields.D;
    this.constraint = fields.n;
    this.table = fields.t;
    this.column = fields.c;
  }
}

/** Parses postgresql://user:password@host:port/dbname (and DB_* fallbacks). */
function configFromEnv(env = process.env) {
  const cfg = {
    host: env.DB_HOST || 'localhost',
    port: Number(env.DB_PORT) || 5432,
    user: env.DB_USERNAME || env.DB_USER || env.PGUSER || 'postgres',
    password: env.DB_PASSWORD || env.PGPASSWORD || '',
    database: env.DB_NAME || env.PGDATABASE || '',
  };
  const url = env.DATABASE_URL;
  if (url) {
    const u = new URL(url);
    if (u.hostname) cfg.host = decodeURIComponent(u.hostname).replace(/^\[(.*)\]$/, '$1');
    if (u.port) cfg.port = Number(u.port);
    if (u.username) cfg.user = decodeURIComponent(u.username);
    if (u.password) cfg.password = decodeURIComponent(u.password);
    const db = decodeURIComponent(u.pathname.replace(/^\//, ''));
    if (db) cfg.database = db;
    // libpq-style ?host=/path/to/socket/dir selects a Unix socket.
    const qhost = u.searchParams.get('host');
    if (qhost) cfg.host = qhost;
  }
  if (!cfg.database) cfg.database = cfg.user;
  return cfg;
}

// ---------------------------------------------------------------- writing

function cstr(s) {
  return Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
}

function int16(n) {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
}

function int32(n) {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

/** A message: one type byte (or none for the startup message) + length + body. */
function msg(type, ...parts) {
  const body = Buffer.concat(parts);
  const head = type ? Buffer.from(type, 'ascii') : Buffer.alloc(0);
  return Buffer.concat([head, int32(body.length + 4), body]);
}

function encodeParam(v) {
  if (v === null || v === undefined) return int32(-1);
  let s;
  if (typeof v === 'boolean') s = v ? 't' : 'f';
  else if (v instanceof Date) s = v.toISOString();
  else s = String(v);
  const b = Buffer.from(s, 'utf8');
  return Buffer.concat([int32(b.length), b]);
}

// ---------------------------------------------------------------- SCRAM

function hmac(key, data) {
  return crypto.createHmac('sha256', key).update(data).digest();
}

function parseScramAttrs(s) {
  const out = {};
  for (const part of s.split(',')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i)] = part.slice(i + 1);
  }
  return out;
}

// ---------------------------------------------------------------- connection

class Connection {
  constructor(cfg) {
    this.cfg = cfg;
    this.socket = null;
    this.buf = Buffer.alloc(0);
    this.queue = [];        // pending operations, answered in FIFO order
    this.closed = false;
    this.ready = false;
    this.params = {};
    this._startup = null;   // {resolve, reject} while authenticating
    this._scram = null;
    this.onClose = null;
  }

  connect(timeoutMs = 5000) {
    return new Promise((resolve, reject) => {
      const cfg = this.cfg;
      const sock = cfg.host.startsWith('/')
        ? net.createConnection({ path: `${cfg.host}/.s.PGSQL.${cfg.port}` })
        : net.createConnection({ host: cfg.host, port: cfg.port });
      this.socket = sock;
      this._startup = { resolve, reject };
      sock.setNoDelay(true);
      const timer = setTimeout(() => {
        this._fail(new Error('timed out connecting to PostgreSQL'));
      }, timeoutMs);
      sock.once('connect', () => {
        const params = [
          cstr('user'), cstr(cfg.user),
          cstr('database'), cstr(cfg.database),
          cstr('client_encoding'), cstr('UTF8'),
          cstr('TimeZone'), cstr('UTC'),
          cstr('application_name'), cstr('event-registration'),
          Buffer.from([0]),
        ];
        sock.write(msg(null, int32(196608), ...params));
      });
      sock.on('data', (d) => {
        this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
        try {
          this._drain();
        } catch (e) {
          this._fail(e);
        }
      });
      sock.on('error', (e) => this._fail(e));
      sock.on('close', () => this._fail(new Error('connection to PostgreSQL closed')));
      const origResolve = resolve;
      this._startup.resolve = (v) => { clearTimeout(timer); origResolve(v); };
      const origReject = reject;
      this._startup.reject = (e) => { clearTimeout(timer); origReject(e); };
    });
  }

  _fail(err) {
    if (this.closed) return;
    this.closed = true;
    this.ready = false;
    if (this.socket) this.socket.destroy();
    if (this._startup) {
      const s = this._startup;
      this._startup = null;
      s.reject(err);
    }
    const q = this.queue;
    this.queue = [];
    for (const op of q) op.reject(err);
    if (this.onClose) this.onClose(err);
  }

  _drain() {
    while (this.buf.length >= 5) {
      const type = String.fromCharCode(this.buf[0]);
      const len = this.buf.readInt32BE(1);
      if (this.buf.length < len + 1) return;
      const body = this.buf.subarray(5, len + 1);
      this.buf = this.buf.subarray(len + 1);
      this._handle(type, body);
    }
  }

  _handle(type, body) {
    switch (type) {
      case 'R': return this._auth(body);
      case 'S': { // ParameterStatus
        const [k, v] = body.toString('utf8').split('\0');
        this.params[k] = v;
        return;
      }
      case 'K': return; // BackendKeyData
      case 'Z': { // ReadyForQuery
        if (this._startup) {
          const s = this._startup;
          this._startup = null;
          this.ready = true;
          s.resolve(this);
          return;
        }
        const op = this.queue.shift();
        if (op) op.done();
        return;
      }
      case 'E': {
        const err = new PgError(parseFields(body));
        if (this._startup) {
          const s = this._startup;
          this._startup = null;
          s.reject(err);
          this._fail(err);
          return;
        }
        const op = this.queue[0];
        if (op) op.error = op.error || err;
        return;
      }
      case 'N': case 'A': return; // notices, notifications
      case '1': case '2': case '3': case 'n': case 's': return;
      case 'T': { // RowDescription
        const op = this.queue[0];
        if (op) op.fields = parseRowDescription(body);
        return;
      }
      case 'D': {
        const op = this.queue[0];
        if (op) op.rows.push(parseDataRow(body, op.fields));
        return;
      }
      case 'C': {
        const op = this.queue[0];
        if (op) {
          op.command = body.toString('utf8', 0, body.length - 1);
          const m = /(\d+)$/.exec(op.command);
          op.rowCount = m ? Number(m[1]) : 0;
        }
        return;
      }
      case 'I': return; // EmptyQueryResponse
      default: return;
    }
  }

  _auth(body) {
    const code = body.readInt32BE(0);
    const { user, password } = this.cfg;
    switch (code) {
      case 0: return; // AuthenticationOk
      case 3: // cleartext
        this.socket.write(msg('p', cstr(password)));
        return;
      case 5: { // MD5: md5(md5(password + user) + salt)
        const salt = body.subarray(4, 8);
        const inner = crypto.createHash('md5').update(password + user).digest('hex');
        const outer = crypto.createHash('md5')
          .update(Buffer.concat([Buffer.from(inner), salt])).digest('hex');
        this.socket.write(msg('p', cstr('md5' + outer)));
        return;
      }
      case 10: { // SASL: list of mechanisms
        const mechs = body.subarray(4).toString('utf8').split('\0').filter(Boolean);
        if (!mechs.includes('SCRAM-SHA-256')) {
          throw new Error(`unsupported SASL mechanisms: ${mechs.join(', ')}`);
        }
        const nonce = crypto.randomBytes(18).toString('base64');
        const first = `n=*,r=${nonce}`;
        this._scram = { nonce, clientFirstBare: first };
        const data = Buffer.from('n,,' + first, 'utf8');
        this.socket.write(msg('p', cstr('SCRAM-SHA-256'), int32(data.length), data));
        return;
      }
      case 11: { // SASL continue: server-first-message
        const serverFirst = body.subarray(4).toString('utf8');
        const a = parseScramAttrs(serverFirst);
        const sc = this._scram;
        if (!sc || !a.r || !a.r.startsWith(sc.nonce) || !a.s || !a.i) {
          throw new Error('invalid SCRAM server-first-message');
        }
        const salted = crypto.pbkdf2Sync(
          Buffer.from(password.normalize('NFKC'), 'utf8'),
          Buffer.from(a.s, 'base64'), Number(a.i), 32, 'sha256');
        const clientKey = hmac(salted, 'Client Key');
        const storedKey = crypto.createHash('sha256').update(clientKey).digest();
        const withoutProof = `c=biws,r=${a.r}`;
        const authMessage = `${sc.clientFirstBare},${serverFirst},${withoutProof}`;
        const signature = hmac(storedKey, authMessage);
        const proof = Buffer.alloc(clientKey.length);
        for (let i = 0; i < proof.length; i++) proof[i] = clientKey[i] ^ signature[i];
        sc.serverSignature = hmac(hmac(salted, 'Server Key'), authMessage).toString('base64');
        this.socket.write(msg('p', Buffer.from(`${withoutProof},p=${proof.toString('base64')}`)));
        return;
      }
      case 12: { // SASL final: verify the server's signature
        const a = parseScramAttrs(body.subarray(4).toString('utf8'));
        if (!this._scram || a.v !== this._scram.serverSignature) {
          throw new Error('SCRAM server signature does not match');
        }
        this._scram = null;
        return;
      }
      default:
        throw new Error(`unsupported PostgreSQL authentication method (code ${code})`);
    }
  }

  _enqueue(buffers) {
    return new Promise((resolve, reject) => {
      if (this.closed) {
        reject(new Error('connection to PostgreSQL closed'));
        return;
      }
      const op = {
        fields: null, rows: [], command: null, rowCount: 0, error: null,
        reject,
        done() {
          if (op.error) reject(op.error);
          else resolve({ rows: op.rows, rowCount: op.rowCount, command: op.command });
        },
      };
      this.queue.push(op);
      this.socket.write(Buffer.concat(buffers));
    });
  }

  /** Runs sql with bound parameters ($1, $2, …) through the extended protocol. */
  query(sql, params = []) {
    if (!params.length && /^\s*(BEGIN|COMMIT|ROLLBACK)\s*;?\s*$/i.test(sql)) {
      return this.simple(sql);
    }
    return this._enqueue([
      msg('P', cstr(''), cstr(sql), int16(0)),
      msg('B', cstr(''), cstr(''), int16(0), int16(params.length),
        ...params.map(encodeParam), int16(0)),
      msg('D', Buffer.from('P'), cstr('')),
      msg('E', cstr(''), int32(0)),
      msg('S'),
    ]);
  }

  /** Simple query protocol: no parameters, may hold several statements. */
  simple(sql) {
    return this._enqueue([msg('Q', cstr(sql))]);
  }

  close() {
    if (this.closed) return;
    try { this.socket.write(msg('X')); } catch (e) { /* already gone */ }
    this.closed = true;
    this.socket.end();
  }
}

function parseFields(body) {
  const out = {};
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const k = String.fromCharCode(body[i]);
    const end = body.indexOf(0, i + 1);
    out[k] = body.toString('utf8', i + 1, end);
    i = end + 1;
  }
  return out;
}

function parseRowDescription(body) {
  const n = body.readInt16BE(0);
  const fields = [];
  let i = 2;
  for (let f = 0; f < n; f++) {
    const end = body.indexOf(0, i);
    const name = body.toString('utf8', i, end);
    i = end + 1;
    const typeOid = body.readInt32BE(i + 6);
    i += 18;
    fields.push({ name, typeOid });
  }
  return fields;
}

function parseDataRow(body, fields) {
  const n = body.readInt16BE(0);
  const row = {};
  let i = 2;
  for (let c = 0; c < n; c++) {
    const len = body.readInt32BE(i);
    i += 4;
    let v = null;
    if (len >= 0) {
      v = body.toString('utf8', i, i + len);
      i += len;
    }
    const f = fields ? fields[c] : { name: String(c), typeOid: 25 };
    if (v !== null) {
      if (INT_OIDS.has(f.typeOid)) {
        const num = Number(v);
        v = Number.isSafeInteger(num) ? num : v;
      } else if (f.typeOid === BOOL_OID) {
        v = v === 't';
      }
    }
    row[f.name] = v;
  }
  return row;
}

// ---------------------------------------------------------------- pool

class Pool {
  constructor(cfg, size = 5) {
    this.cfg = cfg;
    this.size = size;
    this.idle = [];
    this.count = 0;       // open or opening connections
    this.waiters = [];
    this.ending = false;
  }

  async _open() {
    this.count++;
    try {
      const c = new Connection(this.cfg);
      c.onClose = () => {
        const i = this.idle.indexOf(c);
        if (i >= 0) this.idle.splice(i, 1);
        if (!c._counted) return;
        c._counted = false;
        this.count--;
        this._serveWaiters();
      };
      await c.connect();
      c._counted = true;
      return c;
    } catch (e) {
      this.count--;
      throw e;
    }
  }

  _serveWaiters() {
    while (this.waiters.length && (this.idle.length || this.count < this.size)) {
      const w = this.waiters.shift();
      if (this.idle.length) w.resolve(this.idle.pop());
      else this._open().then(w.resolve, w.reject);
    }
  }

  /** Takes a connection for exclusive use; give it back with release(). */
  acquire() {
    if (this.ending) return Promise.reject(new Error('pool is closed'));
    while (this.idle.length) {
      const c = this.idle.pop();
      if (!c.closed) return Promise.resolve(c);
    }
    if (this.count < this.size) return this._open();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  release(c, broken = false) {
    if (broken || c.closed || this.ending) {
      if (!c.closed) c.close();
      if (c._counted) {
        c._counted = false;
        this.count--;
      }
      this._serveWaiters();
      return;
    }
    const w = this.waiters.shift();
    if (w) w.resolve(c);
    else this.idle.push(c);
  }

  async query(sql, params) {
    const c = await this.acquire();
    let broken = false;
    try {
      return await c.query(sql, params);
    } catch (e) {
      broken = !(e instanceof PgError);
      throw e;
    } finally {
      this.release(c, broken);
    }
  }

  /** Runs fn(client) inside BEGIN … COMMIT, rolling back if it throws. */
  async transaction(fn) {
    const c = await this.acquire();
    let broken = false;
    try {
      await c.query('BEGIN');
      const result = await fn(c);
      await c.query('COMMIT');
      return result;
    } catch (e) {
      if (!c.closed) {
        try { await c.query('ROLLBACK'); } catch (e2) { broken = true; }
      }
      if (!(e instanceof PgError)) broken = broken || c.closed;
      throw e;
    } finally {
      this.release(c, broken);
    }
  }

  end() {
    this.ending = true;
    for (const c of this.idle) c.close();
    this.idle = [];
    for (const w of this.waiters) w.reject(new Error('pool is closed'));
    this.waiters = [];
  }
}

module.exports = { Connection, Pool, PgError, configFromEnv };
