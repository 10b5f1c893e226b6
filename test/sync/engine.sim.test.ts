/**
 * The sync engine against the YARN simulator over real HTTP (RM REST client + AMRM proxy client),
 * the simulator started in-process on port 0 with no allocation ticker: each `heartbeat()` is one AM
 * allocate (the pending blacklist delta reaches the scheduler, missing containers are placed).
 * The engine's timers run on a FakeClock, so deadlines and expiries need no sleeping.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { BlockedItem, EVACUATE } from '../../src/model/item';
import { SyncEngine, SyncSettings } from '../../src/sync/engine';
import { createMetrics, Metrics } from '../../src/metrics/metrics';
import { RunningSimulator, SimulatorOptions, startSimulator } from '../../src/sim/server';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { FlakyStore, nodeItem, tmItem, TEST_SETTINGS } from './fakes';
import { RecordedProxy, recording } from './rig';
import { http } from '../support/sidecar';
import { ItemSyncStatus, SidecarStatus, itemSyncStatus, sidecarStatus } from '../../src/api/status-presenter';

const T0 = 1_652_313_600_000;

const SETTINGS: SyncSettings = TEST_SETTINGS;

interface SimRig {
  sim: RunningSimulator;
  clock: FakeClock;
  store: FlakyStore;
  engine: SyncEngine;
  metrics: Metrics;
  host(i: number): string;
  step(ms: number): Promise<void>;
  block(item: BlockedItem): Promise<void>;
  unblock(id: string): Promise<void>;
  /** One AM heartbeat: the blacklist delta reaches the scheduler, replacements are placed. */
  heartbeat(): void;
  tmsOn(host: string): string[];
  proxyBlacklist(): string[];
  item(id: string): ItemSyncStatus | undefined;
  status(): SidecarStatus;
  /** Every blacklist update the engine sent, in order. */
  proxy: RecordedProxy;
  /** A new engine on the same store and simulator (the sidecar restarted). */
  restart(): Promise<void>;
}

const open: SimRig[] = [];

async function simRig(o: { settings?: Partial<SyncSettings>; sim?: SimulatorOptions } = {}): Promise<SimRig> {
  const sim = await startSimulator({ port: 0, nodes: 10, containers: 20, tickMs: 0, seed: 5, ...o.sim });
  const clock = new FakeClock(T0);
  const store = new FlakyStore();
  const metrics = createMetrics();
  const rm = new ResourceManagerClient({ addresses: sim.url, timeoutMs: 2000 });
  const proxy = recording(new AmrmProxyClient({ address: sim.url, timeoutMs: 2000 }));
  const mk = () => new SyncEngine({ store, rm, proxy, clock, logger: silentLogger, settings: { ...SETTINGS, ...o.settings }, metrics });
  let engine = mk();
  const r: SimRig = {
    sim,
    clock,
    store,
    engine,
    metrics,
    host: (i) => sim.cluster.nodes[i - 1].host,
    async step(ms) {
      clock.advance(ms);
      await engine.idle();
    },
    async block(item) {
      await store.put(item);
      engine.kick('test block');
      await engine.idle();
    },
    async unblock(id) {
      await store.remove(id);
      engine.kick('test unblock');
      await engine.idle();
    },
    heartbeat: () => void sim.cluster.allocate(),
    tmsOn: (host) => sim.cluster.taskManagers().filter((c) => c.host === host).map((c) => c.id).sort(),
    proxyBlacklist: () => sim.cluster.clientBlacklistView(),
    proxy,
    async restart() {
      await engine.stop();
      engine = mk();
      r.engine = engine;
      await engine.start();
    },
    item: (id) => itemSyncStatus(engine.view(), id, clock.now()),
    status: () => sidecarStatus(engine.view(), clock.now()),
  };
  open.push(r);
  await engine.start();
  return r;
}

/** A node holding task managers and not the AM (so the tests never evacuate the AM's host). */
function busyHost(r: SimRig, skip: string[] = []): string {
  const am = r.sim.cluster.currentAttempt.amHost;
  const n = r.sim.cluster.nodes.find((x) => x.host !== am && !skip.includes(x.host) && r.tmsOn(x.host).length > 0);
  if (!n) throw new Error('no busy node');
  return n.host;
}

describe('sync/engine over HTTP against the YARN simulator', function () {
  this.timeout(20_000);

  afterEach(async () => {
    for (const r of open.splice(0)) {
      await r.engine.stop();
      await r.sim.close();
      await r.store.close();
    }
  });

  it('block → the blacklist has the host and no new container lands there; unblock → removal', async () => {
    const r = await simRig();
    const h = r.host(3);
    const before = r.tmsOn(h);
    await r.block(nodeItem(h));
    assert.deepEqual(r.proxyBlacklist(), [h]);
    r.heartbeat();
    assert.deepEqual(r.sim.cluster.schedulerBlacklistView(), [h]);
    r.sim.cluster.setTarget(60); // lots of new demand: every other node fills up, the blocked one gets nothing
    r.heartbeat();
    assert.ok(r.sim.cluster.taskManagerCount > 20);
    assert.deepEqual(r.tmsOn(h), before);
    assert.equal(r.item(h)?.state, 'applied');
    await r.unblock(h);
    assert.deepEqual(r.proxyBlacklist(), []);
    r.heartbeat();
    assert.deepEqual(r.sim.cluster.schedulerBlacklistView(), []);
    // With an item in force (only then: nothing blocked, nothing to show, nothing read), taskManagers is at most yarn.refresh-interval old.
    await r.block(nodeItem(r.host(5)));
    r.heartbeat();
    await r.step(SETTINGS.refreshIntervalMs);
    assert.deepEqual(r.engine.taskManagersOn(busyHost(r)), r.tmsOn(busyHost(r)));
  });

  it('a merge that changes nothing pushes nothing; add-then-remove before a push nets to nothing', async () => {
    const r = await simRig();
    const h = r.host(2);
    await r.store.put(nodeItem(r.host(4)));
    await r.store.remove(r.host(4));
    await r.step(2000);
    assert.equal(r.sim.cluster.counters.blacklistPosts, 0);
    await r.block(nodeItem(h, { cause: 'disk' }));
    assert.equal(r.sim.cluster.counters.blacklistPosts, 1);
    const o = await r.store.add({ item: nodeItem(h, { cause: 'disk' }), allowMerge: true });
    assert.equal(o.outcome, 'unchanged');
    await r.store.add({ item: nodeItem(h, { cause: 'nic', end: T0 + 3_600_000 }), allowMerge: true });
    r.engine.kick('merge');
    await r.step(3000);
    assert.equal(r.sim.cluster.counters.blacklistPosts, 1);
  });

  it('evacuate with timeout 0 → every app container there released exactly once, replacements elsewhere, node READY', async () => {
    const r = await simRig();
    const h = busyHost(r);
    const victims = r.tmsOn(h);
    assert.ok(victims.length > 0);
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual([...r.sim.cluster.counters.releasedContainerIds].sort(), victims);
    assert.equal(r.sim.cluster.counters.releaseCalls, 1);
    r.heartbeat();
    assert.equal(r.sim.cluster.taskManagerCount, 20);
    assert.deepEqual(r.tmsOn(h), []);
    await r.step(1000);
    const st = r.item(h);
    assert.equal(st?.state, 'evacuated');
    assert.equal(st?.evacuation?.phase, 'READY');
    assert.deepEqual(st?.evacuation?.released, victims);
    await r.step(20_000);
    assert.equal(r.sim.cluster.counters.releaseCalls, 1);
    assert.deepEqual(r.sim.cluster.counters.releaseUnknownIds, []);
  });

  it('evacuate with timeout T → WAIT_CONTAINER until T, then TIMEOUT and release', async () => {
    const r = await simRig();
    const h = busyHost(r);
    const victims = r.tmsOn(h);
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 30, start: T0 }));
    await r.step(29_999);
    const w = r.item(h);
    assert.equal(w?.state, 'evacuating');
    assert.equal(w?.evacuation?.phase, 'WAIT_CONTAINER');
    assert.deepEqual(w?.evacuation?.containers, victims);
    assert.equal(r.sim.cluster.counters.releaseCalls, 0);
    await r.step(1);
    assert.deepEqual([...r.sim.cluster.counters.releasedContainerIds].sort(), victims);
  });

  it('a timeout changed mid-way does not restart the clock; a negative one waits forever; MARK_BLOCKED never releases', async () => {
    const r = await simRig();
    const a = busyHost(r);
    const b = busyHost(r, [a]);
    const c = busyHost(r, [a, b]);
    const bBefore = r.tmsOn(b);
    const cBefore = r.tmsOn(c);
    await r.block(nodeItem(a, { action: EVACUATE, evacuationTimeout: 100, start: T0 }));
    await r.block(nodeItem(b, { action: EVACUATE, evacuationTimeout: -1, start: T0 }));
    await r.block(nodeItem(c, { start: T0 }));
    await r.step(60_000);
    assert.equal(r.sim.cluster.counters.releaseCalls, 0);
    await r.store.add({ item: { ...nodeItem(a, { action: EVACUATE, start: T0 + 60_000 }), evacuationTimeout: 50 }, allowMerge: true });
    r.engine.kick('merge');
    await r.engine.idle();
    assert.equal(r.sim.cluster.counters.releaseCalls, 1);
    assert.deepEqual(r.tmsOn(a), []);
    await r.step(3_600_000);
    assert.deepEqual(r.tmsOn(b), bBefore);
    assert.deepEqual(r.tmsOn(c), cBefore);
    assert.equal(r.sim.cluster.counters.releaseCalls, 1);
    assert.equal(r.item(b)?.evacuation?.remainingSeconds, -1);
  });

  it('an item with end E is removed from YARN at E even though the cron job never ran', async () => {
    const r = await simRig({ settings: { pollIntervalMs: 3_600_000 } });
    const h = r.host(5);
    await r.block(nodeItem(h, { end: T0 + 10_000 }));
    await r.step(9_999);
    assert.deepEqual(r.proxyBlacklist(), [h]);
    await r.step(1);
    assert.deepEqual(r.proxyBlacklist(), []);
    assert.ok(await r.store.get(h), 'still stored: only the cron job deletes it');
  });

  it('proxy down → changes retried and converge when it returns, no duplicate releases', async () => {
    const r = await simRig();
    const h = busyHost(r);
    const victims = r.tmsOn(h);
    r.sim.faults.set('amrm', { outage: 'unavailable' });
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
    await r.block(nodeItem(r.host(9)));
    await r.step(200);
    await r.step(400);
    assert.deepEqual(r.proxyBlacklist(), []);
    assert.match(r.status().lastError ?? '', /503|outage|unavailable/i);
    r.sim.faults.clear('amrm');
    await r.step(800);
    assert.deepEqual(r.proxyBlacklist(), [h, r.host(9)].sort());
    assert.deepEqual([...r.sim.cluster.counters.releasedContainerIds].sort(), victims);
    await r.step(10_000);
    assert.equal(r.sim.cluster.counters.releaseCalls, 1);
    assert.deepEqual(r.sim.cluster.counters.releaseUnknownIds, []);
  });

  it('RM errors half the time: still converges, releases stay unique', async () => {
    const r = await simRig();
    r.sim.faults.set('amrm', { errorRate: 0.5 });
    const h = busyHost(r);
    const victims = r.tmsOn(h);
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 0 }));
    for (let i = 0; i < 30 && r.item(h)?.evacuation?.phase !== 'READY'; i++) await r.step(5000);
    r.sim.faults.clear('amrm');
    await r.step(1000);
    assert.deepEqual(r.proxyBlacklist(), [h]);
    assert.deepEqual([...r.sim.cluster.counters.releasedContainerIds].sort(), victims);
    assert.deepEqual(r.sim.cluster.counters.releaseUnknownIds, []);
  });

  it('new attempt → everything re-pushed; a host unblocked across the restart is removed from the inherited scheduler list', async () => {
    const r = await simRig();
    await r.block(nodeItem(r.host(1)));
    await r.block(nodeItem(r.host(2)));
    r.heartbeat();
    r.sim.cluster.newAttempt('empty');
    assert.deepEqual(r.proxyBlacklist(), []);
    await r.step(1000);
    assert.deepEqual(r.proxyBlacklist(), [r.host(1), r.host(2)]);
    assert.equal(r.status().appAttemptId, r.sim.cluster.currentAttempt.id);

    r.heartbeat();
    r.sim.cluster.newAttempt('scheduler-only');
    await r.store.remove(r.host(2));
    await r.step(1000);
    r.heartbeat();
    assert.deepEqual(r.proxyBlacklist(), [r.host(1)]);
    assert.deepEqual(r.sim.cluster.schedulerBlacklistView(), [r.host(1)]);
  });

  it("store unreachable → YARN's blacklist left as it was", async () => {
    const r = await simRig();
    await r.block(nodeItem(r.host(1)));
    await r.block(nodeItem(r.host(2)));
    const posts = r.sim.cluster.counters.blacklistPosts;
    r.store.down = true;
    r.engine.kick('test');
    await r.step(10_000);
    assert.deepEqual(r.proxyBlacklist(), [r.host(1), r.host(2)]);
    assert.equal(r.sim.cluster.counters.blacklistPosts, posts);
    assert.equal(r.status().storeDegraded, true);
    assert.match(await r.metrics.text(), /blocklist_store_degraded 1/);
  });

  it('safety cap: 10 RUNNING nodes, cap 0.33, 5 blocks → 3 pushed, 2 deferred and shown; unblock one → the oldest deferred goes out', async () => {
    const r = await simRig({ settings: { maxBlockedFraction: 0.33 } });
    for (let k = 1; k <= 5; k++) await r.block(nodeItem(r.host(k), { start: T0 + k }));
    assert.deepEqual(r.proxyBlacklist(), [r.host(1), r.host(2), r.host(3)]);
    assert.deepEqual(r.status().deferred, [r.host(4), r.host(5)]);
    assert.equal(r.item(r.host(4))?.state, 'deferred');
    await r.unblock(r.host(1));
    assert.deepEqual(r.proxyBlacklist(), [r.host(2), r.host(3), r.host(4)]);
    assert.deepEqual(r.status().deferred, [r.host(5)]);
  });

  it("ownership: another owner's entries (set through the control API) survive block, unblock, full resync, restart and a new attempt", async () => {
    const r = await simRig({ settings: { fullResyncIntervalMs: 5000 }, sim: { newAttemptBlacklist: 'inherit' } });
    const [onlyTheirs, shared, ours] = [r.host(3), r.host(5), r.host(1)];
    const put = await http(r.sim.url, 'PUT', '/sim/v1/blacklist/owners/am', { hosts: [onlyTheirs, shared] });
    assert.equal(put.status, 200);
    const check = (step: string, own: string[]) => {
      assert.deepEqual(r.sim.cluster.ownersView().am, [onlyTheirs, shared], `${step}: the other owner's set is untouched`);
      assert.deepEqual(r.sim.cluster.ownersView().blocklist ?? [], own, `${step}: this sidecar's own set`);
      for (const h of [onlyTheirs, shared]) assert.ok(r.proxyBlacklist().includes(h), `${step}: ${h} stays on YARN's blacklist`);
      assert.ok(!r.proxy.updates.some((u) => u.removals.includes(onlyTheirs)), `${step}: never a removal of a host only another owner holds`);
    };
    await r.block(nodeItem(shared));
    await r.block(nodeItem(ours));
    check('block', [ours, shared].sort());
    await r.unblock(shared);
    check('unblock', [ours]);
    await r.step(5000);
    check('full resync', [ours]);
    await r.restart();
    await r.step(1000);
    check('restart', [ours]);
    r.sim.cluster.newAttempt();
    await r.step(1000);
    check('new attempt', [ours]);
    assert.equal(r.status().appAttemptId, r.sim.cluster.currentAttempt.id);
    assert.deepEqual(r.status().blacklist.owners?.am, [onlyTheirs, shared], 'status shows every owner');
  });

  it('a task manager item naming the wrong node releases nothing, and its sync state says where the container runs', async () => {
    const r = await simRig();
    const where = busyHost(r);
    const other = r.sim.cluster.nodes.map((n) => n.host).find((h) => h !== where) ?? '';
    const [cid] = r.tmsOn(where);
    const item = tmItem(other, cid, { action: EVACUATE, evacuationTimeout: 0 });
    await r.block(item);
    await r.step(1000);
    assert.equal(r.sim.cluster.counters.releaseCalls, 0);
    assert.ok(r.tmsOn(where).includes(cid), 'the task manager still runs');
    const st = r.item(item.id);
    assert.equal(st?.state, 'not-applicable');
    assert.match(st?.detail ?? '', new RegExp(`runs on ${where.replace(/\./g, '\\.')}, not on`));
    assert.equal(st?.evacuation?.runsOn, where);
  });

  it('an EVACUATE item held back by the safety cap starts its grace period when it is applied, not when it was created', async () => {
    const r = await simRig({ settings: { maxBlockedFraction: 0.1, pollIntervalMs: 3_600_000 } });
    const h = busyHost(r);
    const victims = r.tmsOn(h);
    const first = r.sim.cluster.nodes.map((n) => n.host).find((x) => x !== h) ?? '';
    await r.block(nodeItem(first, { start: T0 }));
    await r.block(nodeItem(h, { action: EVACUATE, evacuationTimeout: 30, start: T0 + 1, evacuationSince: null }));
    await r.step(60_000);
    await r.unblock(first);
    assert.deepEqual(r.proxyBlacklist(), [h]);
    assert.equal(r.sim.cluster.counters.releaseCalls, 0);
    await r.step(29_999);
    assert.equal(r.sim.cluster.counters.releaseCalls, 0);
    await r.step(1);
    assert.deepEqual([...r.sim.cluster.counters.releasedContainerIds].sort(), victims);
  });

  it("ownership across an AM restart whose scheduler keeps the old list ('scheduler-only'): another owner's hosts stay on YARN", async () => {
    const r = await simRig({ sim: { newAttemptBlacklist: 'scheduler-only' } });
    const [theirs, ours] = [r.host(3), r.host(1)];
    assert.equal((await http(r.sim.url, 'PUT', '/sim/v1/blacklist/owners/am', { hosts: [theirs] })).status, 200);
    await r.block(nodeItem(ours));
    r.heartbeat();
    assert.deepEqual(r.sim.cluster.schedulerBlacklistView(), [ours, theirs].sort());
    r.sim.cluster.newAttempt();
    await r.unblock(ours);
    await r.step(1000);
    r.heartbeat();
    assert.deepEqual(r.sim.cluster.schedulerBlacklistView(), [theirs], "the sidecar's own host is removed, the other owner's stays");
    assert.ok(!r.proxy.updates.some((u) => u.removals.includes(theirs)));
  });
});
