/**
 * A merge that changes nothing wakes nothing: no sync kick, no write, no merged audit line (the
 * API on a MemoryStore, through app.inject).
 */
import { strict as assert } from 'node:assert';
import { buildApi } from '../../src/api/server';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

class CountingSync extends NoSync {
  readonly kicks: string[] = [];
  override kick(reason?: string): void {
    this.kicks.push(reason ?? '');
  }
}

describe('merge rules: a merge that changes nothing kicks no sync pass', () => {
  it('create kicks, an unchanged merge does not, a real merge does', async () => {
    const store = new MemoryStore();
    const sync = new CountingSync();
    const clock = new FakeClock(1_000_000);
    const audit = new MemoryAudit();
    const app = await buildApi({ store, sync, clock, logger: silentLogger, audit, enabled: true });
    await app.ready();
    const put = async (cause: string) => {
      clock.advance(1000);
      const r = await app.inject({ method: 'PUT', url: '/blocklist/nodes/node1', payload: { action: 'MARK_BLOCKED', cause, allowMerge: true } });
      return { status: r.statusCode, body: r.json() as { cause: string; updatedAt: string } };
    };
    const first = await put('No space left on device, /data1 full');
    assert.equal(first.status, 201);
    assert.equal(sync.kicks.length, 1);
    const v = await store.version();
    const same = await put('/data1 full');
    assert.equal(same.status, 202);
    assert.deepEqual(same.body.updatedAt, first.body.updatedAt);
    assert.equal(sync.kicks.length, 1, 'no kick for a merge that changes nothing');
    assert.equal(await store.version(), v);
    const merged = await put('/data2 full');
    assert.equal(merged.status, 202);
    assert.equal(merged.body.cause, 'No space left on device, /data1 full,/data2 full');
    assert.equal(sync.kicks.length, 2);
    assert.deepEqual(audit.records.map((r) => r.outcome), ['created', 'unchanged', 'merged']);
    await app.close();
  });
});
