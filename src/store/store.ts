/**
 * The blocklist store: the source of truth for *desired* state. One interface, two real
 * implementations (SQLite file, ZooKeeper ensemble). Everything is async and every write is a
 * compare-and-set at heart, so a ZooKeeper implementation can satisfy it with versioned setData.
 *
 * Contract every implementation keeps (test/store/conformance.ts checks both):
 *  - a resolved write is durable (fsync'd / quorum-acked) before the promise resolves;
 *  - add() is read → model/decide → compare-and-set, atomic: concurrent merges into one id lose
 *    nothing; concurrent non-merging adds of one id yield exactly one `created`;
 *  - an `unchanged` or `conflict` add writes nothing and does not move version();
 *  - version() moves on every write that changed something, so a poller can skip unchanged reads;
 *  - a row that cannot be decoded, or breaks a request's rules (row-rules.ts), is quarantined:
 *    left out of list() (every other item is listed), reported by quarantined(), removed only by
 *    removeQuarantined();
 *  - an existing item already expired at the new item's creation time (`item.created.at`) is
 *    replaced: add() answers `created` (expiry is inclusive and never waits for the cron job).
 */
import { BlockedItem } from '../model/item';
import { AddRequest, Conflict, Decision } from '../model/decide';
import type { QuarantinedRow } from './quarantine';

export type { AddRequest, Conflict, QuarantinedRow };

/** What add() did: model/decide's decision, after the store wrote it. */
export type AddOutcome =
  | { outcome: 'created'; item: BlockedItem }
  | { outcome: 'merged'; item: BlockedItem; previous: BlockedItem }
  | { outcome: 'unchanged'; item: BlockedItem }
  | { outcome: 'conflict'; existing: BlockedItem; conflict: Conflict };

/** The outcome a decision has once its write (if any) is done. */
export function outcomeOf(d: Decision): AddOutcome {
  switch (d.outcome) {
    case 'created':
      return { outcome: 'created', item: d.write };
    case 'merged':
      return { outcome: 'merged', item: d.write, previous: d.previous };
    case 'unchanged':
      return d;
    case 'conflict':
      return d;
  }
}

/** Thrown for a store that cannot be reached or that refused a write (the API answers 503). */
export class StoreUnavailableError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

/**
 * This sidecar's clock against the store's own time (the ZooKeeper store: the mtime of a znode it
 * writes; zookeeper/clock.ts). Shared data is compared with the store's time, not one machine's.
 */
export interface ClockSkew {
  /** The local clock minus the store's, ms: positive = this clock is ahead. */
  skewMs: number;
  /** The estimate's ± (half the measuring write's round trip). */
  uncertaintyMs: number;
  /** The store's time now, as estimated (epoch ms): its time at the measurement plus the monotonic time since. */
  storeNow: number;
  /** Local epoch ms of the last measurement. */
  measuredAt: number;
  /** Beyond this |skew| the store refuses to expire shared items (cluster.resource-blocklist.store.zookeeper.clock-skew-limit). */
  limitMs: number;
}

/** removeExpired refused: this clock is ahead of the store's by more than the limit (nothing was deleted). */
export class ClockSkewError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'ClockSkewError';
  }
}

/** remove(id, ifMatch) found another version of the item than the caller saw: nothing was removed. */
export class ItemChangedError extends Error {
  constructor(readonly current: BlockedItem) {
    super(`'${current.id}' changed since it was read`);
    this.name = 'ItemChangedError';
  }
}

export const RECORD_KEY = /^[A-Za-z0-9._:-]{1,200}$/;

export function checkRecordKey(key: string): void {
  if (!RECORD_KEY.test(key)) throw new Error(`record key '${key.slice(0, 80)}' must be 1..200 characters of A-Z a-z 0-9 . _ : -`);
}

export interface BlocklistStore {
  /** A short name for logs and /status: "sqlite:/path" or "zookeeper:host:port/root". */
  readonly description: string;
  add(req: AddRequest): Promise<AddOutcome>;
  /** Adds several items, each with its own outcome, in order. */
  addMany(reqs: AddRequest[]): Promise<AddOutcome[]>;
  get(id: string): Promise<BlockedItem | undefined>;
  /** Every item, sorted by id; shared with the store (and other callers): never changed. */
  list(): Promise<readonly BlockedItem[]>;
  /**
   * Resolves once every write committed so far is durable, so its caller has its answer; undefined
   * when no write waits. A store that syncs its commits off the event loop (SQLite in the sidecar)
   * has writes between commit and answer; the engine lets them be answered before a pass holds
   * the loop for milliseconds. Absent: a write is answered when it is durable.
   */
  durable?(): Promise<void> | undefined;
  /**
   * Removes one item; returns what was removed, or undefined if absent. With `ifMatch` (HTTP
   * If-Match, model/item#itemTag) only the version the caller saw is removed, in the same
   * compare-and-set: another version throws ItemChangedError and removes nothing.
   */
  remove(id: string, ifMatch?: string): Promise<BlockedItem | undefined>;
  /**
   * Removes every item with endTimestamp <= now and returns the ones *this call* removed.
   * Safe when several sidecars expire at once: each item is reported removed by exactly one.
   * A shared store throws ClockSkewError, deleting nothing, while the local clock (or `now`) is
   * ahead of the store's time by more than its limit.
   */
  removeExpired(now: number): Promise<BlockedItem[]>;
  /** A marker that changes whenever the stored set changes. Cheap to read. */
  version(): Promise<string>;
  /**
   * Rows the last list() left out because they cannot be decoded (quarantine.ts): never enforced,
   * never expired, named in /status and the metrics. get()/add() of such an id throw
   * CorruptItemError. Every store of this program has it; optional for test doubles.
   */
  quarantined?(): QuarantinedRow[];
  /** Deletes id's row if it cannot be decoded (and moves version()); a decodable or absent row: undefined, nothing deleted. */
  removeQuarantined?(id: string): Promise<QuarantinedRow | undefined>;
  /**
   * Small named records kept beside the items, for components that must remember something across
   * restarts (the detector's incidents and backoff levels; each job's evacuation starts).
   * writeRecord: last writer wins; a record is not an item (version() does not move). Keys: 1..200
   * characters of [A-Za-z0-9._:-]. Optional: a store without them leaves such state in memory.
   */
  readRecord?(key: string): Promise<string | undefined>;
  writeRecord?(key: string, value: string): Promise<void>;
  /**
   * Compare-and-set of a record: writes `value` only if the stored text is still exactly `expected`
   * (undefined: no record), in one atomic step; false = another writer changed it, nothing written.
   * Two writers of one record (two sidecars of one job) re-read, merge and try again instead of one
   * losing the other's update. Comparing the text, not a version number, is enough for that: a
   * record changed and changed back holds what the caller merged against.
   */
  replaceRecord?(key: string, expected: string | undefined, value: string): Promise<boolean>;
  /** The keys of the records whose key starts with `prefix` (any order). */
  recordKeys?(prefix: string): Promise<string[]>;
  /**
   * Removes a record only if its text is still exactly `expected`, in one atomic step; false = it
   * changed (or is gone) meanwhile, nothing removed. Collecting the records of finished jobs this
   * way never removes one its job wrote again in between.
   */
  removeRecord?(key: string, expected: string): Promise<boolean>;
  /**
   * The local clock against the store's time, when the store has one (ZooKeeper) and has measured
   * it; undefined otherwise (SQLite shares nothing: its items are this sidecar's clock's alone).
   */
  clockSkew?(): ClockSkew | undefined;
  /** How long a remote store has been unreachable without a break (0 = it answers); /healthz uses it. */
  unreachableForMs?(): number;
  /** Optional push notification of changes (ZooKeeper watches); returns an unsubscribe. */
  watch?(onChange: () => void): () => void;
  close(): Promise<void>;
}
