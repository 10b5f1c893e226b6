/**
 * A ZooKeeper session for the blocklist store: typed promise wrappers around the untyped
 * node-zookeeper-client callbacks, a deadline on every call, and a fresh client when the session
 * expires.
 *
 * Why a deadline on every call: node-zookeeper-client queues a request while it has no server and
 * sends it after reconnecting, forever. A sidecar whose ensemble lost quorum would hang every API
 * call and every reconcile pass. Each call therefore races a timer and fails with
 * StoreUnavailableError; the request may still reach ZooKeeper later, so a timed-out *write* has
 * an unknown outcome (the store's CAS loops make a late duplicate harmless).
 *
 * Why a new client on expiry: an expired session is final (its watches and ephemeral state are
 * gone and the client refuses every further call), so the session object swaps in a new client and
 * tells its listeners ('session'), which re-arm their watches.
 *
 * Why a watchdog: node-zookeeper-client bounds only the TCP connect. Once the socket is open it
 * writes its ConnectRequest and waits for the answer without any deadline, and once connected it
 * sends pings but never notices that no answer comes back. A server that accepted the connection
 * while (re)starting and never answered left a sidecar disconnected for good (seen after
 * `kill -9` + restart of ZooKeeper). So: a client that has not reached SYNC_CONNECTED within
 * connectTimeoutMs, or whose liveness probe gets no answer within it, is closed and replaced by a
 * fresh client (a fresh session; listeners re-arm their watches on 'session'). Replacing a client
 * that was merely waiting for a dead ensemble costs nothing.
 */
import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import * as zk from 'node-zookeeper-client';
import { Logger, silentLogger } from '../core/logger';
import { StoreUnavailableError } from './store';

/** ZooKeeper's own error codes the store branches on (KeeperException.Code). */
export const ZK = {
  CONNECTION_LOSS: zk.Exception.CONNECTION_LOSS,
  OPERATION_TIMEOUT: zk.Exception.OPERATION_TIMEOUT,
  NO_NODE: zk.Exception.NO_NODE,
  NO_AUTH: zk.Exception.NO_AUTH,
  BAD_VERSION: zk.Exception.BAD_VERSION,
  NODE_EXISTS: zk.Exception.NODE_EXISTS,
  NOT_EMPTY: zk.Exception.NOT_EMPTY,
  SESSION_EXPIRED: zk.Exception.SESSION_EXPIRED,
  AUTH_FAILED: zk.Exception.AUTH_FAILED,
} as const;

/** A ZooKeeper error reply (a KeeperException), with its numeric code. */
export class ZkError extends Error {
  constructor(readonly code: number, readonly codeName: string, readonly path: string) {
    super(`${codeName}[${code}] at ${path}`);
    this.name = 'ZkError';
  }
}

/** Codes after which the request may or may not have been applied, and a retry may succeed. */
export function isTransient(e: unknown): boolean {
  return e instanceof ZkError && (e.code === ZK.CONNECTION_LOSS || e.code === ZK.OPERATION_TIMEOUT || e.code === ZK.SESSION_EXPIRED);
}

export function hasCode(e: unknown, code: number): boolean {
  return e instanceof ZkError && e.code === code;
}

/** A call that got no answer in time; the store adds which store call it was part of. */
export class ZkTimeoutError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'ZkTimeoutError';
  }
}

/** The parts of a znode's Stat the store uses; zxids as 16 hex digits (they are 64-bit). */
export interface ZkStat {
  version: number;
  cversion: number;
  mzxid: string;
  pzxid: string;
  numChildren: number;
}

export type ZkOp =
  | { op: 'create'; path: string; data: Buffer }
  | { op: 'set'; path: string; data: Buffer; version: number }
  | { op: 'remove'; path: string; version: number };

export interface ZkSessionOptions {
  /** host:port[,host:port…] without a chroot (the store applies the chroot itself). */
  hosts: string;
  sessionTimeoutMs: number;
  operationTimeoutMs: number;
  /**
   * Deadline of one connection (TCP connect + session handshake), and of a liveness probe while
   * connected; past it the client is replaced. Default: min(session timeout, 10 s).
   */
  connectTimeoutMs?: number;
  /** Digest credentials; new znodes then get an ACL for that user only. */
  auth?: { user: string; password: string };
  logger?: Logger;
}

/** The untyped callback error of node-zookeeper-client: a zk.Exception (numeric code) or an Error. */
function toError(e: unknown, path: string): Error {
  if (e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'number' && typeof (e as { name?: unknown }).name === 'string') {
    const x = e as { code: number; name: string };
    return new ZkError(x.code, x.name, path);
  }
  return e instanceof Error ? e : new Error(String(e));
}

const hex = (b: Buffer | undefined): string => (Buffer.isBuffer(b) ? b.toString('hex').padStart(16, '0') : '0000000000000000');

function toStat(s: zk.Stat): ZkStat {
  return { version: s.version, cversion: s.cversion, mzxid: hex(s.mzxid), pzxid: hex(s.pzxid), numChildren: s.numChildren };
}

/**
 * node-zookeeper-client 1.1.3's Transaction.setData/remove/check do `version = version || -1`, so
 * an expected version of 0 — every znode's first version — silently becomes -1 ("any version")
 * inside a multi, and a compare-and-set on a fresh item turns into a blind overwrite (the
 * conformance suite's 50 concurrent merges lost causes this way). The op the transaction just
 * queued is corrected here; if the library's internals ever change shape this fails loudly
 * instead of writing blind.
 */
function pinVersion(t: zk.Transaction, version: number): void {
  const ops = (t as unknown as { ops?: unknown }).ops;
  const last = Array.isArray(ops) ? (ops[ops.length - 1] as { version?: unknown } | undefined) : undefined;
  if (!last || typeof last.version !== 'number') {
    throw new Error('node-zookeeper-client Transaction internals changed: cannot pin the expected version of a multi op');
  }
  last.version = version;
}

/** ZooKeeper's digest id for user:password: user:base64(sha1("user:password")). */
export function digestId(user: string, password: string): string {
  return `${user}:${createHash('sha1').update(`${user}:${password}`).digest('base64')}`;
}

/** The parts of node-zookeeper-client 1.1.3's connection manager the session hardens. */
interface ConnectionInternals {
  socket?: { destroy(): void };
  onSocketData?: (buf: Buffer) => void;
  onSocketConnected?: () => void;
}

const internals = (c: zk.Client): ConnectionInternals | undefined => (c as unknown as { connectionManager?: ConnectionInternals }).connectionManager;

/**
 * The library parses every frame from the server inside a socket 'data' handler; a frame it does
 * not expect (a reply arriving in a state it did not plan for) throws out of that handler, which
 * would end the whole process. Its handlers are bound from the instance when each socket is made,
 * so an own property wraps them: a frame that cannot be parsed drops the connection instead (the
 * client reconnects, or the watchdog replaces it).
 */
function harden(c: zk.Client, log: () => Logger): void {
  const cm = internals(c);
  const parse = cm?.onSocketData;
  if (!cm || typeof parse !== 'function') return; // internals changed: nothing to wrap
  cm.onSocketData = function (this: ConnectionInternals, buf: Buffer): void {
    try {
      parse.call(this, buf);
    } catch (e) {
      log().warn('zookeeper: unparseable frame from the server; dropping the connection', { error: (e as Error).message });
      this.socket?.destroy();
    }
  };
}

/** Closes a client for good, also when it is stuck in a handshake (close() alone only queues a packet). */
function abandon(c: zk.Client): void {
  const cm = internals(c);
  // A reconnect already scheduled inside the library would open a new socket after close() and
  // send a handshake nobody waits for: make any such socket end at once. (CLOSING, set by close(),
  // stops the library from reconnecting again when it closes.)
  if (cm) {
    cm.onSocketConnected = function (this: ConnectionInternals): void {
      this.socket?.destroy();
    };
    cm.onSocketData = () => undefined;
  }
  try {
    c.close();
  } catch {
    // close() writes to the socket when it can; a half-open one may refuse
  }
  try {
    cm?.socket?.destroy();
  } catch {
    // already gone
  }
}

const now = (): number => performance.now();

export class ZkSession extends EventEmitter {
  private client: zk.Client;
  private closed = false;
  /** Counts clients created; a state event from a replaced client is ignored. */
  private generation = 0;
  readonly acls: zk.ACL[];
  private readonly connectTimeoutMs: number;
  /** When the current client started trying to (re)connect; undefined while connected. */
  private connectingSince: number | undefined;
  /** When the ensemble was last known unreachable from here, continuously; undefined while it answers. */
  private unreachableSince: number | undefined;
  /** Last time any call got an answer (an error reply counts): no probe is needed before this is stale. */
  private lastAnswer = 0;
  private probing = false;
  private readonly watchdog: NodeJS.Timeout;
  /** Clients replaced by the watchdog (for /status-like diagnostics and tests). */
  replacements = 0;

  constructor(private readonly opts: ZkSessionOptions) {
    super();
    this.acls = opts.auth
      ? [new zk.ACL(zk.Permission.ALL, new zk.Id('digest', digestId(opts.auth.user, opts.auth.password)))]
      : [new zk.ACL(zk.Permission.ALL, new zk.Id('world', 'anyone'))];
    this.connectTimeoutMs = Math.max(100, opts.connectTimeoutMs ?? Math.min(opts.sessionTimeoutMs, 10_000));
    this.unreachableSince = now();
    this.client = this.newClient();
    this.watchdog = setInterval(() => this.check(), Math.max(50, Math.min(1000, Math.floor(this.connectTimeoutMs / 4))));
    this.watchdog.unref();
  }

  /** How long the ensemble has been unreachable from this session, continuously (0 = it answers). */
  unreachableForMs(): number {
    return this.unreachableSince === undefined ? 0 : Math.max(0, now() - this.unreachableSince);
  }

  private check(): void {
    if (this.closed) return;
    const t = now();
    if (this.connectingSince !== undefined) {
      if (t - this.connectingSince > this.connectTimeoutMs) {
        this.replace(`no session within ${this.connectTimeoutMs} ms (client state ${this.stateName()})`);
      }
      return;
    }
    // Connected: a server that stops answering without closing the socket is only noticed by a
    // request that gets no answer. Probe when nothing has answered for a while.
    const every = Math.min(this.connectTimeoutMs, Math.floor(this.opts.sessionTimeoutMs / 3));
    if (this.probing || t - this.lastAnswer < every) return;
    this.probing = true;
    const gen = this.generation;
    this.call<void>('exists', '/', this.connectTimeoutMs, (c, done) => c.exists('/', (err) => done(err, undefined))).then(
      () => {
        this.probing = false;
      },
      (e: unknown) => {
        this.probing = false;
        if (gen !== this.generation || this.closed) return;
        if (e instanceof ZkTimeoutError) {
          this.unreachableSince ??= t;
          this.replace(`connected, but a probe got no answer within ${this.connectTimeoutMs} ms`);
        }
      },
    );
  }

  /** Abandons the current client and starts a fresh one (a new session). */
  private replace(why: string): void {
    this.replacements++;
    this.log.warn(`zookeeper: ${why}; replacing the client`, { hosts: this.opts.hosts });
    const old = this.client;
    this.client = this.newClient();
    abandon(old);
    this.emit('session');
  }

  private get log(): Logger {
    return this.opts.logger ?? silentLogger;
  }

  private newClient(): zk.Client {
    const gen = ++this.generation;
    // retries/spinDelay: the client cycles through the servers itself; our deadlines bound callers.
    const c = zk.createClient(this.opts.hosts, { sessionTimeout: this.opts.sessionTimeoutMs, spinDelay: 100, retries: 0 });
    if (this.opts.auth) c.addAuthInfo('digest', Buffer.from(`${this.opts.auth.user}:${this.opts.auth.password}`));
    c.on('state', (s: zk.State) => this.onState(gen, s));
    harden(c, () => this.log);
    this.connectingSince = now();
    c.connect();
    return c;
  }

  private onState(gen: number, s: zk.State): void {
    if (gen !== this.generation || this.closed) return;
    if (s === zk.State.EXPIRED) {
      // Expiry is final for that client: replace it. Writes in flight on the old one failed with
      // SESSION_EXPIRED (transient to the store, which retries on the new client).
      this.log.warn('zookeeper session expired; opening a new session', { hosts: this.opts.hosts });
      const old = this.client;
      this.client = this.newClient();
      abandon(old);
      this.emit('session');
    } else if (s === zk.State.AUTH_FAILED) {
      this.log.error('zookeeper authentication failed (check cluster.resource-blocklist.store.zookeeper.auth)', { hosts: this.opts.hosts });
    } else if (s === zk.State.DISCONNECTED) {
      this.log.warn('zookeeper connection lost; reconnecting', { hosts: this.opts.hosts });
      this.connectingSince ??= now();
      this.unreachableSince ??= now();
    } else if (s === zk.State.SYNC_CONNECTED) {
      this.connectingSince = undefined;
      this.unreachableSince = undefined;
      this.lastAnswer = now();
      this.log.debug('zookeeper connected', { hosts: this.opts.hosts, sessionTimeout: this.client.getSessionTimeout() });
      this.emit('connected');
    }
  }

  /** The current session's id (hex, for logs) and password (tests attach to it to expire it). */
  credentials(): { id: Buffer; idHex: string; password: Buffer } {
    const id = this.client.getSessionId();
    return { id, idHex: id.toString('hex'), password: this.client.getSessionPassword() };
  }

  /** The client's state name (for error messages): SYNC_CONNECTED, DISCONNECTED, … */
  stateName(): string {
    return this.closed ? 'CLOSED' : String(this.client.getState()?.name ?? 'CONNECTING');
  }

  /**
   * Runs one client call bounded by timeoutMs. Rejects with ZkError for a ZooKeeper error reply,
   * and with StoreUnavailableError when the time runs out first.
   */
  private call<T>(what: string, path: string, timeoutMs: number, fn: (c: zk.Client, done: (err: unknown, value: T) => void) => void): Promise<T> {
    if (this.closed) return Promise.reject(new StoreUnavailableError(`zookeeper: ${what} ${path}: the store is closed`));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        reject(
          new ZkTimeoutError(
            `${what} ${path} got no answer in time (ensemble ${this.opts.hosts} unreachable or without quorum; client state ${this.stateName()})`,
          ),
        );
      }, Math.max(1, timeoutMs));
      const done = (err: unknown, value: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // CONNECTION_LOSS is the client's own verdict, not an answer from a server.
        if (!err || !isTransient(toError(err, path))) this.lastAnswer = now();
        if (err) reject(toError(err, path));
        else resolve(value);
      };
      try {
        fn(this.client, done);
      } catch (e) {
        // Path.validate and argument asserts throw synchronously.
        done(e, undefined as T);
      }
    });
  }

  /** Data and stat, or undefined when the znode does not exist. */
  async getData(path: string, timeoutMs: number): Promise<{ data: Buffer; stat: ZkStat } | undefined> {
    try {
      return await this.call<{ data: Buffer; stat: ZkStat }>('getData', path, timeoutMs, (c, done) =>
        c.getData(path, (err, data, stat) => done(err, err ? { data: Buffer.alloc(0), stat: {} as ZkStat } : { data: data ?? Buffer.alloc(0), stat: toStat(stat) })),
      );
    } catch (e) {
      if (hasCode(e, ZK.NO_NODE)) return undefined;
      throw e;
    }
  }

  /** Stat or undefined; with a watcher, ZooKeeper arms a one-shot watch (also on an absent node). */
  exists(path: string, timeoutMs: number, watcher?: (ev: zk.Event) => void): Promise<ZkStat | undefined> {
    return this.call<ZkStat | undefined>('exists', path, timeoutMs, (c, done) => {
      const cb = (err: Error | zk.Exception | null, stat: zk.Stat): void => done(err, stat ? toStat(stat) : undefined);
      if (watcher) c.exists(path, watcher, cb);
      else c.exists(path, cb);
    });
  }

  getChildren(path: string, timeoutMs: number): Promise<string[]> {
    return this.call<string[]>('getChildren', path, timeoutMs, (c, done) => c.getChildren(path, (err, children) => done(err, children ?? [])));
  }

  /** Creates a persistent znode with the session's ACL; NODE_EXISTS is the caller's business. */
  create(path: string, data: Buffer, timeoutMs: number): Promise<void> {
    return this.call<void>('create', path, timeoutMs, (c, done) => c.create(path, data, this.acls, zk.CreateMode.PERSISTENT, (err) => done(err, undefined)));
  }

  /**
   * Creates an EPHEMERAL_SEQUENTIAL znode (the member znode of ZooKeeper's leader-election recipe):
   * it lives as long as this session and gets a 10-digit sequence suffix. Resolves to its full path.
   */
  createEphemeralSequential(path: string, data: Buffer, timeoutMs: number): Promise<string> {
    return this.call<string>('create', path, timeoutMs, (c, done) =>
      c.create(path, data, this.acls, zk.CreateMode.EPHEMERAL_SEQUENTIAL, (err, created) => done(err, created ?? '')),
    );
  }

  /** An atomic multi-op (ZooKeeper `multi`): all ops apply or none; rejects with the first failure. */
  multi(ops: ZkOp[], timeoutMs: number): Promise<void> {
    const path = ops[0]?.path ?? '/';
    return this.call<void>('multi', path, timeoutMs, (c, done) => {
      const t = c.transaction();
      for (const o of ops) {
        if (o.op === 'create') t.create(o.path, o.data, this.acls, zk.CreateMode.PERSISTENT);
        else if (o.op === 'set') t.setData(o.path, o.data, o.version);
        else t.remove(o.path, o.version);
        if (o.op !== 'create') pinVersion(t, o.version);
      }
      t.commit((err) => done(err, undefined));
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    this.removeAllListeners();
    abandon(this.client);
  }
}
