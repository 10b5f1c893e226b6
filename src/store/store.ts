/**
 * The blocklist store: the source of truth for *desired* state. One interface, two real
 * implementations (SQLite file, ZooKeeper ensemble). Everything is async and every write is a
 * compare-and-set at heart, so a ZooKeeper implementation can satisfy it with versioned setData.
 *
 * Contract every implementation keeps (test/store/conformance.ts checks both):
 *  - a resolved write is durable (fsync'd / quorum-acked) before the promise resolves;
 *  - add() is atomic: concurrent merges into one id lose nothing; concurrent non-merging adds of
 *    one id yield exactly one `created`;
 *  - version() moves on every write that changed something, so a poller can skip unchanged reads;
 *  - an existing item already expired at the new item's creation time (`item.created.at`) is
 *    replaced: add() answers `created` (expiry is inclusive and never waits for the cron job).
 */
import { BlockedItem } from '../model/item';

export type AddOutcome =
  | { outcome: 'created'; item: BlockedItem }
  | { outcome: 'merged'; item: BlockedItem; previous: BlockedItem; changed: boolean }
  | { outcome: 'conflict'; existing: BlockedItem; reason: string };

export interface AddRequest {
  /** A complete new item, as model/merge#newItem builds it. */
  item: BlockedItem;
  allowMerge: boolean;
}

/** Thrown for a store that cannot be reached or that refused a write (the API answers 503). */
export class StoreUnavailableError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

export interface BlocklistStore {
  /** A short name for logs and /status: "sqlite:/path" or "zookeeper:host:port/root". */
  readonly description: string;
  add(req: AddRequest): Promise<AddOutcome>;
  /** Adds several items, each with its own outcome, in order. */
  addMany(reqs: AddRequest[]): Promise<AddOutcome[]>;
  get(id: string): Promise<BlockedItem | undefined>;
  list(): Promise<BlockedItem[]>;
  /** Removes one item; returns what was removed, or undefined if absent. */
  remove(id: string): Promise<BlockedItem | undefined>;
  /**
   * Removes every item with endTimestamp <= now and returns the ones *this call* removed.
   * Safe when several sidecars expire at once: each item is reported removed by exactly one.
   */
  removeExpired(now: number): Promise<BlockedItem[]>;
  /** A marker that changes whenever the stored set changes. Cheap to read. */
  version(): Promise<string>;
  /** Optional push notification of changes (ZooKeeper watches); returns an unsubscribe. */
  watch?(onChange: () => void): () => void;
  close(): Promise<void>;
}
