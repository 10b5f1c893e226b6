/**
 * list() of the SQLite store: the items decoded at a store version (item-cache.ts), handed out
 * again while the version has not moved, kept current by the store's own committed writes
 * (afterWrite); rows that cannot be decoded are quarantined. Errors are the caller's to wrap.
 */
import Database from 'better-sqlite3';
import { BlockedItem } from '../../model/item';
import { CorruptItemError, decodeStored } from '../codec';
import { Quarantine, QuarantinedRow, quarantinedRow } from '../quarantine';
import { ItemCache } from '../item-cache';
import { Versions } from './writes';
import { ThreadWriter } from './writer';

/**
 * How long list() waits for the write thread's answers before it reads the rows itself: a group
 * commit's fsync takes milliseconds, a lock held by another process up to busy_timeout.
 */
const SETTLE_WAIT_MS = 100;

/** Whether `p` (which never rejects) resolved within `ms`. */
function within(p: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

export class ItemListing {
  /** The last list() and the store version it was read at. */
  private cache: ItemCache | undefined;
  private readonly stmts: {
    list: Database.Statement<[], { id: string; data: string }>;
    version: Database.Statement<[], { value: number }>;
  };

  constructor(
    private readonly db: Database.Database,
    private readonly thread: ThreadWriter | undefined,
    private readonly quarantine: Quarantine,
  ) {
    this.stmts = {
      list: db.prepare('SELECT id, data FROM items ORDER BY id'),
      version: db.prepare("SELECT value FROM meta WHERE key = 'version'"),
    };
  }

  currentVersion(): number {
    return this.stmts.version.get()?.value ?? 0;
  }

  /**
   * Keeps the list cache current after a committed write of ours. Applied when the cache reflects
   * the version the write started from; skipped when the cache already includes it (a full read
   * that ran after the commit, while its answer was on the way back from the write thread);
   * otherwise another process wrote in between and the next list() reads everything again.
   */
  afterWrite([before, after]: Versions, apply: (cache: ItemCache) => void): void {
    const cache = this.cache;
    if (before === after || !cache) return;
    if (after <= cache.version) return;
    if (cache.version !== before) {
      this.cache = undefined;
      return;
    }
    apply(cache);
    cache.version = after;
  }

  async list(): Promise<readonly BlockedItem[]> {
    if (this.cache && this.thread?.inFlight) {
      // The write thread may have committed a write whose answer (and so its change to the
      // cache) is still on the way: wait for the writes posted so far instead of decoding every
      // row again. Another process's write shows as a version the cache still lacks after that.
      // Bounded: the write may be queued behind another process's lock (the CLI's transaction,
      // up to busy_timeout), and a read need not wait for that (WAL); past the bound the rows
      // are read below. Unbounded, GET /blocklist and the sync pass waited out the whole lock.
      const version = this.currentVersion();
      if (version !== this.cache.version) {
        const settled = await within(this.thread.settled(), SETTLE_WAIT_MS);
        if (settled && this.cache && this.cache.version >= version) return this.cache.snapshot();
      }
    }
    // One read transaction, so the version and the rows are the same snapshot. An unchanged
    // version means unchanged rows: hand out the items decoded last time instead of decoding
    // every row again (for 10,000 items decoding cost as much as serialising GET /blocklist,
    // docs/benchmarks.md). Callers share the item objects and never mutate them.
    return this.db.transaction(() => {
      const version = this.currentVersion();
      if (this.cache?.version !== version) {
        // Row by row (iterate, not all()): 100,000 rows' raw JSON is never held at once beside
        // the decoded items, which keeps the sidecar's peak, and so its RSS, lower.
        const items: BlockedItem[] = [];
        const bad: QuarantinedRow[] = [];
        for (const r of this.stmts.list.iterate()) {
          try {
            items.push(decodeStored(r.id, r.data));
          } catch (e) {
            if (!(e instanceof CorruptItemError)) throw e;
            bad.push(quarantinedRow(e, r.id));
          }
        }
        this.quarantine.replace(bad);
        this.cache = new ItemCache(version, items);
      }
      return this.cache.snapshot();
    })();
  }
}
