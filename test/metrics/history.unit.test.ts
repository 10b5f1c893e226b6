/** The console's chart: a bounded ring of samples taken on the injected clock. */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { History, HistoryRing, HistorySample } from '../../src/metrics/history';

const s = (blocked: number, evacuating = 0): HistorySample => ({ blocked, evacuating, deferred: 0, unapplied: 0 });

describe('metrics: the console’s history', () => {
  it('the ring keeps the last `capacity` samples, oldest first', () => {
    const ring = new HistoryRing(3);
    assert.deepEqual(ring.points(), []);
    for (let i = 1; i <= 5; i++) ring.add(i * 1000, s(i, i * 10));
    assert.deepEqual(
      ring.points().map((p) => [p.t, p.blocked, p.evacuating]),
      [
        [3000, 3, 30],
        [4000, 4, 40],
        [5000, 5, 50],
      ],
    );
    assert.throws(() => new HistoryRing(0), /positive integer/);
  });

  it('samples every interval on the clock, skips a sample that fails, and adds the live figures to a view', async () => {
    const clock = new FakeClock(1_000_000);
    let blocked = 0;
    let fail = false;
    const h = new History({ clock, intervalMs: 60_000, capacity: 360, sample: async () => (fail ? Promise.reject(new Error('store down')) : s(blocked)) });
    h.start();
    await new Promise((r) => setImmediate(r));
    for (const next of [1, 2, 3]) {
      blocked = next;
      fail = next === 2;
      clock.advance(60_000);
      await new Promise((r) => setImmediate(r));
    }
    blocked = 7;
    fail = false;
    const view = await h.view();
    assert.deepEqual(
      view.map((p) => [p.t - 1_000_000, p.blocked]),
      [
        [0, 0],
        [60_000, 1],
        [180_000, 3],
        [180_000, 7],
      ],
      'the start, two samples (the failed one skipped), then now',
    );
    h.close();
    clock.advance(600_000);
    await new Promise((r) => setImmediate(r));
    assert.equal((await h.view()).length, 4, 'no sample after close');
  });
});
