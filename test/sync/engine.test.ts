/**
 * The sync engine end to end over in-memory fakes of YARN (fakes.ts) and a real SQLite store, with
 * a FakeClock: every timer the engine arms (poll, deadlines, retries) hangs off it.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { Writable } from 'node:stream';
import winston from 'winston';
import { Logger, silentLogger } from '../../src/core/logger';
import { EVACUATE, BlockedItem } from '../../src/model/item';
import { mergeItems } from '../../src/model/merge';
import { SyncEngine, SyncSettings } from '../../src/sync/engine';
import { createMetrics, Metrics } from '../../src/metrics/metrics';
import { APP, FakeYarn, FlakyStore, nodeItem, tmItem, TEST_SETTINGS } from './fakes';

const T0 = 1_652_313_600_000;

const SETTINGS: SyncSettings = TEST_SETTINGS;

interface Rig {
  clock: FakeClock;
  yarn: FakeYarn;
  store: FlakyStore;
  engine: SyncEngine;
  metrics: Metrics;
  /** Moves the fake time and waits until every pass it caused has finished. */
  step(ms: number): Promise<void>;
  /** Writes an item through the store and kicks, as the REST API does. */
  block(item: BlockedItem): Promise<void>;
  unblock(id: string): Promise<void>;
  restart(): Promise<SyncEngine>;
}

const rigs: Rig[] = [];

/** A logger whose messages land in `lines`. */
function captureLogger(lines: string[]): Logger {
  const stream = new Writable({
    objectMode: true,
    write(info: { level: string; message: string }, _enc, cb) {
      lines.push(`${info.level} ${info.message}`);
      cb();
    },
  });
  return winston.createLogger({ level: 'debug', transports: [new winston.transports.Stream({ stream })] });
}

async function rig(o: { settings?: Partial<SyncSettings>; hosts?: number; start?: boolean; yarn?: FakeYarn; store?: FlakyStore; clock?: FakeClock; logger?: Logger } = {}): Promise<Rig> {
  const clock = o.clock ?? new FakeClock(T0);
  const yarn = o.yarn ?? new FakeYarn(o.hosts ?? 10);
  const store = o.store ?? new FlakyStore();
  const metrics = createMetrics();
  const mk = () => new SyncEngine({ store, rm: yarn, proxy: yarn, clock, logger: silentLogger, settings: { ...SETTINGS, ...o.settings }, metrics: createMetrics(), applicationId: APP });
  const r: Rig = {
    clock,
    yarn,
    store,
    metrics,
    engine: new SyncEngine({ store, rm: yarn, proxy: yarn, clock, logger: o.logger ?? silentLogger, settings: { ...SETTINGS, ...o.settings }, metrics, applicationId: APP }),
    async step(ms) {
      clock.advance(ms);
      await r.engine.idle();
    },
    async block(item) {
      await store.put(item);
      r.engine.kick('test block');
      await r.engine.idle();
    },
    async unblock(id) {
      await store.remove(id);
      r.engine.kick('test unblock');
      await r.engine.idle();
    },
    async restart() {
      await r.engine.stop();
      r.engine = mk();
      await r.engine.start();
      return r.engine;
    },
  };
  rigs.push(r);
  if (o.start !== false) await r.engine.start();
  return r;
}

afterEach(async () => {
  for (const r of rigs.splice(0)) {
    await r.engine.stop();
    await r.store.close();
  }
});

describe('sync/engine: the blacklist follows the blocklist', () => {
  it('block → pushed at once on a kick (no clock advance); unblock → removal', async () => {
    const r = await rig();
    await r.block(nodeItem('node1'));
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1']);
    assert.deepEqual(r.yarn.updates, [{ additions: ['node1'], removals: [] }]);
    assert.equal(r.engine.itemStatus('node1')?.state, 'applied');
    await r.unblock('node1');
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
    assert.deepEqual(r.yarn.updates[1], { additions: [], removals: ['node1'] });
    assert.ok(r.engine.synced());
  });

  it('a change by another writer is seen by the poll within one poll interval', async () => {
    const r = await rig();
    await r.store.put(nodeItem('node2'));
    await r.step(999);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
    await r.step(1);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node2']);
  });

  it('a merge that changes nothing, or changes only end/cause, pushes nothing (C3.30)', async () => {
    const r = await rig();
    const first = nodeItem('node1', { end: T0 + 60_000, cause: 'disk' });
    await r.block(first);
    const before = r.yarn.updates.length;
    const same = await r.store.add({ item: nodeItem('node1', { end: T0 + 60_000, cause: 'disk' }), allowMerge: true });
    assert.equal(same.outcome, 'unchanged');
    r.engine.kick('merge');
    await r.engine.idle();
    const m = mergeItems(first, nodeItem('node1', { end: T0 + 120_000, cause: 'nic' }));
    assert.equal(m.outcome, 'merged');
    await r.store.add({ item: nodeItem('node1', { end: T0 + 120_000, cause: 'nic' }), allowMerge: true });
    r.engine.kick('merge');
    await r.engine.idle();
    await r.step(5000);
    assert.equal(r.yarn.updates.length, before);
  });

  it('add-then-remove before a push nets to nothing (C3.31)', async () => {
    const r = await rig();
    await r.store.put(nodeItem('node3'));
    await r.store.remove('node3');
    await r.step(3000);
    assert.deepEqual(r.yarn.updates, []);
  });

  it('an item with end E leaves YARN at E by the deadline timer, with no cron and no poll (C2)', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000 } });
    await r.block(nodeItem('node1', { end: T0 + 5000 }));
    await r.block(nodeItem('node2', { end: T0 + 5000 }));
    await r.block(nodeItem('node3'));
    await r.step(4999);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2', 'node3']);
    await r.step(1);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node3']);
    // Both expiries at one instant: one update carrying both removals (C2.23).
    assert.deepEqual(r.yarn.updates.at(-1), { additions: [], removals: ['node1', 'node2'] });
    // Still in the store: the cron job would delete it; effectiveness did not wait for it.
    assert.ok(await r.store.get('node1'));
  });

  it('items scoped to another application are not pushed; task manager items never blacklist the node', async () => {
    const r = await rig();
    await r.block(nodeItem('node1', { scope: 'application_1652313600000_0042' }));
    await r.block(nodeItem('node2', { scope: APP }));
    const [c] = r.yarn.addContainers('node3', 1);
    await r.block(tmItem('node3', c));
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node2']);
    assert.equal(r.engine.itemStatus('node1')?.state, 'not-applicable');
    assert.equal(r.engine.itemStatus(`node3/${c}`)?.state, 'not-applicable');
    assert.deepEqual(r.yarn.releaseCalls, []);
  });

  it('YARN entries nobody asked for are removed (the proxy is read, not trusted to be empty)', async () => {
    const yarn = new FakeYarn(10);
    yarn.blacklistSet.add('stale-from-old-attempt');
    const r = await rig({ yarn });
    await r.block(nodeItem('node1'));
    assert.deepEqual((await yarn.blacklist()).blacklist, ['node1']);
    assert.deepEqual(yarn.updates, [
      { additions: [], removals: ['stale-from-old-attempt'] },
      { additions: ['node1'], removals: [] },
    ]);
  });
});

describe('sync/engine: failures and restarts', () => {
  it('proxy down → retried with backoff, converges when it returns, the change is not dropped (C3.32)', async () => {
    const r = await rig();
    r.yarn.proxyDown = true;
    await r.block(nodeItem('node1'));
    assert.deepEqual(r.yarn.updates, []);
    assert.match(r.engine.status().lastError ?? '', /ECONNREFUSED/);
    assert.equal(r.engine.itemStatus('node1')?.state, 'pending');
    await r.step(200); // retry 1 fails
    await r.step(400); // retry 2 fails
    r.yarn.proxyDown = false;
    await r.step(799);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
    await r.step(1); // retry 3 at +800 ms succeeds
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1']);
    assert.equal(r.engine.status().lastError, undefined);
    const text = await r.metrics.text();
    assert.match(text, /blocklist_reconcile_passes_total\{result="failure"\} [1-9]/);
  });

  it('a failed push is re-read and re-diffed: a change made during the outage is included', async () => {
    const r = await rig();
    await r.block(nodeItem('node1'));
    r.yarn.proxyDown = true;
    await r.unblock('node1');
    await r.block(nodeItem('node2'));
    r.yarn.proxyDown = false;
    await r.step(10_000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node2']);
  });

  it('new attempt → everything re-pushed, even if the new client inherited the list (C3.33)', async () => {
    const r = await rig();
    await r.block(nodeItem('node1'));
    await r.block(nodeItem('node2'));
    r.yarn.newAttempt(false);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
    await r.step(1000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2']);
    r.yarn.newAttempt(true);
    const n = r.yarn.updates.length;
    await r.step(1000);
    assert.deepEqual(r.yarn.updates.slice(n), [{ additions: ['node1', 'node2'], removals: [] }]);
    assert.equal(r.engine.status().appAttemptId, 'appattempt_1652313600000_0001_000003');
  });

  it("store unreachable → YARN's blacklist left as it was, said in status and metrics; converges when back", async () => {
    const r = await rig();
    await r.block(nodeItem('node1'));
    await r.block(nodeItem('node2'));
    r.store.down = true;
    r.engine.kick('test');
    await r.step(5000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2']);
    assert.equal(r.yarn.updates.length, 2);
    const s = r.engine.status();
    assert.equal(s.storeDegraded, true);
    assert.match(s.lastError ?? '', /store unreachable/);
    const text = await r.metrics.text();
    assert.match(text, /blocklist_store_degraded 1/);
    assert.match(text, /blocklist_store_errors_total [1-9]/);
    r.store.down = false;
    await r.store.remove('node2');
    await r.step(1000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1']);
    assert.equal(r.engine.status().storeDegraded, false);
  });

  it('a store outage still lets items expire at their end (the snapshot is judged by time)', async () => {
    const r = await rig();
    await r.block(nodeItem('node1', { end: T0 + 3000 }));
    r.store.down = true;
    await r.step(3000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
  });

  it('no store and no snapshot at start → nothing pushed, nothing removed', async () => {
    const yarn = new FakeYarn(10);
    yarn.blacklistSet.add('node7');
    const store = new FlakyStore();
    store.down = true;
    const r = await rig({ yarn, store });
    await r.step(2000);
    assert.deepEqual(yarn.updates, []);
    assert.equal(r.engine.synced(), false);
  });

  it('a restart reads the proxy again and pushes nothing when already in sync', async () => {
    const r = await rig();
    await r.block(nodeItem('node1'));
    await r.restart();
    assert.equal(r.yarn.updates.length, 1);
  });
});

describe('sync/engine: safety cap', () => {
  it('10 RUNNING nodes, cap 0.33, 5 blocks → 3 pushed, 2 deferred and shown; unblock one → the oldest deferred goes out', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.33 } });
    for (let k = 1; k <= 5; k++) await r.block(nodeItem(`node${k}`, { start: T0 + k }));
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2', 'node3']);
    const s = r.engine.status();
    assert.deepEqual(s.deferred, ['node4', 'node5']);
    assert.equal(r.engine.itemStatus('node4')?.state, 'deferred');
    assert.match(r.engine.itemStatus('node5')?.detail ?? '', /safety cap/);
    assert.match(await r.metrics.text(), /blocklist_deferred_items 2/);
    await r.unblock('node2');
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node3', 'node4']);
    assert.deepEqual(r.engine.status().deferred, ['node5']);
  });
});

describe('sync/engine: safety cap under a dipping node list', () => {
  it('an RM that briefly reports fewer RUNNING nodes does not lift enforced blocks; a lasting shrink does, after the memory window', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.33, refreshIntervalMs: 1000, capNodeCountMemoryMs: 60_000 } });
    for (let k = 1; k <= 3; k++) await r.block(nodeItem(`node${k}`, { start: T0 + k }));
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2', 'node3']);
    // NodeManagers re-registering after an RM restart: 4 of 10 RUNNING for a while.
    for (let k = 5; k <= 10; k++) r.yarn.nodeStates.set(`node${k}`, 'NEW');
    await r.step(2000);
    await r.step(2000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1', 'node2', 'node3'], 'a dip must not lift blocks');
    assert.deepEqual(r.engine.status().deferred, []);
    // Still only 4 RUNNING after the window: the cap (floor(0.33 × 4) = 1) applies, oldest kept.
    await r.step(61_000);
    await r.step(2000);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, ['node1']);
    assert.deepEqual(r.engine.status().deferred, ['node2', 'node3']);
  });
});

describe('sync/engine: evacuation', () => {
  it('timeout 0 → every app container there released exactly once, replacements elsewhere, node READY', async () => {
    const r = await rig();
    const ids = r.yarn.addContainers('node1', 3);
    r.yarn.addContainers('node2', 2);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.yarn.releaseCalls, [ids.sort()]);
    assert.deepEqual(r.yarn.containersOn('node1'), []);
    assert.equal(r.yarn.live.size, 5);
    await r.step(1000);
    const st = r.engine.itemStatus('node1');
    assert.equal(st?.state, 'evacuated');
    assert.equal(st?.evacuation?.phase, 'READY');
    assert.deepEqual(st?.evacuation?.released, ids.sort());
    await r.step(30_000);
    assert.equal(r.yarn.releaseCalls.length, 1);
    assert.equal(new Set(r.yarn.releasedIds).size, r.yarn.releasedIds.length);
    assert.match(await r.metrics.text(), /blocklist_containers_released_total 3/);
  });

  it('timeout T → WAIT_CONTAINER until T, then TIMEOUT and release at T by the deadline timer', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000 } });
    const ids = r.yarn.addContainers('node1', 2);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 60, start: T0 }));
    await r.step(59_999);
    const w = r.engine.itemStatus('node1');
    assert.equal(w?.evacuation?.phase, 'WAIT_CONTAINER');
    assert.equal(w?.evacuation?.remainingSeconds, 0);
    assert.deepEqual(w?.evacuation?.containers, ids.sort());
    assert.deepEqual(r.yarn.releaseCalls, []);
    await r.step(1);
    assert.deepEqual(r.yarn.releaseCalls, [ids.sort()]);
  });

  it('WAIT_CONTAINER ends in READY without any release when the containers finish by themselves', async () => {
    const r = await rig();
    const [id] = r.yarn.addContainers('node1', 1);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 600 }));
    r.yarn.live.delete(id);
    await r.step(1000);
    assert.equal(r.engine.itemStatus('node1')?.evacuation?.phase, 'READY');
    assert.deepEqual(r.yarn.releaseCalls, []);
  });

  it('a timeout changed mid-way does not restart the clock: 100 s → 50 s at 60 s releases at once (C5.43)', async () => {
    const r = await rig();
    r.yarn.addContainers('node1', 2);
    const it = nodeItem('node1', { action: EVACUATE, evacuationTimeout: 100, start: T0 });
    await r.block(it);
    await r.step(60_000);
    assert.deepEqual(r.yarn.releaseCalls, []);
    await r.store.add({ item: { ...nodeItem('node1', { action: EVACUATE, start: T0 + 60_000 }), evacuationTimeout: 50 }, allowMerge: true });
    const stored = await r.store.get('node1');
    assert.equal(stored?.evacuationSince, T0);
    r.engine.kick('merge');
    await r.engine.idle();
    assert.equal(r.yarn.releaseCalls.length, 1);
  });

  it('a longer timeout set mid-way moves the deadline out, measured from the original start', async () => {
    const r = await rig({ settings: { pollIntervalMs: 3_600_000 } });
    r.yarn.addContainers('node1', 1);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 30, start: T0 }));
    await r.step(20_000);
    await r.store.add({ item: { ...nodeItem('node1', { action: EVACUATE, start: T0 + 20_000 }), evacuationTimeout: 90 }, allowMerge: true });
    r.engine.kick('merge');
    await r.engine.idle();
    await r.step(69_999);
    assert.deepEqual(r.yarn.releaseCalls, []);
    await r.step(1);
    assert.equal(r.yarn.releaseCalls.length, 1);
  });

  it('a negative timeout waits forever', async () => {
    const r = await rig({ settings: { pollIntervalMs: 60_000 } });
    r.yarn.addContainers('node1', 2);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: -1 }));
    await r.step(48 * 3600_000);
    assert.deepEqual(r.yarn.releaseCalls, []);
    const e = r.engine.itemStatus('node1')?.evacuation;
    assert.equal(e?.phase, 'WAIT_CONTAINER');
    assert.equal(e?.remainingSeconds, -1);
  });

  it('the default timeout comes from config when the item has none', async () => {
    const r = await rig({ settings: { evacuationTimeoutMs: 10_000 } });
    r.yarn.addContainers('node1', 1);
    await r.block(nodeItem('node1', { action: EVACUATE, start: T0 }));
    await r.step(9_999);
    assert.deepEqual(r.yarn.releaseCalls, []);
    await r.step(1);
    assert.equal(r.yarn.releaseCalls.length, 1);
  });

  it('MARK_BLOCKED never releases anything (C3.36)', async () => {
    const r = await rig();
    r.yarn.addContainers('node1', 3);
    await r.block(nodeItem('node1'));
    await r.step(3600_000);
    assert.deepEqual(r.yarn.releaseCalls, []);
    assert.equal(r.yarn.containersOn('node1').length, 3);
    assert.deepEqual(r.engine.taskManagersOn('node1'), r.yarn.containersOn('node1'));
  });

  it('a task manager item with EVACUATE releases that container only and does not blacklist the node', async () => {
    const r = await rig();
    const [a, b] = r.yarn.addContainers('node1', 2);
    await r.block(tmItem('node1', a, { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.yarn.releaseCalls, [[a]]);
    assert.deepEqual((await r.yarn.blacklist()).blacklist, []);
    assert.deepEqual(r.yarn.containersOn('node1').includes(b), true);
  });

  it('releases in batches: one call per pass, release-batch-size at most', async () => {
    const r = await rig({ settings: { releaseBatchSize: 3 } });
    r.yarn.replace = false;
    r.yarn.addContainers('node1', 7);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 }));
    assert.deepEqual(r.yarn.releaseCalls.map((c) => c.length), [3, 3, 1]);
    assert.equal(new Set(r.yarn.releasedIds).size, 7);
  });

  it('proxy down during evacuation → retried; a release whose answer was lost is not repeated', async () => {
    const r = await rig();
    r.yarn.releaseMode = 'releasing';
    r.yarn.addContainers('node1', 2);
    r.yarn.loseNextReleaseResponse = true;
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 0 }));
    r.yarn.proxyDown = true;
    await r.step(1000);
    r.yarn.proxyDown = false;
    await r.step(10_000);
    assert.equal(r.yarn.releaseCalls.length, 1);
    assert.equal(r.yarn.releasedIds.length, 2);
    assert.equal(r.engine.itemStatus('node1')?.evacuation?.phase, 'READY');
  });

  it('restart-safe: the deadline counts from the stored start, and nothing is released twice', async () => {
    const r = await rig();
    r.yarn.releaseMode = 'releasing';
    r.yarn.replace = false;
    r.yarn.addContainers('node1', 2);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 60, start: T0 }));
    await r.step(30_000);
    await r.restart();
    await r.step(29_999);
    assert.deepEqual(r.yarn.releaseCalls, []);
    await r.step(1);
    assert.equal(r.yarn.releaseCalls.length, 1);
    await r.restart();
    await r.step(5000);
    assert.equal(r.yarn.releaseCalls.length, 1);
    assert.equal(r.yarn.releasedIds.length, 2);
  });

  it('logs one status line per evacuating item every status-log-interval, and each phase change once', async () => {
    const lines: string[] = [];
    const r = await rig({ logger: captureLogger(lines), settings: { statusLogIntervalMs: 20_000 } });
    r.yarn.addContainers('node1', 2);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 100, start: T0 }));
    await r.step(40_000);
    const status = lines.filter((l) => l.includes('evacuating node1'));
    assert.equal(status.length, 2);
    assert.match(status[1], /40s containers: 2 +WAIT_CONTAINER timeout:60s left/);
    assert.equal(lines.filter((l) => l.includes('start -> WAIT_CONTAINER')).length, 1);
    await r.step(60_000);
    assert.equal(lines.filter((l) => l.includes('WAIT_CONTAINER -> TIMEOUT')).length, 1);
    assert.ok(lines.some((l) => /released 2 container/.test(l)));
  });

  it('unblocking during WAIT_CONTAINER stops the evacuation (nothing released at the old deadline)', async () => {
    const r = await rig();
    r.yarn.addContainers('node1', 1);
    await r.block(nodeItem('node1', { action: EVACUATE, evacuationTimeout: 60 }));
    await r.step(10_000);
    await r.unblock('node1');
    await r.step(60_000);
    assert.deepEqual(r.yarn.releaseCalls, []);
    assert.deepEqual(r.engine.status().evacuations, []);
  });
});

describe('sync/engine: metrics and status', () => {
  it('numBlockedNodes and friends are exported from the injected registry', async () => {
    const r = await rig({ settings: { maxBlockedFraction: 0.2 } });
    r.engine.metrics.countFromStore({ store: r.store, clock: r.clock, applicationId: () => APP, enabled: true });
    for (let k = 1; k <= 3; k++) await r.block(nodeItem(`node${k}`, { start: T0 + k }));
    const [c] = r.yarn.addContainers('node9', 1);
    await r.block(tmItem('node9', c));
    const text = await r.metrics.text();
    assert.match(text, /^numBlockedNodes 3$/m);
    assert.match(text, /^blocklist_blocked_taskmanagers 1$/m);
    assert.match(text, /^blocklist_deferred_items 1$/m);
    assert.match(text, /^blocklist_blacklist_pushes_total\{result="success"\} 2$/m);
    assert.match(text, /^blocklist_blacklist_push_duration_seconds_count 2$/m);
    assert.match(text, new RegExp(`^blocklist_last_successful_sync_timestamp_seconds ${T0 / 1000}$`, 'm'));
    const s = r.engine.status();
    assert.equal(s.applicationId, APP);
    assert.deepEqual(s.blacklist, { desired: ['node1', 'node2'], actual: ['node1', 'node2'] });
  });

  it('numBlockedNodes is exact right after a write, before any pass (counted from the store at scrape time)', async () => {
    const r = await rig();
    r.metrics.countFromStore({ store: r.store, clock: r.clock, applicationId: () => APP, enabled: true });
    await r.store.put(nodeItem('node1', { end: T0 + 1000 }));
    assert.match(await r.metrics.text(), /^numBlockedNodes 1$/m);
    r.clock.advance(1000);
    assert.match(await r.metrics.text(), /^numBlockedNodes 0$/m);
  });
});
