import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { MemoryAudit } from '../../src/model/audit';
import { ExpiryJob } from '../../src/sync/expiry';
import { createMetrics } from '../../src/metrics/metrics';
import { FlakyStore, nodeItem } from './fakes';

const T0 = 1_652_313_600_000;

describe('sync/expiry: the cron job that tidies the store', () => {
  let store: FlakyStore;
  beforeEach(() => {
    store = new FlakyStore();
  });
  afterEach(async () => {
    await store.close();
  });

  it('deletes items with end <= now (inclusive), one audit line each; a second run removes nothing', async () => {
    const clock = new FakeClock(T0);
    const audit = new MemoryAudit();
    const metrics = createMetrics();
    const job = new ExpiryJob({ store, clock, logger: silentLogger, schedule: '', audit, metrics });
    await store.put(nodeItem('a', { end: T0 + 1000 }));
    await store.put(nodeItem('b', { end: T0 + 2000 }));
    await store.put(nodeItem('c'));
    clock.advance(1000);
    const o1 = await job.runOnce();
    assert.ok(o1.outcome === 'removed');
    assert.deepEqual(o1.items.map((i) => i.id), ['a']);
    assert.deepEqual(audit.records.map((r) => [r.op, r.id, r.outcome]), [['expire', 'a', 'removed']]);
    const o2 = await job.runOnce();
    assert.ok(o2.outcome === 'removed' && o2.items.length === 0);
    assert.equal(audit.records.length, 1);
    assert.deepEqual((await store.list()).map((i) => i.id).sort(), ['b', 'c']);
    assert.match(await metrics.text(), /blocklist_expired_items_total 1/);
  });

  it('two jobs on one store (two sidecars): each expiry is reported once', async () => {
    const clock = new FakeClock(T0);
    const a1 = new MemoryAudit();
    const a2 = new MemoryAudit();
    const j1 = new ExpiryJob({ store, clock, logger: silentLogger, schedule: '', audit: a1 });
    const j2 = new ExpiryJob({ store, clock, logger: silentLogger, schedule: '', audit: a2 });
    for (let i = 0; i < 20; i++) await store.put(nodeItem(`n${i}`, { end: T0 + 10 }));
    clock.advance(10);
    await Promise.all([j1.runOnce(), j2.runOnce()]);
    const ids = [...a1.records, ...a2.records].map((r) => r.id).sort();
    assert.equal(ids.length, 20);
    assert.equal(new Set(ids).size, 20);
  });

  it('a store outage is reported, not thrown; the next run catches up', async () => {
    const clock = new FakeClock(T0);
    const job = new ExpiryJob({ store, clock, logger: silentLogger, schedule: '' });
    await store.put(nodeItem('a', { end: T0 + 1 }));
    clock.advance(5);
    store.down = true;
    const o = await job.runOnce();
    assert.equal(o.outcome, 'failed');
    store.down = false;
    const o2 = await job.runOnce();
    assert.ok(o2.outcome === 'removed' && o2.items.length === 1);
  });

  it('start/stop schedule and cancel the node-cron task', async () => {
    const job = new ExpiryJob({ store, clock: new FakeClock(T0), logger: silentLogger, schedule: '*/10 * * * * *' });
    job.start();
    job.start();
    await job.stop();
    await job.stop();
  });
});
