/**
 * The largest batch (10,000 items, the documented maximum) is handled in slices with the event
 * loop free between them (src/api/slices.ts), so a liveness probe is answered while it runs. The
 * mechanism is tested, not the timing: how many event-loop turns the batch's handling gives up,
 * and that a /healthz sent after the batch is answered before it. The figure (/healthz p99 through
 * such a batch) is a bench row (bench/listing.ts).
 */
import { strict as assert } from 'node:assert';
import { buildApi } from '../../src/api/server';
import { SLICE_ITEMS, chunks, mapInSlices } from '../../src/api/slices';
import { WRITE_CHUNK } from '../../src/api/blocklist-service';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { AddRequest } from '../../src/model/decide';
import { MemoryStore } from '../../src/store/memory-store';
import { NoSync } from '../../src/sync/sync-port';

/** Counts event-loop turns (setImmediate callbacks) until stopped. */
function turnCounter(): { stop(): number } {
  let turns = 0;
  let on = true;
  const tick = (): void => {
    if (!on) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      on = false;
      return turns;
    },
  };
}

describe('api: a 10,000-item batch leaves the event loop free between slices', function () {
  this.timeout(30_000);

  it('mapInSlices: one slice for a small list; a new turn every SLICE_ITEMS items for a big one; results in order', async () => {
    const small = turnCounter();
    assert.deepEqual(await mapInSlices([1, 2, 3], (x) => x * 2), [2, 4, 6]);
    assert.equal(small.stop(), 0, 'a small list gives up no turn');
    const big = turnCounter();
    const xs = Array.from({ length: 10 * SLICE_ITEMS }, (_, i) => i);
    const out = await mapInSlices(xs, (x) => x + 1, { sliceMs: 1e9 });
    assert.ok(big.stop() >= 9, 'a turn between slices');
    assert.deepEqual(out, xs.map((x) => x + 1));
    assert.deepEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  });

  it('POST /blocklist of 10,000 items: validated, written in store chunks, and answered in slices; a /healthz sent meanwhile is answered first', async () => {
    const store = new MemoryStore();
    const writes: number[] = [];
    const addMany = store.addMany.bind(store);
    store.addMany = async (reqs: AddRequest[]) => {
      writes.push(reqs.length);
      return addMany(reqs);
    };
    const app = await buildApi({ store, sync: new NoSync(true), clock: new FakeClock(1_000_000), logger: silentLogger, audit: new MemoryAudit(), enabled: true, bodyLimit: 16 * 1024 * 1024 });
    try {
      const payload = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ id: `host-${String(i).padStart(5, '0')}.example`, action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'bulk import' })));
      const turns = turnCounter();
      const order: string[] = [];
      const batch = app.inject({ method: 'POST', url: '/blocklist', payload, headers: { 'content-type': 'application/json' } }).then((r) => {
        order.push('batch');
        return r;
      });
      // Sent once the batch is under way (its body parsed and its handling begun).
      await new Promise((r) => setImmediate(r));
      const health = app.inject({ method: 'GET', url: '/healthz' }).then((r) => {
        order.push('healthz');
        return r;
      });
      const [b, h] = await Promise.all([batch, health]);
      const spent = turns.stop();
      assert.equal(b.statusCode, 200);
      assert.equal((b.json() as { results: unknown[] }).results.length, 10_000);
      assert.equal(h.statusCode, 200);
      assert.deepEqual(order, ['healthz', 'batch'], 'the probe is not held behind the batch');
      assert.deepEqual(writes, Array(10_000 / WRITE_CHUNK).fill(WRITE_CHUNK), 'one store transaction per chunk');
      // Validation, stamping, audit and answers each give up a turn every SLICE_ITEMS items.
      assert.ok(spent >= (4 * 10_000) / 250, `${spent} turns`);
    } finally {
      await app.close();
    }
  });
});
