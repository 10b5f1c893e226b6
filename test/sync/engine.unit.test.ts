/**
 * The sync engine end to end, in-process over the simulator's cluster (rig.ts) and a store, with a
 * FakeClock: every timer the engine arms (poll, deadlines, retries) hangs off it.
 */
import { strict as assert } from 'node:assert';
import { EVACUATE } from '../../src/model/item';
import { mergeItems } from '../../src/model/merge';
import { APP, FlakyStore, nodeItem, tmItem } from './fakes';
import { Rig, RigOptions, T0, captureLogger, closeRigs, rig } from './rig';
import { ItemOpts } from './items';
import { itemTaskManagers } from '../../src/api/status-presenter';
import { decodeStarts, startOf, startsRecordKey } from '../../src/sync/evacuation-starts';
import { AmrmProxy } from '../../src/yarn/types';
import { SimCluster } from '../../src/sim/cluster';

afterEach(closeRigs);

describe('sync/engine: the blacklist follows the blocklist', () => {
  it('block → pushed at once on a kick (no clock advance); unblock → removal', async () => {
    const r = await rig();
    const h = r.host(1);
    await r.block(nodeItem(h));
    assert.deepEqual(r.blacklist(), [h]);
    assert.deepEqual(r.proxy.updates, [{ additions: [h], removals: [] }]);
    assert.equal(r.item(h)?.state, 'applied');
    await r.unblock(h);
    assert.deepEqual(r.blacklist(), []);
    assert.deepEqual(r.proxy.updates[1], { additions: [], removals: [h] });
    assert.ok(r.engine.synced());
  });

  it('a change by another writer is seen by the poll within one poll interval', async () => {
    const r = await rig();
    await r.store.put(nodeItem(r.host(2)));
    await r.step(999);
    assert.deepEqual(r.blacklist(), []);
    await r.step(1);
    assert.deepEqual(r.blacklist(), [r.host(2)]);
  });

  it('a merge that changes nothing, or changes only end/cause, pushes nothing', async () => {
    const r = await rig();
    const h = r.host(1);
    const first = nodeItem(h, { end: T0 + 60_000, cause: 'disk' });
    await r.block(first);
    const before = r.proxy.updates.length;
    const same = await r.store.add({ item: nodeItem(h, { end: T0 + 60_000, cause: 'disk' }), allowMerge: true });
    assert.equal(same.outcome, 'unchanged');
    r.engine.kick('merge');
    await r.engine.idle();
    const m = mergeItems(first, nodeItem(h, { end: T0 + 120_000, cause: 'nic' }));
    assert.equal(m.outcome, 'merged');
    await r.store.add({ item: nodeItem(h, { end: T0 + 120_000, cause: 'nic' }), allowMerge: true });
    r.engine.kick('merge');
    await r.engine.idle();
    await r.step(5000);
    assert.equal(r.proxy.updates.length, before);
  });

  it('add-then-remove before a push nets to nothing', async () => {
    const r = await rig();
    await r.store.put(nodeItem(r.host(3)));
    await r.store.remove(r.host(3));
    await r.step(3000);
    assert.deepEqual(r.proxy.updates, []);
  });

  it('an item with end E leaves YARN at E by the deadline timer, with no cron and no poll (C2)', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000 } });
    const [h1, h2, h3] = [r.host(1), r.host(2), r.host(3)];
    await r.block(nodeItem(h1, { end: T0 + 5000 }));
    await r.block(nodeItem(h2, { end: T0 + 5000 }));
    await r.block(nodeItem(h3));
    await r.step(4999);
    assert.deepEqual(r.blacklist(), [h1, h2, h3]);
    await r.step(1);
    assert.deepEqual(r.blacklist(), [h3]);
    // Both expiries at one instant: one update carrying both removals.
    assert.deepEqual(r.proxy.updates.at(-1), { additions: [], removals: [h1, h2] });
    // Still in the store: the cron job would delete it; effectiveness did not wait for it.
    assert.ok(await r.store.get(h1));
  });

  it('items scoped to another application are not pushed; task manager items never blacklist the node', async () => {
    const r = await rig();
    await r.block(nodeItem(r.host(1), { scope: 'application_1652313600000_0042' }));
    await r.block(nodeItem(r.host(2), { scope: APP }));
    const [c] = r.cluster.placeOn(r.host(3), 1);
    await r.block(tmItem(r.host(3), c));
    assert.deepEqual(r.blacklist(), [r.host(2)]);
    assert.equal(r.item(r.host(1))?.state, 'not-applicable');
    assert.equal(r.item(`${r.host(3)}/${c}`)?.state, 'not-applicable');
    assert.deepEqual(r.proxy.releaseCalls, []);
  });

  it('YARN entries nobody asked for are removed (the proxy is read, not trusted to be empty)', async () => {
    const r = await rig({ before: (cluster) => void cluster.updateBlacklist(['stale-from-old-attempt'], []) });
    await r.block(nodeItem(r.host(1)));
    assert.deepEqual(r.blacklist(), [r.host(1)]);
    assert.deepEqual(r.proxy.updates, [
      { additions: [], removals: ['stale-from-old-attempt'] },
      { additions: [r.host(1)], removals: [] },
    ]);
  });
});

describe('sync/engine: failures and restarts', () => {
  it('proxy down → retried with backoff, converges when it returns, the change is not dropped', async () => {
    const r = await rig();
    const h = r.host(1);
    r.yarn.faults.set('amrm', { outage: 'unavailable' });
    await r.block(nodeItem(h));
    assert.deepEqual(r.proxy.updates, []);
    assert.match(r.status().lastError ?? '', /503 simulated outage/);
    assert.equal(r.item(h)?.state, 'pending');
    await r.step(200); // retry 1 fails
    await r.step(400); // retry 2 fails
    r.yarn.faults.clear('amrm');
    await r.step(799);
    assert.deepEqual(r.blacklist(), []);
    await r.step(1); // retry 3 at +800 ms succeeds
    assert.deepEqual(r.blacklist(), [h]);
    assert.equal(r.status().lastError, undefined);
    assert.match(await r.metrics.text(), /blocklist_reconcile_passes_total\{result="failure"\} [1-9]/);
  });

  it('writes during an outage join the armed retry instead of each running a pass into the peer that is down', async () => {
    const r = await rig({ nodes: 40, settings: { maxBlockedFraction: 1 } });
    r.yarn.faults.set('amrm', { outage: 'unavailable' });
    await r.block(nodeItem(r.host(1)));
    const failures = async () => Number(/blocklist_reconcile_passes_total\{result="failure"\} (\d+)/.exec(await r.metrics.text())?.[1] ?? 0);
    assert.equal(await failures(), 1);
    for (let i = 2; i <= 21; i++) await r.block(nodeItem(r.host(i)));
    assert.equal(await failures(), 1, 'twenty writes, no pass before the retry is due');
    await r.step(200); // the retry: one pass for all of them, failing again
    assert.equal(await failures(), 2);
    r.yarn.faults.clear('amrm');
    await r.step(400); // the next retry succeeds and takes every write made meanwhile
    assert.equal(r.blacklist().length, 21);
    assert.equal(await failures(), 2);
    await r.block(nodeItem(r.host(22)));
    assert.equal(r.blacklist().length, 22, 'once synced, a write is pushed at once again');
  });

  it('a failed push is re-read and re-diffed: a change made during the outage is included', async () => {
    const r = await rig();
    await r.block(nodeItem(r.host(1)));
    r.yarn.faults.set('amrm', { outage: 'unavailable' });
    await r.unblock(r.host(1));
    await r.block(nodeItem(r.host(2)));
    r.yarn.faults.clear('amrm');
    await r.step(10_000);
    assert.deepEqual(r.blacklist(), [r.host(2)]);
  });

  it('a push whose answer was lost is re-read, not repeated blindly, and converges', async () => {
    const r = await rig();
    r.yarn.loseNextAnswer('updateBlacklist');
    await r.block(nodeItem(r.host(1)));
    assert.equal(r.item(r.host(1))?.state, 'pending');
    await r.step(200);
    assert.deepEqual(r.blacklist(), [r.host(1)]);
    assert.equal(r.item(r.host(1))?.state, 'applied');
    assert.equal(r.proxy.updates.length, 0, 'the lost one is not recorded; the re-read found nothing to send');
  });

  it('new attempt → everything re-pushed, even if the new client inherited the list', async () => {
    const r = await rig();
    const [h1, h2] = [r.host(1), r.host(2)];
    await r.block(nodeItem(h1));
    await r.block(nodeItem(h2));
    r.cluster.newAttempt('empty');
    assert.deepEqual(r.blacklist(), []);
    await r.step(1000);
    assert.deepEqual(r.blacklist(), [h1, h2]);
    r.cluster.newAttempt('inherit');
    const n = r.proxy.updates.length;
    await r.step(1000);
    assert.deepEqual(r.proxy.updates.slice(n), [{ additions: [h1, h2], removals: [] }]);
    assert.equal(r.status().appAttemptId, r.cluster.currentAttempt.id);
    assert.match(r.cluster.currentAttempt.id, /_000003$/);
  });

  it("store unreachable → YARN's blacklist left as it was, said in status and metrics; converges when back", async () => {
    const r = await rig();
    const [h1, h2] = [r.host(1), r.host(2)];
    await r.block(nodeItem(h1));
    await r.block(nodeItem(h2));
    r.store.down = true;
    r.engine.kick('test');
    await r.step(5000);
    assert.deepEqual(r.blacklist(), [h1, h2]);
    assert.equal(r.proxy.updates.length, 2);
    const s = r.status();
    assert.equal(s.storeDegraded, true);
    assert.match(s.lastError ?? '', /store unreachable/);
    const text = await r.metrics.text();
    assert.match(text, /blocklist_store_degraded 1/);
    assert.match(text, /blocklist_store_errors_total [1-9]/);
    r.store.down = false;
    await r.store.remove(h2);
    await r.step(1000);
    assert.deepEqual(r.blacklist(), [h1]);
    assert.equal(r.status().storeDegraded, false);
  });

  it('a store outage still lets items expire at their end (the snapshot is judged by time)', async () => {
    const r = await rig();
    await r.block(nodeItem(r.host(1), { end: T0 + 3000 }));
    r.store.down = true;
    await r.step(3000);
    assert.deepEqual(r.blacklist(), []);
  });

  it('no store and no snapshot at start → nothing pushed, nothing removed', async () => {
    const store = new FlakyStore();
    store.down = true;
    const r = await rig({ store, before: (cluster) => void cluster.updateBlacklist(['node7'], []) });
    await r.step(2000);
    assert.deepEqual(r.proxy.updates, []);
    assert.deepEqual(r.blacklist(), ['node7']);
    assert.equal(r.engine.synced(), false);
  });

  it('a restart reads the proxy again and pushes nothing when already in sync', async () => {
    const r = await rig();
    await r.block(nodeItem(r.host(1)));
    await r.restart();
    assert.equal(r.proxy.updates.length, 1);
  });
});

describe('sync/engine: what YARN has is re-read, never assumed', () => {
  it('a proxy that lost its list (a restarted proxy or AM) is repaired at the next poll', async () => {
    const r = await rig();
    const h = r.host(1);
    await r.block(nodeItem(h));
    r.cluster.setOwnerBlacklist('blocklist', []);
    await r.step(1000);
    assert.deepEqual(r.blacklist(), [h]);
    assert.equal(r.item(h)?.state, 'applied');
  });

  it('while the proxy cannot be read, status does not claim applied; when it answers again, it is checked and repaired', async () => {
    const r = await rig();
    const h = r.host(1);
    await r.block(nodeItem(h));
    r.yarn.faults.set('amrm', { outage: 'unavailable' });
    await r.step(1000);
    assert.equal(r.item(h)?.state, 'pending');
    r.cluster.setOwnerBlacklist('blocklist', []);
    r.yarn.faults.clear('amrm');
    await r.step(1000);
    assert.deepEqual(r.blacklist(), [h]);
    assert.equal(r.item(h)?.state, 'applied');
  });

  it('any failed pass forgets what YARN has: a pass that failed after the push re-reads before the next diff', async () => {
    const r = await rig();
    const h = r.host(1);
    r.cluster.placeOn(r.host(2), 1);
    await r.block(nodeItem(h));
    r.yarn.loseNextAnswer('release');
    await r.block(nodeItem(r.host(2), { action: EVACUATE, evacuationTimeout: 0 }));
    assert.match(r.status().lastError ?? '', /^release:/);
    assert.equal(r.engine.view().actual, undefined, 'unknown until read again');
    r.cluster.setOwnerBlacklist('blocklist', []);
    await r.step(200);
    assert.deepEqual(r.blacklist(), [h, r.host(2)]);
  });
});

describe('sync/engine: safety cap', () => {
  it('10 RUNNING nodes, cap 0.33, 5 blocks → 3 pushed, 2 deferred and shown; unblock one → the oldest deferred goes out', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.33 } });
    const h = (k: number) => r.host(k);
    for (let k = 1; k <= 5; k++) await r.block(nodeItem(h(k), { start: T0 + k }));
    assert.deepEqual(r.blacklist(), [h(1), h(2), h(3)]);
    assert.deepEqual(r.status().deferred, [h(4), h(5)]);
    assert.equal(r.item(h(4))?.state, 'deferred');
    assert.match(r.item(h(5))?.detail ?? '', /safety cap/);
    assert.match(await r.metrics.text(), /blocklist_deferred_items 2/);
    await r.unblock(h(2));
    assert.deepEqual(r.blacklist(), [h(1), h(3), h(4)]);
    assert.deepEqual(r.status().deferred, [h(5)]);
  });

  it('an RM that briefly reports fewer RUNNING nodes does not lift enforced blocks; a lasting shrink does, after the memory window', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.33, refreshIntervalMs: 1000, capNodeCountMemoryMs: 60_000 } });
    const h = (k: number) => r.host(k);
    for (let k = 1; k <= 3; k++) await r.block(nodeItem(h(k), { start: T0 + k }));
    assert.deepEqual(r.blacklist(), [h(1), h(2), h(3)]);
    // NodeManagers re-registering after an RM restart: 4 of 10 RUNNING for a while.
    for (let k = 5; k <= 10; k++) r.cluster.setNodeState(h(k), 'NEW');
    await r.step(2000);
    await r.step(2000);
    assert.deepEqual(r.blacklist(), [h(1), h(2), h(3)], 'a dip must not lift blocks');
    assert.deepEqual(r.status().deferred, []);
    // Still only 4 RUNNING after the window: the cap (floor(0.33 × 4) = 1) applies, oldest kept.
    await r.step(61_000);
    await r.step(2000);
    assert.deepEqual(r.blacklist(), [h(1)]);
    assert.deepEqual(r.status().deferred, [h(2), h(3)]);
  });
});

describe('sync/engine: evacuation', () => {
  /**
   * The arrange most evacuation tests share: a rig, `containers` task managers on host 1 and an
   * EVACUATE block of that host (its other fields from `item`). `placed`: the containers, sorted.
   */
  async function evacuating(o: { rig?: RigOptions; containers: number; item?: ItemOpts }): Promise<{ r: Rig; h: string; placed: string[] }> {
    const r = await rig(o.rig);
    const h = r.host(1);
    const placed = r.cluster.placeOn(h, o.containers).sort();
    await r.block(nodeItem(h, { action: EVACUATE, ...o.item }));
    return { r, h, placed };
  }

  /** This job's stored evacuation start of an item (its record in the store). */
  async function jobStart(r: Rig, id: string): Promise<number | undefined> {
    const item = await r.store.get(id);
    const text = await r.store.readRecord(startsRecordKey(r.cluster.applicationId));
    return item && startOf(decodeStarts(text).starts, item);
  }

  /** Nothing released for `ms` - 1 ms more, then one release call at exactly `ms` (a deadline is met to the millisecond). */
  async function releasedAfter(r: Rig, ms: number): Promise<void> {
    await r.step(ms - 1);
    assert.deepEqual(r.proxy.releaseCalls, [], `nothing released before ${ms} ms`);
    await r.step(1);
    assert.equal(r.proxy.releaseCalls.length, 1, `released at ${ms} ms`);
  }

  it('timeout 0 → every app container there released exactly once, replacements elsewhere, node READY', async () => {
    const r = await rig();
    const [h1, h2] = [r.host(1), r.host(2)];
    const ids = r.cluster.placeOn(h1, 3).sort();
    r.cluster.placeOn(h2, 2);
    await r.block(nodeItem(h1, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.proxy.releaseCalls, [ids]);
    assert.deepEqual(r.tmsOn(h1), []);
    r.cluster.allocate();
    assert.equal(r.cluster.taskManagerCount, 5);
    assert.deepEqual(r.tmsOn(h1), [], 'no replacement on the blacklisted node');
    await r.step(1000);
    const st = r.item(h1);
    assert.equal(st?.state, 'evacuated');
    assert.equal(st?.evacuation?.phase, 'READY');
    assert.deepEqual(st?.evacuation?.released, ids);
    await r.step(30_000);
    assert.equal(r.proxy.releaseCalls.length, 1);
    assert.deepEqual(r.cluster.counters.releaseUnknownIds, []);
    assert.match(await r.metrics.text(), /blocklist_containers_released_total 3/);
  });

  it('timeout T → WAIT_CONTAINER until T, then TIMEOUT and release at T by the deadline timer', async () => {
    const { r, h, placed: ids } = await evacuating({ rig: { settings: { pollIntervalMs: 3_600_000 } }, containers: 2, item: { evacuationTimeout: 60, start: T0 } });
    await r.step(59_999);
    const w = r.item(h);
    assert.equal(w?.evacuation?.phase, 'WAIT_CONTAINER');
    assert.equal(w?.evacuation?.remainingSeconds, 0);
    assert.deepEqual(w?.evacuation?.containers, ids);
    assert.deepEqual(r.proxy.releaseCalls, []);
    await r.step(1);
    assert.deepEqual(r.proxy.releaseCalls, [ids]);
  });

  it('WAIT_CONTAINER ends in READY without any release when the containers finish by themselves', async () => {
    const { r, h, placed: [id] } = await evacuating({ containers: 1, item: { evacuationTimeout: 600 } });
    r.cluster.killContainer(id);
    await r.step(1000);
    assert.equal(r.item(h)?.evacuation?.phase, 'READY');
    assert.deepEqual(r.proxy.releaseCalls, []);
  });

  it('a timeout changed mid-way does not restart the clock: 100 s → 50 s at 60 s releases at once', async () => {
    const { r, h } = await evacuating({ containers: 2, item: { evacuationTimeout: 100, start: T0 } });
    await r.step(60_000);
    assert.deepEqual(r.proxy.releaseCalls, []);
    await r.store.add({ item: { ...nodeItem(h, { action: EVACUATE, start: T0 + 60_000 }), evacuationTimeout: 50 }, allowMerge: true });
    assert.equal(await jobStart(r, h), T0);
    r.engine.kick('merge');
    await r.engine.idle();
    assert.equal(r.proxy.releaseCalls.length, 1);
  });

  it('a longer timeout set mid-way moves the deadline out, measured from the original start', async () => {
    const { r, h } = await evacuating({ rig: { settings: { pollIntervalMs: 3_600_000 } }, containers: 1, item: { evacuationTimeout: 30, start: T0 } });
    await r.step(20_000);
    await r.store.add({ item: { ...nodeItem(h, { action: EVACUATE, start: T0 + 20_000 }), evacuationTimeout: 90 }, allowMerge: true });
    r.engine.kick('merge');
    await r.engine.idle();
    await releasedAfter(r, 70_000);
  });

  it('a negative timeout waits forever', async () => {
    const { r, h } = await evacuating({ rig: { settings: { pollIntervalMs: 60_000 } }, containers: 2, item: { evacuationTimeout: -1 } });
    await r.step(48 * 3600_000);
    assert.deepEqual(r.proxy.releaseCalls, []);
    const e = r.item(h)?.evacuation;
    assert.equal(e?.phase, 'WAIT_CONTAINER');
    assert.equal(e?.remainingSeconds, -1);
  });

  it('the default timeout comes from config when the item has none', async () => {
    const { r } = await evacuating({ rig: { settings: { evacuationTimeoutMs: 10_000 } }, containers: 1, item: { start: T0 } });
    await releasedAfter(r, 10_000);
  });

  it('MARK_BLOCKED never releases anything', async () => {
    const r = await rig();
    const h = r.host(1);
    r.cluster.placeOn(h, 3);
    await r.block(nodeItem(h));
    await r.step(3600_000);
    assert.deepEqual(r.proxy.releaseCalls, []);
    assert.equal(r.tmsOn(h).length, 3);
    assert.deepEqual(r.engine.taskManagersOn(h), r.tmsOn(h));
  });

  it('a task manager item with EVACUATE releases that container only and does not blacklist the node', async () => {
    const r = await rig();
    const h = r.host(1);
    const [a, b] = r.cluster.placeOn(h, 2);
    await r.block(tmItem(h, a, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.proxy.releaseCalls, [[a]]);
    assert.deepEqual(r.blacklist(), []);
    assert.deepEqual(r.tmsOn(h), [b]);
  });

  it('taskManagers lists live containers only: a released one disappears at once, before the list is read again', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000, refreshIntervalMs: 3_600_000 } });
    const h = r.host(1);
    const [a, b] = r.cluster.placeOn(h, 2);
    await r.block(tmItem(h, a, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.proxy.releaseCalls, [[a]]);
    assert.deepEqual(r.engine.taskManagersOn(h), [b]);
    assert.deepEqual(itemTaskManagers(r.engine, tmItem(h, a)), []);
    assert.deepEqual(itemTaskManagers(r.engine, tmItem(h, b)), [b]);
  });

  it('the grace period counts from the moment the node is on YARN\'s blacklist: held back by the cap longer than its timeout, it still waits its full timeout once applied; the start is stored and survives a restart', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.1 } });
    const [h1, h2] = [r.host(1), r.host(2)];
    r.cluster.placeOn(h2, 2);
    await r.block(nodeItem(h1, { start: T0 }));
    await r.block(nodeItem(h2, { action: EVACUATE, evacuationTimeout: 60, start: T0 + 1 }));
    assert.equal(r.item(h2)?.state, 'deferred');
    await r.step(120_000);
    assert.deepEqual(r.proxy.releaseCalls, [], 'deferred: not started');
    assert.equal(await jobStart(r, h2), undefined);
    await r.unblock(h1);
    const applied = r.clock.now();
    assert.deepEqual(r.blacklist(), [h2]);
    assert.deepEqual(r.proxy.releaseCalls, [], 'not released the instant it is applied');
    assert.equal(await jobStart(r, h2), applied, "stored in the job's record");
    await r.step(30_000);
    await r.restart();
    await releasedAfter(r, 30_000);
  });

  it('releases in batches: one call per pass, release-batch-size at most', async () => {
    const { r } = await evacuating({ rig: { settings: { releaseBatchSize: 3 } }, containers: 7, item: { evacuationTimeout: 0 } });
    assert.deepEqual(
      r.proxy.releaseCalls.map((c) => c.length),
      [3, 3, 1],
    );
    assert.equal(new Set(r.cluster.counters.releasedContainerIds).size, 7);
  });

  it('proxy down during evacuation → retried; a release whose answer was lost is not repeated', async () => {
    const r = await rig();
    const h = r.host(1);
    r.cluster.placeOn(h, 2);
    r.yarn.loseNextAnswer('release');
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
    r.yarn.faults.set('amrm', { outage: 'unavailable' });
    await r.step(1000);
    r.yarn.faults.clear('amrm');
    await r.step(10_000);
    assert.equal(r.proxy.releaseCalls.length, 1);
    assert.equal(r.cluster.counters.releasedContainerIds.length, 2);
    assert.equal(r.item(h)?.evacuation?.phase, 'READY');
  });

  it('restart-safe: the deadline counts from the stored start, and nothing is released twice', async () => {
    const { r } = await evacuating({ containers: 2, item: { evacuationTimeout: 60, start: T0 } });
    await r.step(30_000);
    await r.restart();
    await releasedAfter(r, 30_000);
    await r.restart();
    await r.step(5000);
    assert.equal(r.proxy.releaseCalls.length, 1);
    assert.equal(r.cluster.counters.releasedContainerIds.length, 2);
  });

  /** A proxy that lists the AM's container beside the task managers (the contract lists task managers only; a proxy may list all). */
  const listingTheAm = (old: boolean) => (p: AmrmProxy, cluster: SimCluster): AmrmProxy => ({
    ...p,
    async attempt() {
      const a = await p.attempt();
      if (!old) return a;
      const { amContainerId: _named, ...rest } = a;
      return rest;
    },
    async containers() {
      const am = cluster.container(cluster.currentAttempt.amContainerId)!;
      return [...(await p.containers()), { containerId: am.id, nodeId: cluster.node(am.host)!.nodeId, host: am.host, state: 'RUNNING' }];
    },
  });

  for (const old of [false, true]) {
    it(`after a work-preserving RM restart a worker numbered …_000001 is evacuated and listed in taskManagers; the AM never (AM named by ${old ? "the RM's attempt report, the proxy being older" : 'the proxy'})`, async () => {
      const r = await rig({ proxy: listingTheAm(old) });
      const am = r.cluster.currentAttempt;
      const h = am.amHost;
      r.cluster.rmRestart();
      const [worker1, worker2] = r.cluster.placeOn(h, 2);
      assert.match(worker1, /^container_e01_\d+_0001_01_000001$/);
      assert.match(am.amContainerId, /_01_000001$/, 'the AM container has the same number');
      await r.block(nodeItem(h));
      assert.deepEqual(itemTaskManagers(r.engine, nodeItem(h)), [worker1, worker2].sort());
      await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
      assert.deepEqual(r.proxy.releaseCalls, [[worker1, worker2].sort()]);
      assert.ok(r.cluster.container(am.amContainerId), 'the AM still runs');
      assert.deepEqual(r.cluster.counters.releaseUnknownIds, []);
      await r.step(1000);
      assert.equal(r.item(h)?.evacuation?.phase, 'READY');
      assert.ok(r.cluster.container(am.amContainerId), 'the AM still runs');
    });
  }

  it('a grace period is a duration: a forward wall-clock step of +2 h releases nothing under a 30 min grace; it ends 30 min after the start by the monotonic clock (#31.6)', async () => {
    const { r, h, placed } = await evacuating({ containers: 2, item: { evacuationTimeout: 1800, start: T0 } });
    await r.step(60_000);
    r.clock.stepWall(2 * 3_600_000);
    await r.step(3_000);
    assert.deepEqual(r.proxy.releaseCalls, [], 'the wall clock jumped, the grace period did not');
    const st = r.item(h)?.evacuation;
    assert.equal(st?.phase, 'WAIT_CONTAINER');
    assert.equal(st?.remainingSeconds, 1800 - 63, 'the countdown is the monotonic one');
    await releasedAfter(r, 1800_000 - 63_000);
    assert.deepEqual(r.proxy.releaseCalls, [placed]);
  });

  it('a backward wall-clock step does not lengthen the grace period either', async () => {
    const { r } = await evacuating({ containers: 1, item: { evacuationTimeout: 600, start: T0 } });
    await r.step(100_000);
    r.clock.stepWall(-3_600_000);
    await releasedAfter(r, 500_000);
  });

  it('across a restart the time the sidecar was down counts by the wall clock (the stored start is wall-clock): restarted 10 min into a 30 min grace, it releases 20 min later', async () => {
    const { r } = await evacuating({ containers: 1, item: { evacuationTimeout: 1800, start: T0 } });
    await r.engine.stop();
    r.clock.stepWall(600_000);
    await r.restart();
    await releasedAfter(r, 1200_000);
  });

  it('logs one status line per evacuating item every status-log-interval, and each phase change once', async () => {
    const lines: string[] = [];
    const { r, h } = await evacuating({ rig: { logger: captureLogger(lines), settings: { statusLogIntervalMs: 20_000 } }, containers: 2, item: { evacuationTimeout: 100, start: T0 } });
    await r.step(40_000);
    const status = lines.filter((l) => l.includes(`evacuating ${h}`));
    assert.equal(status.length, 2);
    assert.match(status[1], /40s containers: 2 +WAIT_CONTAINER timeout:60s left/);
    assert.equal(lines.filter((l) => l.includes('start -> WAIT_CONTAINER')).length, 1);
    await r.step(60_000);
    assert.equal(lines.filter((l) => l.includes('WAIT_CONTAINER -> TIMEOUT')).length, 1);
    assert.ok(lines.some((l) => /released 2 container/.test(l)));
  });

  it('unblocking during WAIT_CONTAINER stops the evacuation (nothing released at the old deadline)', async () => {
    const { r, h } = await evacuating({ containers: 1, item: { evacuationTimeout: 60 } });
    await r.step(10_000);
    await r.unblock(h);
    await r.step(60_000);
    assert.deepEqual(r.proxy.releaseCalls, []);
    assert.deepEqual(r.status().evacuations, []);
  });
});

describe('sync/engine: metrics and status', () => {
  it('numBlockedNodes and friends are exported from the injected registry', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.2 } });
    r.engine.metrics.countFromStore({ store: r.store, clock: r.clock, applicationId: () => APP, enabled: true });
    for (let k = 1; k <= 3; k++) await r.block(nodeItem(r.host(k), { start: T0 + k }));
    const [c] = r.cluster.placeOn(r.host(9), 1);
    await r.block(tmItem(r.host(9), c));
    const text = await r.metrics.text();
    assert.match(text, /^numBlockedNodes 3$/m);
    assert.match(text, /^blocklist_blocked_taskmanagers 1$/m);
    assert.match(text, /^blocklist_deferred_items 1$/m);
    assert.match(text, /^blocklist_blacklist_pushes_total\{result="success"\} 2$/m);
    assert.match(text, /^blocklist_blacklist_push_duration_seconds_count 2$/m);
    assert.match(text, new RegExp(`^blocklist_last_successful_sync_timestamp_seconds ${T0 / 1000}$`, 'm'));
    const s = r.status();
    assert.equal(s.applicationId, APP);
    assert.deepEqual(s.blacklist, { desired: [r.host(1), r.host(2)], actual: [r.host(1), r.host(2)], owners: { blocklist: [r.host(1), r.host(2)] } });
  });

  it('numBlockedNodes is exact right after a write, before any pass (counted from the store at scrape time)', async () => {
    const r = await rig();
    r.metrics.countFromStore({ store: r.store, clock: r.clock, applicationId: () => APP, enabled: true });
    await r.store.put(nodeItem(r.host(1), { end: T0 + 1000 }));
    assert.match(await r.metrics.text(), /^numBlockedNodes 1$/m);
    r.clock.advance(1000);
    assert.match(await r.metrics.text(), /^numBlockedNodes 0$/m);
  });
});
