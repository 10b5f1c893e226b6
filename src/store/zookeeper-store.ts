/**
 * The shared store: one cluster-wide blocklist on a ZooKeeper ensemble, for many sidecars of many
 * jobs. Layout in zookeeper-paths.ts; docs/zookeeper.md explains the scheme.
 *
 * - Every write is one ZooKeeper `multi`: the item change (create / versioned setData / versioned
 *   delete) plus a setData on the items znode. The multi is atomic, so the change marker moves iff
 *   the change committed, and a promise resolves only after the ensemble's quorum acknowledged it.
 * - add() is read → model/decide → compare-and-set on the znode's data version (cas-add.ts), retried
 *   on BAD_VERSION / NODE_EXISTS / NO_NODE: concurrent merges from any number of sidecars lose nothing.
 * - removeExpired() deletes with the version it read: of several sidecars expiring at once exactly
 *   one delete succeeds per item, and only that caller reports it.
 * - Change marker: `mzxid.pzxid` of the items znode. Why not the root's stat alone: a parent's
 *   cversion/pzxid move on child create/delete only, not when a child's data changes (a merge), so
 *   every write also touches the items znode; pzxid is kept in the marker so children created or
 *   deleted by hand (zkCli) are still noticed by pollers.
 * - Every call is bounded by the operation timeout (zookeeper-session.ts); every retry goes through
 *   retry.ts, and the rounds of one store call share that one deadline, so a store call never
 *   outlives it.
 */
import { BlockedItem } from '../model/item';
import { Logger, silentLogger } from '../core/logger';
import { Clock, systemClock } from '../core/clock';
import { AddOutcome, AddRequest, BlocklistStore, StoreUnavailableError, checkRecordKey } from './store';
import { CasLostError, CasPort, casAdd } from './cas-add';
import { Deadline, Failure, retry } from './retry';
import { CorruptItemError, decodeStored } from './codec';
import { Quarantine, QuarantinedRow, quarantinedRow } from './quarantine';
import { ZkLayout, decodeId, parseConnectString } from './zookeeper-paths';
import { ZK, ZkError, ZkOp, ZkSession, ZkTimeoutError, hasCode, isTransient } from './zookeeper-session';
import { ZkWatch, markerOf } from './zookeeper-watch';

export interface ZookeeperStoreOptions {
  /** host:port[,host:port…][/chroot] */
  quorum: string;
  /** Root znode under the chroot, e.g. /flink-blocklist. */
  root: string;
  sessionTimeoutMs: number;
  /** Bound of every store call (and of open()). */
  operationTimeoutMs: number;
  /** Deadline of a connection + handshake before a fresh client is made (zookeeper-session.ts). */
  connectTimeoutMs?: number;
  /** 'user:password' for digest auth; '' or undefined = none. */
  auth?: string;
  logger?: Logger;
  /** Whose timers the retries' backoff waits on. */
  clock?: Clock;
}

const EMPTY = Buffer.alloc(0);
/** list()/removeExpired() read children this many at a time (the client pipelines them). */
const READ_BATCH = 256;

/** A read or a skeleton step: only a lost connection is worth another try. */
const readFailure = (e: unknown): Failure => (isTransient(e) ? 'transient' : 'fatal');
/** A compare-and-set round: a moved version or a znode that appeared or went means another writer won. */
const casFailure = (e: unknown): Failure =>
  hasCode(e, ZK.BAD_VERSION) || hasCode(e, ZK.NODE_EXISTS) || hasCode(e, ZK.NO_NODE) || e instanceof CasLostError
    ? 'contention'
    : isTransient(e) || e instanceof StoreUnavailableError
      ? 'transient'
      : 'fatal';

function parseAuth(auth: string | undefined): { user: string; password: string } | undefined {
  if (!auth) return undefined;
  const i = auth.indexOf(':');
  if (i <= 0 || i === auth.length - 1) throw new Error("cluster.resource-blocklist.store.zookeeper.auth must be 'user:password'");
  return { user: auth.slice(0, i), password: auth.slice(i + 1) };
}

export class ZookeeperStore implements BlocklistStore {
  readonly description: string;
  private readonly layout: ZkLayout;
  private readonly session: ZkSession;
  private readonly watcher: ZkWatch;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly quarantine: Quarantine;

  private constructor(private readonly opts: ZookeeperStoreOptions) {
    this.clock = opts.clock ?? systemClock;
    const addr = parseConnectString(opts.quorum);
    this.layout = new ZkLayout(addr.chroot, opts.root);
    this.logger = (opts.logger ?? silentLogger).child({ component: 'zookeeper-store' });
    this.description = `zookeeper:${addr.hosts}${this.layout.base}`;
    this.quarantine = new Quarantine(this.logger, this.description);
    this.session = new ZkSession({
      hosts: addr.hosts,
      sessionTimeoutMs: opts.sessionTimeoutMs,
      operationTimeoutMs: opts.operationTimeoutMs,
      ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
      auth: parseAuth(opts.auth),
      logger: this.logger,
    });
    this.watcher = new ZkWatch(this.session, this.layout.items, opts.operationTimeoutMs, this.logger);
  }

  /**
   * Connects and makes sure the skeleton (chroot, root, items) exists. Fails with
   * StoreUnavailableError within the operation timeout when the ensemble cannot be reached.
   * The chroot is created by the store (a plain client needs it to exist already).
   */
  static async open(opts: ZookeeperStoreOptions): Promise<ZookeeperStore> {
    const s = new ZookeeperStore(opts);
    try {
      await s.ensureSkeleton(new Deadline(opts.operationTimeoutMs));
    } catch (e) {
      await s.close();
      throw s.unavailable(e, 'open');
    }
    return s;
  }

  private async ensureSkeleton(d: Deadline): Promise<void> {
    for (const p of this.layout.skeleton()) {
      // exists first: creating an existing node under a parent we may not write to would be NO_AUTH.
      if (await this.retrying(d, () => this.session.exists(p, d.left()))) continue;
      await this.retrying(d, async () => {
        try {
          await this.session.create(p, EMPTY, d.left());
        } catch (e) {
          if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
        }
      });
    }
  }

  /** Retries a step after connection loss until the deadline; other errors pass through. */
  private retrying<T>(d: Deadline, step: () => Promise<T>): Promise<T> {
    return retry({ deadline: d, clock: this.clock, classify: readFailure }, step);
  }

  /** Maps a failure to what callers see: StoreUnavailableError unless it is a data problem. */
  private unavailable(e: unknown, what: string): Error {
    if (e instanceof ZkTimeoutError) {
      return new StoreUnavailableError(`zookeeper store ${this.description}: ${what} did not complete within ${this.opts.operationTimeoutMs} ms: ${e.message}`, e);
    }
    if (e instanceof StoreUnavailableError || e instanceof CorruptItemError) return e;
    if (e instanceof ZkError) {
      const hint =
        e.code === ZK.NO_AUTH || e.code === ZK.AUTH_FAILED
          ? ' (not authorised: check cluster.resource-blocklist.store.zookeeper.auth and the znodes\' ACLs)'
          : isTransient(e)
            ? ` (no answer from a quorum within ${this.opts.operationTimeoutMs} ms; client state ${this.session.stateName()})`
            : '';
      return new StoreUnavailableError(`zookeeper store ${this.description}: ${what} failed: ${e.message}${hint}`, e);
    }
    return new StoreUnavailableError(`zookeeper store ${this.description}: ${what} failed: ${(e as Error)?.message ?? String(e)}`, e);
  }

  private decode(id: string, data: Buffer): BlockedItem {
    return decodeStored(id, data.toString('utf8'), `item '${id}' at ${this.layout.itemPath(id)}`);
  }

  private bump(): ZkOp {
    return { op: 'set', path: this.layout.items, data: EMPTY, version: -1 };
  }

  async add(req: AddRequest): Promise<AddOutcome> {
    try {
      return await this.addOne(req, new Deadline(this.opts.operationTimeoutMs));
    } catch (e) {
      throw this.unavailable(e, `add '${req.item.id}'`);
    }
  }

  private addOne(req: AddRequest, d: Deadline): Promise<AddOutcome> {
    return casAdd(this.casPort(d), req, {
      deadline: d,
      clock: this.clock,
      classify: casFailure,
      exhausted: (last, maybeApplied) =>
        casFailure(last) === 'transient' && !maybeApplied
          ? last
          : new StoreUnavailableError(
              `zookeeper store ${this.description}: add '${req.item.id}' did not complete within ${this.opts.operationTimeoutMs} ms${maybeApplied ? ' (a write was sent and may have been applied)' : ''}; client state ${this.session.stateName()}`,
            ),
    });
  }

  /** Items as versioned znodes; every write is a multi with the change marker. */
  private casPort(d: Deadline): CasPort<number> {
    return {
      read: async (id) => {
        const cur = await this.session.getData(this.layout.itemPath(id), d.left());
        return cur ? { item: this.decode(id, cur.data), version: cur.stat.version, text: cur.data.toString('utf8') } : undefined;
      },
      create: async (id, text) => {
        try {
          await this.session.multi([{ op: 'create', path: this.layout.itemPath(id), data: Buffer.from(text) }, this.bump()], d.left());
        } catch (e) {
          // NO_NODE on a create: the skeleton itself is gone (removed by hand); make it, then retry.
          if (hasCode(e, ZK.NO_NODE) && !(await this.session.exists(this.layout.items, d.left()))) await this.ensureSkeleton(d);
          throw e;
        }
      },
      replace: (id, text, version) =>
        this.session.multi([{ op: 'set', path: this.layout.itemPath(id), data: Buffer.from(text), version }, this.bump()], d.left()).then(() => undefined),
    };
  }

  /**
   * In order, one at a time: a later request for the same id must see the earlier one. Unlike the
   * SQLite store the batch is not one transaction (a multi cannot express per-item merges with
   * retries); the REST layer validates a batch whole before calling this.
   */
  async addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    const out: AddOutcome[] = [];
    for (const r of reqs) out.push(await this.add(r));
    return out;
  }

  async get(id: string): Promise<BlockedItem | undefined> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      const cur = await this.retrying(d, () => this.session.getData(this.layout.itemPath(id), d.left()));
      return cur ? this.decode(id, cur.data) : undefined;
    } catch (e) {
      throw this.unavailable(e, `get '${id}'`);
    }
  }

  /** Every child with its data and version; children deleted meanwhile and corrupt ones are left out (`bad`). */
  private async readAll(d: Deadline, bad: QuarantinedRow[] = []): Promise<{ item: BlockedItem; version: number }[]> {
    const names = await this.retrying(d, () => this.session.getChildren(this.layout.items, d.left()));
    names.sort();
    const out: { item: BlockedItem; version: number }[] = [];
    for (let i = 0; i < names.length; i += READ_BATCH) {
      const batch = names.slice(i, i + READ_BATCH);
      const read = await Promise.all(
        batch.map(async (name) => {
          const id = decodeId(name);
          if (id === undefined) {
            bad.push({ id: name, reason: `znode ${this.layout.items}/${name} is not an item this store wrote (bad name; remove it with zkCli)` });
            return undefined;
          }
          const cur = await this.retrying(d, () => this.session.getData(`${this.layout.items}/${name}`, d.left()));
          if (!cur) return undefined;
          try {
            return { item: this.decode(id, cur.data), version: cur.stat.version };
          } catch (e) {
            if (!(e instanceof CorruptItemError)) throw e;
            bad.push(quarantinedRow(e, id));
            return undefined;
          }
        }),
      );
      for (const r of read) if (r) out.push(r);
    }
    return out;
  }

  /** Every decodable item; a corrupt znode is left out and quarantined (quarantine.ts), never silently. */
  async list(): Promise<BlockedItem[]> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      const bad: QuarantinedRow[] = [];
      const rows = await this.readAll(d, bad);
      this.quarantine.replace(bad);
      return rows.map((r) => r.item);
    } catch (e) {
      throw this.unavailable(e, 'list');
    }
  }

  async remove(id: string): Promise<BlockedItem | undefined> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    const path = this.layout.itemPath(id);
    /** Set when a delete's reply was lost: it may have been applied. */
    let unsure: BlockedItem | undefined;
    let sending: BlockedItem | undefined;
    try {
      return await retry(
        {
          deadline: d,
          clock: this.clock,
          classify: casFailure,
          initialMs: 50,
          maxMs: 50,
          onTransient: () => (unsure = sending ?? unsure),
          exhausted: (last) =>
            casFailure(last) === 'transient' ? last : new StoreUnavailableError(`zookeeper store ${this.description}: remove '${id}' did not complete within ${this.opts.operationTimeoutMs} ms`),
        },
        async () => {
          sending = undefined;
          const cur = await this.session.getData(path, d.left());
          // Our delete may have been applied although its reply was lost: report what we removed.
          if (!cur) return unsure;
          sending = this.decode(id, cur.data);
          await this.session.multi([{ op: 'remove', path, version: cur.stat.version }, this.bump()], d.left());
          return sending;
        },
      );
    } catch (e) {
      throw this.unavailable(e, `remove '${id}'`);
    }
  }

  /**
   * Versioned deletes of every item with end <= now. An item merged meanwhile (BAD_VERSION) is
   * re-read and deleted only if still expired; one already deleted (NO_NODE) belongs to the caller
   * that deleted it. Corrupt items are skipped (logged): expiry of the rest must not stop.
   * If the ensemble fails midway, the items already removed are still returned (the audit needs
   * them); only a call that removed nothing and failed throws.
   */
  async removeExpired(now: number): Promise<BlockedItem[]> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    let rows: { item: BlockedItem; version: number }[];
    try {
      // A corrupt item is skipped (quarantined, never expired); expiry of the rest goes on.
      rows = await this.readAll(d);
    } catch (e) {
      throw this.unavailable(e, 'removeExpired (read)');
    }
    const removed: BlockedItem[] = [];
    const failures: unknown[] = [];
    const expired = rows.filter((r) => r.item.endTimestamp <= now);
    for (let i = 0; i < expired.length; i += READ_BATCH) {
      await Promise.all(
        expired.slice(i, i + READ_BATCH).map(async (r) => {
          try {
            const gone = await this.expireOne(r.item, r.version, now, d);
            if (gone) removed.push(gone);
          } catch (e) {
            failures.push(e);
          }
        }),
      );
    }
    if (failures.length) {
      const err = this.unavailable(failures[0], `removeExpired (${failures.length} of ${expired.length} deletes)`);
      if (!removed.length) throw err;
      this.logger.warn('expiry removed some items and failed on others; the next run retries them', { removed: removed.length, failed: failures.length, error: err.message });
    }
    return removed;
  }

  /**
   * Deletes one expired item with the version read. A lost round is read again: gone means another
   * sidecar removed it (reported there) — or, after a lost reply, we did; extended by a merge
   * meanwhile means it is not expired any more.
   */
  private expireOne(item: BlockedItem, version: number, now: number, d: Deadline): Promise<BlockedItem | undefined> {
    const path = this.layout.itemPath(item.id);
    let unsure = false;
    return retry(
      {
        deadline: d,
        clock: this.clock,
        classify: casFailure,
        initialMs: 50,
        maxMs: 50,
        onTransient: () => (unsure = true),
        exhausted: (last) =>
          casFailure(last) === 'transient' ? last : new StoreUnavailableError(`zookeeper store ${this.description}: expiring '${item.id}' did not complete within ${this.opts.operationTimeoutMs} ms`),
      },
      async (round) => {
        let cur = { item, version };
        if (round > 0) {
          const again = await this.session.getData(path, d.left());
          if (!again) return unsure ? item : undefined;
          cur = { item: this.decode(item.id, again.data), version: again.stat.version };
          if (cur.item.endTimestamp > now) return undefined;
        }
        await this.session.multi([{ op: 'remove', path, version: cur.version }, this.bump()], d.left());
        return cur.item;
      },
    );
  }

  quarantined(): QuarantinedRow[] {
    return this.quarantine.list();
  }

  /** A versioned delete of id's znode if its data cannot be decoded. */
  async removeQuarantined(id: string): Promise<QuarantinedRow | undefined> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    const path = this.layout.itemPath(id);
    try {
      const gone = await retry({ deadline: d, clock: this.clock, classify: casFailure, initialMs: 50, maxMs: 50 }, async () => {
        const cur = await this.session.getData(path, d.left());
        if (!cur) return undefined;
        try {
          this.decode(id, cur.data);
          return undefined;
        } catch (e) {
          if (!(e instanceof CorruptItemError)) throw e;
          await this.session.multi([{ op: 'remove', path, version: cur.stat.version }, this.bump()], d.left());
          return quarantinedRow(e, id);
        }
      });
      if (gone) this.quarantine.drop(id);
      return gone;
    } catch (e) {
      throw this.unavailable(e, `remove quarantined '${id}'`);
    }
  }

  async version(): Promise<string> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      return markerOf(await this.retrying(d, () => this.session.exists(this.layout.items, d.left())));
    } catch (e) {
      throw this.unavailable(e, 'version');
    }
  }

  watch(onChange: () => void): () => void {
    return this.watcher.subscribe(onChange);
  }

  async readRecord(key: string): Promise<string | undefined> {
    checkRecordKey(key);
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      const cur = await this.retrying(d, () => this.session.getData(this.layout.recordPath(key), d.left()));
      return cur ? cur.data.toString('utf8') : undefined;
    } catch (e) {
      throw this.unavailable(e, `read record '${key}'`);
    }
  }

  /** setData, or create (with the records parent on first use); last writer wins. */
  async writeRecord(key: string, value: string): Promise<void> {
    checkRecordKey(key);
    const d = new Deadline(this.opts.operationTimeoutMs);
    const path = this.layout.recordPath(key);
    const data = Buffer.from(value, 'utf8');
    try {
      for (let round = 0; round < 5; round++) {
        try {
          await this.retrying(d, () => this.session.multi([{ op: 'set', path, data, version: -1 }], d.left()));
          return;
        } catch (e) {
          if (!hasCode(e, ZK.NO_NODE)) throw e;
        }
        try {
          if (!(await this.retrying(d, () => this.session.exists(this.layout.records, d.left())))) {
            await this.retrying(d, () => this.session.create(this.layout.records, EMPTY, d.left())).catch((e: unknown) => {
              if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
            });
          }
          await this.retrying(d, () => this.session.create(path, data, d.left()));
          return;
        } catch (e) {
          if (!hasCode(e, ZK.NODE_EXISTS)) throw e; // created meanwhile by another writer: set it
        }
      }
      throw new StoreUnavailableError(`zookeeper store ${this.description}: write record '${key}' kept racing other writers`);
    } catch (e) {
      throw this.unavailable(e, `write record '${key}'`);
    }
  }

  unreachableForMs(): number {
    return this.session.unreachableForMs();
  }

  async close(): Promise<void> {
    this.watcher.close();
    await this.session.close();
  }
}
