/**
 * One ZooKeeper session: typed promise wrappers around the untyped node-zookeeper-client callbacks,
 * a deadline on every call, and a fresh client when the session ends. A sidecar holds one of these
 * and hands it to everything that talks to ZooKeeper (the store, its watch, the cluster-state
 * election and shared readings): one TCP connection per sidecar, so a host's sidecars stay within
 * ZooKeeper's per-address connection limit (maxClientCnxns, 60 by default).
 *
 * Why a deadline on every call: node-zookeeper-client queues a request while it has no server and
 * sends it after reconnecting, forever. A sidecar whose ensemble lost quorum would hang every API
 * call and every reconcile pass. Each call therefore races a timer and fails with
 * StoreUnavailableError; the request may still reach ZooKeeper later, so a timed-out *write* has
 * an unknown outcome (the store's CAS loops make a late duplicate harmless).
 *
 * Why a new client on expiry: an expired session is final (its watches and ephemeral znodes are
 * gone and the client refuses every further call), so the session object swaps in a new client and
 * tells its users ('session'): the store's watch re-arms, the election joins again (its member
 * znode died with the old session), the shared readings forget what their watches guarded. The
 * same happens when the connection deadlines (zookeeper/deadlines.ts) find a client stuck.
 *
 * Error types live in zookeeper/errors.ts, the library patches in zookeeper/client-internals.ts;
 * both are re-exported here for the session's users.
 */
import { EventEmitter } from 'node:events';
import { createHash } from 'node:crypto';
import * as zk from 'node-zookeeper-client';
import { Logger, silentLogger } from '../../core/logger';
import { StoreUnavailableError } from '../store';
import { ZK, ZkTimeoutError, hasCode, isTransient, toZkError } from './errors';
import { abandon, harden, pinVersion } from './client-internals';
import { ConnectionDeadlines } from './deadlines';
import { SaslMechanism, enableSasl } from './sasl';

export { ZK, ZkError, ZkTimeoutError, hasCode, isTransient } from './errors';

/** The parts of a znode's Stat the store uses; zxids as 16 hex digits (they are 64-bit). */
export interface ZkStat {
  version: number;
  cversion: number;
  mzxid: string;
  pzxid: string;
  numChildren: number;
  /** The session that owns an ephemeral znode (16 hex digits), '0000000000000000' for a persistent one. */
  ephemeralOwner?: string;
  /** When the znode last changed, on the clock of the server that took the write (ZooKeeper's leader), epoch ms. */
  mtimeMs: number;
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
  /**
   * A SASL login on every connection (zookeeper/sasl.ts); new znodes then get every permission for
   * the `acl` names under the `sasl` scheme, or, when it is empty, for whoever the server
   * authenticated this session as (ZooKeeper's `auth` scheme).
   */
  sasl?: { mechanism: SaslMechanism; acl: readonly string[] };
  logger?: Logger;
}

const hex = (b: Buffer | undefined): string => (Buffer.isBuffer(b) ? b.toString('hex').padStart(16, '0') : '0000000000000000');

/** A jute long as the library hands it over (8 bytes, big-endian); 0 when absent. */
const longMs = (b: Buffer | undefined): number => (Buffer.isBuffer(b) && b.length === 8 ? Number(b.readBigInt64BE(0)) : 0);

function toStat(s: zk.Stat): ZkStat {
  return { version: s.version, cversion: s.cversion, mzxid: hex(s.mzxid), pzxid: hex(s.pzxid), numChildren: s.numChildren, ephemeralOwner: hex(s.ephemeralOwner), mtimeMs: longMs(s.mtime) };
}

/** ZooKeeper's digest id for user:password: user:base64(sha1("user:password")). */
export function digestId(user: string, password: string): string {
  return `${user}:${createHash('sha1').update(`${user}:${password}`).digest('base64')}`;
}

/** The ACL of every znode the session creates: the digest user's, the SASL names' (or the login's), else open. */
function aclsFor(opts: ZkSessionOptions): zk.ACL[] {
  if (opts.auth) return [new zk.ACL(zk.Permission.ALL, new zk.Id('digest', digestId(opts.auth.user, opts.auth.password)))];
  if (opts.sasl) {
    // `auth`: the ids this connection authenticated as (sasl:<the name the server authorized>).
    if (!opts.sasl.acl.length) return [new zk.ACL(zk.Permission.ALL, new zk.Id('auth', ''))];
    return opts.sasl.acl.map((name) => new zk.ACL(zk.Permission.ALL, new zk.Id('sasl', name)));
  }
  return [new zk.ACL(zk.Permission.ALL, new zk.Id('world', 'anyone'))];
}

export class ZkSession extends EventEmitter {
  private client: zk.Client;
  private closed = false;
  /** Counts clients created; a state event from a replaced client is ignored. */
  private generation = 0;
  readonly acls: zk.ACL[];
  private readonly deadlines: ConnectionDeadlines;
  /** Clients replaced because they were stuck (for diagnostics and tests). */
  replacements = 0;

  constructor(private readonly opts: ZkSessionOptions) {
    super();
    // Every user of the session listens for 'session'; a sidecar has a handful (store watch,
    // election, shared readings, their users), tests more: no leak warning for those.
    this.setMaxListeners(50);
    this.acls = aclsFor(opts);
    const connectTimeoutMs = Math.max(100, opts.connectTimeoutMs ?? Math.min(opts.sessionTimeoutMs, 10_000));
    this.deadlines = new ConnectionDeadlines({
      connectTimeoutMs,
      sessionTimeoutMs: opts.sessionTimeoutMs,
      probe: (t) => this.call<void>('exists', '/', t, (c, done) => c.exists('/', (err) => done(err, undefined))),
      stuck: (why) => {
        if (this.closed) return;
        this.replacements++;
        this.renew(`${why} (client state ${this.stateName()}); replacing the client`);
      },
    });
    this.client = this.newClient();
  }

  /** How long the ensemble has been unreachable from this session, continuously (0 = it answers). */
  unreachableForMs(): number {
    return this.deadlines.unreachableForMs();
  }

  /** The session is over for this client: a fresh client (a new session) and the users told. */
  private renew(why: string): void {
    this.log.warn(`zookeeper: ${why}`, { hosts: this.opts.hosts });
    const old = this.client;
    this.client = this.newClient();
    abandon(old);
    // The users share this session: one user's failing handler must not leave the others (the
    // store's watch, the election, the shared readings) un-told and working on the old session.
    for (const listener of this.listeners('session')) {
      try {
        (listener as () => void)();
      } catch (e) {
        this.log.warn('zookeeper: a session listener failed', { error: (e as Error).message });
      }
    }
  }

  private get log(): Logger {
    return this.opts.logger ?? silentLogger;
  }

  private newClient(): zk.Client {
    const gen = ++this.generation;
    // retries/spinDelay: the client cycles through the servers itself; our deadlines bound callers.
    const c = zk.createClient(this.opts.hosts, { sessionTimeout: this.opts.sessionTimeoutMs, spinDelay: 100, retries: 0 });
    if (this.opts.auth) c.addAuthInfo('digest', Buffer.from(`${this.opts.auth.user}:${this.opts.auth.password}`));
    if (this.opts.sasl) enableSasl(c, { mechanism: this.opts.sasl.mechanism, log: () => this.log });
    c.on('state', (s: zk.State) => this.onState(gen, s));
    harden(c, () => this.log);
    this.deadlines.clientStarted();
    c.connect();
    return c;
  }

  private onState(gen: number, s: zk.State): void {
    if (gen !== this.generation || this.closed) return;
    if (s === zk.State.EXPIRED) {
      // Expiry is final for that client: replace it. Writes in flight on the old one failed with
      // SESSION_EXPIRED (transient to the store, which retries on the new client).
      this.renew('session expired; opening a new session');
    } else if (s === zk.State.AUTH_FAILED) {
      const check = this.opts.sasl ? "the Kerberos login (security.kerberos.login.*) and the ensemble's log" : 'cluster.resource-blocklist.store.zookeeper.auth';
      this.log.error(`zookeeper authentication failed (check ${check})`, { hosts: this.opts.hosts });
    } else if (s === zk.State.DISCONNECTED) {
      this.log.warn('zookeeper connection lost; reconnecting', { hosts: this.opts.hosts });
      this.deadlines.disconnected();
    } else if (s === zk.State.SYNC_CONNECTED) {
      this.deadlines.connected();
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
    if (this.closed) return Promise.reject(new StoreUnavailableError(`zookeeper: ${what} ${path}: the session is closed`));
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
        if (!err || !isTransient(toZkError(err, path))) this.deadlines.answered();
        if (err) reject(toZkError(err, path));
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

  /** Creates an EPHEMERAL znode (it lives as long as this session); NODE_EXISTS is the caller's business. */
  createEphemeral(path: string, data: Buffer, timeoutMs: number): Promise<void> {
    return this.call<void>('create', path, timeoutMs, (c, done) => c.create(path, data, this.acls, zk.CreateMode.EPHEMERAL, (err) => done(err, undefined)));
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

  /** setData of one znode (version -1: any); resolves to its new stat. */
  setData(path: string, data: Buffer, version: number, timeoutMs: number): Promise<ZkStat> {
    return this.call<ZkStat>('setData', path, timeoutMs, (c, done) => c.setData(path, data, version, (err, stat) => done(err, err ? ({} as ZkStat) : toStat(stat))));
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
    this.deadlines.close();
    this.removeAllListeners();
    abandon(this.client);
  }
}
