/**
 * Watches the store (desired state). The version is read on every pass and every poll tick; the
 * list only when the version moved, so an idle sidecar costs the store one small read per poll.
 *
 * An unreachable store is not an empty blocklist: the last good snapshot stays in the cache and
 * is enforced, and `degraded` says so (status and the `blocklist_store_degraded` gauge).
 */
import { BlockedItem } from '../model/item';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { Metrics } from '../metrics/metrics';
import { Cached, message } from './cache';

export interface Snapshot {
  items: readonly BlockedItem[];
  /** Lookups a reader builds once per snapshot and keeps with it (the API's index of the items by id). */
  readonly lookups: { byId?: Map<string, BlockedItem> };
  version: string;
}

export type StoreChange = 'store-change' | 'store-recovered';

export class StoreWatcher {
  readonly cache = new Cached<Snapshot>('the store', { kind: 'every-pass' });
  private degradedBy: string | undefined;

  constructor(private readonly deps: { store: BlocklistStore; logger: Logger; metrics: Metrics }) {}

  /** The store could not be read lately; the snapshot (if any) is what is enforced. */
  get degraded(): boolean {
    return this.degradedBy !== undefined;
  }

  get error(): string | undefined {
    return this.degradedBy;
  }

  /** Reads the store; never throws (a failure marks the watcher degraded and keeps the snapshot). */
  async refresh(now: number): Promise<void> {
    const { store, logger, metrics } = this.deps;
    try {
      // Version first, then list: a write in between makes the list newer than the version, and
      // the next poll re-reads; the other order could miss a change.
      const version = await store.version();
      if (this.cache.value?.version !== version) this.cache.set({ items: await store.list(), version, lookups: {} }, now);
      if (this.degraded) logger.info('store reachable again: enforcing its current contents');
      this.degradedBy = undefined;
      metrics.storeDegraded.set(0);
    } catch (e) {
      this.markDegraded(message(e));
    }
  }

  /** The poll's cheap question: did the version move, or did the store come back? */
  async changed(): Promise<StoreChange | undefined> {
    try {
      const v = await this.deps.store.version();
      if (this.degraded) return 'store-recovered';
      if (this.cache.value?.version !== v) return 'store-change';
    } catch (e) {
      this.markDegraded(message(e));
    }
    return undefined;
  }

  private markDegraded(error: string): void {
    const { logger, metrics } = this.deps;
    metrics.storeErrors.inc();
    if (!this.degraded) {
      const snap = this.cache.value;
      logger.warn(
        snap
          ? `store unreachable (${error}): keeping YARN's blacklist as the last good snapshot says (${snap.items.length} items)`
          : `store unreachable (${error}) and no snapshot yet: pushing nothing until it answers`,
      );
    }
    this.degradedBy = error;
    metrics.storeDegraded.set(1);
  }
}
