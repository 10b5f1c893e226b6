/**
 * The shared store: one cluster-wide blocklist on a ZooKeeper ensemble, for many sidecars of many
 * jobs. Layout in zookeeper/paths.ts; docs/zookeeper.md explains the scheme. One concern per file:
 *  - zookeeper/session.ts: the session (one per sidecar, shared with the cluster-state election),
 *    deadlines on every call, a fresh client when the session ends;
 *  - zookeeper/items.ts: items as znodes, the change marker, the compare-and-set port;
 *  - zookeeper/watch.ts: the change feed; zookeeper/expiry.ts, zookeeper/records.ts: those calls;
 *  - zookeeper/store-failures.ts: what is retried and what callers see;
 *  - this file: the BlocklistStore operations over those.
 *
 * - Every write is one ZooKeeper `multi` (the item change plus the change marker), acknowledged
 *   only after the ensemble's quorum applied it.
 * - add() is read → model/decide → compare-and-set on the znode's data version (cas-add.ts), retried
 *   on BAD_VERSION / NODE_EXISTS / NO_NODE: concurrent merges from any number of sidecars lose nothing.
 * - Change marker: `mzxid.pzxid` of the items znode; pzxid is kept so children created or deleted
 *   by hand (zkCli) are still noticed by pollers.
 * - Every call is bounded by the operation timeout; every retry goes through retry.ts, and the
 *   rounds of one store call share that one deadline, so a store call never outlives it.
 */
import { BlockedItem, tagMatches } from '../../model/item';
import { Logger, silentLogger } from '../../core/logger';
import { Clock, systemClock } from '../../core/clock';
import { AddOutcome, AddRequest, BlocklistStore, ClockSkew, ItemChangedError, StoreUnavailableError } from '../store';
import { casAdd } from '../cas-add';
import { Deadline, retry } from '../retry';
import { CorruptItemError } from '../codec';
import { Quarantine, QuarantinedRow, quarantinedRow } from '../quarantine';
import { ZkLayout, parseAuth, parseConnectString } from './paths';
import { ZkSession } from './session';
import { ZkWatch, markerOf } from './watch';
import { ZkItems } from './items';
import { casFailure, notInTime, unavailable } from './store-failures';
import { removeExpired } from './expiry';
import { readRecord, recordKeys, removeRecord, replaceRecord, writeRecord } from './records';
import { StoreClock } from './clock';

/** Default of cluster.resource-blocklist.store.zookeeper.clock-skew-limit. */
export const CLOCK_SKEW_LIMIT_MS = 10_000;

export interface ZookeeperStoreOptions {
  /** host:port[,host:port…][/chroot] */
  quorum: string;
  /** Root znode under the chroot, e.g. /flink-blocklist. */
  root: string;
  sessionTimeoutMs: number;
  /** Bound of every store call (and of open()). */
  operationTimeoutMs: number;
  /** Deadline of a connection + handshake before a fresh client is made (zookeeper/deadlines.ts). */
  connectTimeoutMs?: number;
  /** 'user:password' for digest auth; '' or undefined = none. */
  auth?: string;
  /**
   * A session to use instead of opening one (the sidecar shares its one session between the store
   * and the cluster-state election). Its owner closes it; the store's close() leaves it open. Its
   * hosts and credentials must be those of `quorum` and `auth`; the session options above are then
   * the session's business and ignored here.
   */
  session?: ZkSession;
  logger?: Logger;
  /** Whose timers the retries' backoff waits on. */
  clock?: Clock;
  /**
   * The local wall clock compared with the store's time (the sidecar's injected clock, whose
   * timers the store does not use); `clock`'s when absent.
   */
  localTime?: () => number;
  /** Monotonic ms the store's time is carried forward on (the sidecar's clock's); performance.now() when absent. */
  monotonic?: () => number;
  /** Beyond this skew expiry is refused (zookeeper/clock.ts); CLOCK_SKEW_LIMIT_MS when absent. */
  clockSkewLimitMs?: number;
}

export class ZookeeperStore implements BlocklistStore {
  readonly description: string;
  private readonly session: ZkSession;
  /** Whether close() ends the session (the store opened it) or leaves it to its owner. */
  private readonly ownsSession: boolean;
  private readonly items: ZkItems;
  private readonly watcher: ZkWatch;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly quarantine: Quarantine;
  private readonly storeClock: StoreClock;

  private constructor(private readonly opts: ZookeeperStoreOptions) {
    this.clock = opts.clock ?? systemClock;
    const addr = parseConnectString(opts.quorum);
    const layout = new ZkLayout(addr.chroot, opts.root);
    this.logger = (opts.logger ?? silentLogger).child({ component: 'zookeeper/zookeeper-store' });
    this.description = `zookeeper:${addr.hosts}${layout.base}`;
    this.quarantine = new Quarantine(this.logger, this.description);
    this.ownsSession = opts.session === undefined;
    this.session = opts.session ?? new ZkSession(zookeeperSessionOptions(opts, this.logger));
    this.items = new ZkItems(this.session, layout, this.clock, opts.operationTimeoutMs, this.description);
    this.watcher = new ZkWatch(this.session, layout.items, opts.operationTimeoutMs, this.logger);
    const local = opts.localTime ?? (() => this.clock.now());
    this.storeClock = new StoreClock({
      session: this.session,
      path: layout.clock,
      localTime: local,
      monotonic: opts.monotonic ?? (() => performance.now()),
      limitMs: opts.clockSkewLimitMs ?? CLOCK_SKEW_LIMIT_MS,
      logger: this.logger,
      description: this.description,
    });
  }

  /**
   * Connects (or uses the given session) and makes sure the skeleton (chroot, root, items) exists.
   * Fails with StoreUnavailableError within the operation timeout when the ensemble cannot be reached.
   */
  static async open(opts: ZookeeperStoreOptions): Promise<ZookeeperStore> {
    const s = new ZookeeperStore(opts);
    try {
      await s.items.ensureSkeleton(new Deadline(opts.operationTimeoutMs));
    } catch (e) {
      await s.close();
      throw unavailable(s.items, e, 'open');
    }
    // The skew is known from the start (a clock 2 h ahead must not wait for the first expiry run).
    await s.storeClock.measure(new Deadline(opts.operationTimeoutMs)).catch((e: Error) => s.logger.warn(`zookeeper: the store's time could not be measured at open (${e.message}); the expiry job measures it again`));
    return s;
  }

  async add(req: AddRequest): Promise<AddOutcome> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      return await casAdd(this.items.casPort(d), req, {
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
    } catch (e) {
      throw unavailable(this.items, e, `add '${req.item.id}'`);
    }
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
      const cur = await this.items.retrying(d, () => this.session.getData(this.items.layout.itemPath(id), d.left()));
      return cur ? this.items.decode(id, cur.data) : undefined;
    } catch (e) {
      throw unavailable(this.items, e, `get '${id}'`);
    }
  }

  /** Every decodable item; a corrupt znode is left out and quarantined (quarantine.ts), never silently. */
  async list(): Promise<readonly BlockedItem[]> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      const bad: QuarantinedRow[] = [];
      const rows = await this.items.readAll(d, bad);
      this.quarantine.replace(bad);
      return rows.map((r) => r.item);
    } catch (e) {
      throw unavailable(this.items, e, 'list');
    }
  }

  async remove(id: string, ifMatch?: string): Promise<BlockedItem | undefined> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    const path = this.items.layout.itemPath(id);
    /** Set when a delete's reply was lost: it may have been applied. */
    let unsure: BlockedItem | undefined;
    let sending: BlockedItem | undefined;
    /** Another version than If-Match names: nothing deleted (the versioned delete makes the check and the delete one step). */
    let changed: BlockedItem | undefined;
    let removed: BlockedItem | undefined;
    try {
      removed = await retry(
        {
          deadline: d,
          clock: this.clock,
          classify: casFailure,
          initialMs: 50,
          maxMs: 50,
          onTransient: () => (unsure = sending ?? unsure),
          exhausted: (last) => notInTime(this.items, `remove '${id}'`, last),
        },
        async () => {
          sending = undefined;
          const cur = await this.session.getData(path, d.left());
          // Our delete may have been applied although its reply was lost: report what we removed.
          if (!cur) return unsure;
          const item = this.items.decode(id, cur.data);
          if (ifMatch !== undefined && !tagMatches(ifMatch, item)) {
            // Our earlier delete was applied and the id blocked again since: ours is done.
            if (unsure) return unsure;
            changed = item;
            return undefined;
          }
          sending = item;
          await this.items.removeAt(path, cur.stat.version, d);
          return sending;
        },
      );
    } catch (e) {
      throw unavailable(this.items, e, `remove '${id}'`);
    }
    if (changed && !removed) throw new ItemChangedError(changed);
    return removed;
  }

  /**
   * Versioned deletes of every expired item (zookeeper/expiry.ts); refused (ClockSkewError, nothing
   * deleted) while this clock is ahead of the store's time by more than the limit (zookeeper/clock.ts).
   */
  async removeExpired(now: number): Promise<BlockedItem[]> {
    try {
      await this.storeClock.refresh(new Deadline(this.opts.operationTimeoutMs));
    } catch (e) {
      throw unavailable(this.items, e, "removeExpired (measuring the store's time)");
    }
    this.storeClock.checkExpiry(now);
    return removeExpired(this.items, now, this.logger);
  }

  quarantined(): QuarantinedRow[] {
    return this.quarantine.list();
  }

  /** A versioned delete of id's znode if its data cannot be decoded. */
  async removeQuarantined(id: string): Promise<QuarantinedRow | undefined> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    const path = this.items.layout.itemPath(id);
    try {
      const gone = await retry({ deadline: d, clock: this.clock, classify: casFailure, initialMs: 50, maxMs: 50 }, async () => {
        const cur = await this.session.getData(path, d.left());
        if (!cur) return undefined;
        try {
          this.items.decode(id, cur.data);
          return undefined;
        } catch (e) {
          if (!(e instanceof CorruptItemError)) throw e;
          await this.items.removeAt(path, cur.stat.version, d);
          return quarantinedRow(e, id);
        }
      });
      if (gone) this.quarantine.drop(id);
      return gone;
    } catch (e) {
      throw unavailable(this.items, e, `remove quarantined '${id}'`);
    }
  }

  async version(): Promise<string> {
    const d = new Deadline(this.opts.operationTimeoutMs);
    try {
      return markerOf(await this.items.retrying(d, () => this.session.exists(this.items.layout.items, d.left())));
    } catch (e) {
      throw unavailable(this.items, e, 'version');
    }
  }

  watch(onChange: () => void): () => void {
    return this.watcher.subscribe(onChange);
  }

  readRecord(key: string): Promise<string | undefined> {
    return readRecord(this.items, key);
  }

  writeRecord(key: string, value: string): Promise<void> {
    return writeRecord(this.items, key, value);
  }

  replaceRecord(key: string, expected: string | undefined, value: string): Promise<boolean> {
    return replaceRecord(this.items, key, expected, value);
  }

  recordKeys(prefix: string): Promise<string[]> {
    return recordKeys(this.items, prefix);
  }

  removeRecord(key: string, expected: string): Promise<boolean> {
    return removeRecord(this.items, key, expected);
  }

  clockSkew(): ClockSkew | undefined {
    return this.storeClock.reading();
  }

  unreachableForMs(): number {
    return this.session.unreachableForMs();
  }

  /** Stops the watch; ends the session only if the store opened it (a shared one is its owner's). */
  async close(): Promise<void> {
    this.watcher.close();
    if (this.ownsSession) await this.session.close();
  }
}

/** The session a store (or a sidecar, for all its ZooKeeper users) opens for these options. */
export function zookeeperSessionOptions(
  opts: Pick<ZookeeperStoreOptions, 'quorum' | 'sessionTimeoutMs' | 'operationTimeoutMs' | 'connectTimeoutMs' | 'auth'>,
  logger: Logger,
): ConstructorParameters<typeof ZkSession>[0] {
  const auth = parseAuth(opts.auth);
  return {
    hosts: parseConnectString(opts.quorum).hosts,
    sessionTimeoutMs: opts.sessionTimeoutMs,
    operationTimeoutMs: opts.operationTimeoutMs,
    ...(opts.connectTimeoutMs ? { connectTimeoutMs: opts.connectTimeoutMs } : {}),
    ...(auth ? { auth } : {}),
    logger,
  };
}
