import { SyncSettings } from '../../src/sync/engine';
/**
 * Test helpers of the sync engine: a store that can be made unreachable, item builders and test
 * settings. YARN is the simulator's cluster (rig.ts serves it in-process; engine.sim.test.ts over
 * HTTP), never a second model here.
 */
import { BlockedItem } from '../../src/model/item';
import { AddOutcome, AddRequest, BlocklistStore, StoreUnavailableError } from '../../src/store/store';
import { MemoryStore } from '../../src/store/memory-store';

export { APP, attemptOf, containerOf, nodeItem, tmItem } from './items';
export type { ItemOpts } from './items';

/** The in-memory store behind a switch: while `down`, every call throws StoreUnavailableError. No watch(), so changes by "another writer" are seen by the poll. */
export class FlakyStore implements BlocklistStore {
  down = false;
  readonly inner = new MemoryStore();
  readonly description = 'flaky:memory';

  private check(): void {
    if (this.down) throw new StoreUnavailableError('store is down (test)');
  }
  async add(req: AddRequest): Promise<AddOutcome> {
    this.check();
    return this.inner.add(req);
  }
  async addMany(reqs: AddRequest[]): Promise<AddOutcome[]> {
    this.check();
    return this.inner.addMany(reqs);
  }
  async get(id: string): Promise<BlockedItem | undefined> {
    this.check();
    return this.inner.get(id);
  }
  async list(): Promise<readonly BlockedItem[]> {
    this.check();
    return this.inner.list();
  }
  async remove(id: string): Promise<BlockedItem | undefined> {
    this.check();
    return this.inner.remove(id);
  }
  async removeExpired(now: number): Promise<BlockedItem[]> {
    this.check();
    return this.inner.removeExpired(now);
  }
  async version(): Promise<string> {
    this.check();
    return this.inner.version();
  }
  async readRecord(key: string): Promise<string | undefined> {
    this.check();
    return this.inner.readRecord(key);
  }
  async writeRecord(key: string, value: string): Promise<void> {
    this.check();
    return this.inner.writeRecord(key, value);
  }
  async replaceRecord(key: string, expected: string | undefined, value: string): Promise<boolean> {
    this.check();
    return this.inner.replaceRecord(key, expected, value);
  }
  /** Writes (or replaces) an item as-is. */
  async put(item: BlockedItem): Promise<void> {
    await this.inner.remove(item.id);
    const o = await this.inner.add({ item, allowMerge: false });
    if (o.outcome !== 'created') throw new Error(`put ${item.id}: ${o.outcome}`);
  }
  async close(): Promise<void> {
    await this.inner.close();
  }
}

/** Engine settings for tests: exact timing (no jitter), defaults otherwise. */
export const TEST_SETTINGS: SyncSettings = {
  pollIntervalMs: 1000,
  maxBlockedFraction: 1,
  evacuationTimeoutMs: 0,
  releaseBatchSize: 500,
  refreshIntervalMs: 10_000,
  statusLogIntervalMs: 20_000,
  fullResyncIntervalMs: 300_000,
  initialBackoffMs: 200,
  maxBackoffMs: 5_000,
  backoffJitter: 0,
};
