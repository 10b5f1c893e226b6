/**
 * Two sidecars of one job (an HA pair) on one real store — a SQLite file, and a ZooKeeper
 * ensemble — each with a detector, on fake clocks. The cluster has 10 RUNNING nodes, so the cap
 * (0.1) is one automatic block. Each sidecar's source reports a different failing host (n3 for A,
 * n5 for B: the two read their sources at different moments). Before the detector reserved its
 * blocks in the record and kept one runner per job, two passes that coincided each found the cap
 * free and each blocked its host: two automatic blocks under a cap of one.
 *
 * The passes are made to coincide deterministically: A's listing of the store's items is held
 * (after it read the items, before it decided) until B's whole pass is over.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Detector, DetectorDeps } from '../../src/detect/detector';
import { leaseMsFor } from '../../src/detect/leadership';
import { createDetectorMetrics } from '../../src/detect/metrics';
import { DetectorSource } from '../../src/detect/source';
import { inForce } from '../../src/model/effective';
import { newItem } from '../../src/model/merge';
import { BlocklistStore } from '../../src/store/store';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store';
import { ZookeeperStore, zookeeperSessionOptions } from '../../src/store/zookeeper/zookeeper-store';
import { ZkSession } from '../../src/store/zookeeper/session';
import { tempDir } from '../support/sidecar';
import { ZkCluster, expireSession, requireZookeeper } from '../support/zookeeper';
import { UNIT_APP, runningNodes, storeAdder, unitDetector } from './unit-detector';

const T0 = 1_716_900_000_000;
const POLL_MS = 10_000; // the default poll interval (the lease is derived from it)
const LEASE_MS = leaseMsFor(POLL_MS);

/** A source that reports three failures on `host` once `failing` is set (new keys each time it is armed). */
class FailingHost implements DetectorSource {
  readonly name = 'test';
  failing = false;
  constructor(private readonly host: string) {}
  async poll(ctx: { now: number }): Promise<{ failures: { key: string; source: string; host: string; at: number; group: string; signature: string; summary: string }[] }> {
    if (!this.failing) return { failures: [] };
    return {
      failures: [0, 1, 2].map((i) => ({ key: `test:${this.host}:${i}`, source: 'test', host: this.host, at: ctx.now - 3_000 + i * 1000, group: `test:${this.host}:${i}`, signature: `disk failure on ${this.host}`, summary: 'disk failure' })),
    };
  }
}

/** The store as a detector sees it, with its next listing held after the read until `open()`. */
function heldListing(store: BlocklistStore): { store: DetectorDeps['store']; arm(): Promise<void>; open(): void } {
  let armed = false;
  let reached: () => void = () => {};
  let release: () => void = () => {};
  let gate = Promise.resolve();
  return {
    store: {
      list: async () => {
        const items = await store.list();
        if (armed) {
          armed = false;
          reached();
          await gate;
        }
        return items;
      },
      version: () => store.version(),
      readRecord: (k) => store.readRecord!(k),
      writeRecord: (k, v) => store.writeRecord!(k, v),
      replaceRecord: (k, e, v) => store.replaceRecord!(k, e, v),
      recordKeys: (p) => store.recordKeys!(p),
      removeRecord: (k, e) => store.removeRecord!(k, e),
    },
    arm() {
      armed = true;
      gate = new Promise<void>((r) => (release = r));
      return new Promise<void>((r) => (reached = r));
    },
    open: () => release(),
  };
}

function pairDetector(store: BlocklistStore, view: DetectorDeps['store'], clock: FakeClock, source: DetectorSource, member: string, registry?: Registry): Detector {
  return unitDetector({ clock, store: view, addItem: storeAdder(store, clock), nodeList: runningNodes(10), sources: [source], applicationId: UNIT_APP, member, ...(registry ? { metrics: createDetectorMetrics(registry) } : {}) });
}

/** Automatic blocks in force for the job. */
async function autoBlocks(store: BlocklistStore, now: number): Promise<string[]> {
  return inForce(await store.list(), UNIT_APP, now)
    .filter((i) => i.created.by === 'detector' && i.kind === 'node')
    .map((i) => i.id)
    .sort();
}

type Opened = { a: BlocklistStore; b: BlocklistStore; close(): Promise<void> };

function scenarios(open: () => Promise<Opened>): void {
  let s: Opened | undefined;
  beforeEach(async () => {
    s = await open();
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('passes that coincide from a cold start: one sidecar runs the detector, the cap holds', async () => {
    const clock = new FakeClock(T0);
    const held = heldListing(s!.a);
    const srcA = new FailingHost('n3');
    const srcB = new FailingHost('n5');
    srcA.failing = srcB.failing = true;
    const a = pairDetector(s!.a, held.store, clock, srcA, 'sidecar-a');
    const b = pairDetector(s!.b, s!.b, clock, srcB, 'sidecar-b');
    const reached = held.arm();
    const passA = a.pass();
    await reached; // A has read the items (none) and is about to decide
    await b.pass(); // B's whole pass, meanwhile
    held.open();
    await passA;
    assert.equal(a.view().lastError, null, String(a.view().lastError));
    assert.equal(b.view().lastError, null, String(b.view().lastError));
    const blocks = await autoBlocks(s!.a, clock.now());
    assert.ok(blocks.length <= 1, `automatic blocks ${blocks.join(', ')} under a cap of 1`);
    assert.deepEqual(blocks, ['n3']);
    assert.deepEqual([a.view().runner.role, b.view().runner.role], ['runner', 'standby']);
    assert.equal(b.view().runner.holder?.member, 'sidecar-a');
  });

  it('the runner paused past its lease mid-pass: the other takes over; the reservation keeps the cap when the first resumes', async () => {
    const clockA = new FakeClock(T0);
    const clockB = new FakeClock(T0);
    const held = heldListing(s!.a);
    const srcA = new FailingHost('n3');
    const srcB = new FailingHost('n5');
    const a = pairDetector(s!.a, held.store, clockA, srcA, 'sidecar-a');
    const b = pairDetector(s!.b, s!.b, clockB, srcB, 'sidecar-b');
    await a.pass();
    await b.pass();
    assert.deepEqual([a.view().runner.role, b.view().runner.role], ['runner', 'standby']);

    srcA.failing = srcB.failing = true;
    clockA.advance(POLL_MS);
    // An operator's block of another job moves the store's version: A lists the items again.
    await s!.a.add({ item: newItem({ id: 'n9', kind: 'node', node: 'n9', action: 'MARK_BLOCKED', end: { type: 'after', ms: 3_600_000 }, cause: 'disk', scope: 'application_1652313600000_0099', allowMerge: false }, T0, { by: 'alice', from: 'test' }), allowMerge: false });
    const reached = held.arm();
    const passA = a.pass();
    await reached; // A decides next, from what it read: no block, the cap free
    // A stalls (a long pause, a partition) past its lease as B's clock sees it: B takes over.
    clockB.advance(LEASE_MS + POLL_MS);
    const rb = await b.pass();
    assert.equal(b.view().runner.role, 'runner');
    assert.equal(rb?.hosts.find((h) => h.host === 'n5')?.decision, 'block');
    held.open();
    const ra = await passA;
    assert.equal(a.view().lastError, null, String(a.view().lastError));
    assert.equal(ra?.hosts.find((h) => h.host === 'n3')?.decision, 'cap', ra?.hosts.find((h) => h.host === 'n3')?.why);
    const blocks = await autoBlocks(s!.a, clockB.now());
    assert.deepEqual(blocks, ['n5'], `automatic blocks ${blocks.join(', ')} under a cap of 1`);
    // A's next pass finds B holding the lease: A stands by.
    clockA.advance(POLL_MS);
    await a.pass();
    assert.equal(a.view().runner.role, 'standby');
  });
}

describe('detector: an HA pair on one SQLite file holds at most the cap, whatever the timing', function () {
  this.timeout(20_000);
  scenarios(async () => {
    const dir = tempDir('ha-cap');
    const a = new SqliteStore(path.join(dir, 'b.db'));
    const b = new SqliteStore(path.join(dir, 'b.db'));
    return {
      a,
      b,
      async close() {
        await a.close();
        await b.close();
      },
    };
  });
});

describe('detector: an HA pair on one ZooKeeper store', function () {
  this.timeout(60_000);
  let zk: ZkCluster | undefined;
  let n = 0;
  const settings = () => ({ quorum: zk!.connectString(), root: `/ha-cap${process.pid}-${n}`, sessionTimeoutMs: 2000, operationTimeoutMs: 4000 });

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
  });
  after(async () => {
    await zk?.stop();
  });

  describe('holds at most the cap, whatever the timing', () => {
    scenarios(async () => {
      n++;
      const a = await ZookeeperStore.open(settings());
      const b = await ZookeeperStore.open(settings());
      return {
        a,
        b,
        async close() {
          await a.close();
          await b.close();
        },
      };
    });
  });

  it("the runner's session expires and it carries on; then it dies: the other takes over once its lease lapses", async () => {
    n++;
    const clock = new FakeClock(T0);
    const opts = settings();
    const session = new ZkSession(zookeeperSessionOptions(opts, silentLogger));
    const storeA = await ZookeeperStore.open({ ...opts, session });
    const storeB = await ZookeeperStore.open(opts);
    try {
      const srcB = new FailingHost('n5');
      const registry = new Registry();
      const runnerGauge = async (): Promise<string> => (await registry.getSingleMetricAsString('blocklist_detector_runner')).split('\n').pop() ?? '';
      const a = pairDetector(storeA, storeA, clock, new FailingHost('n3'), 'sidecar-a');
      const b = pairDetector(storeB, storeB, clock, srcB, 'sidecar-b', registry);
      await a.pass();
      await b.pass();
      assert.deepEqual([a.view().runner.role, b.view().runner.role], ['runner', 'standby']);
      assert.equal(await runnerGauge(), 'blocklist_detector_runner 0');

      // A's ZooKeeper session expires; A is alive, on a new session, and keeps running the detector.
      const renewed = new Promise<void>((resolve) => session.once('session', () => resolve()));
      assert.ok(await expireSession(zk!.connectString(), () => session.credentials(), renewed), 'the session did not expire');
      for (let t = 0; t < 2 * LEASE_MS; t += POLL_MS) {
        clock.advance(POLL_MS);
        await a.pass();
        await b.pass();
      }
      assert.equal(a.view().lastError, null, String(a.view().lastError));
      assert.deepEqual([a.view().runner.role, b.view().runner.role], ['runner', 'standby'], 'a live runner renews its lease through its new session');

      // A's process dies: its session goes, its lease is not given up. B stands by until the lease
      // lapses, and takes over at its first pass after that.
      await storeA.close();
      await session.close();
      const until = b.view().runner.holder!.until;
      srcB.failing = true;
      while (clock.now() + POLL_MS < until) {
        clock.advance(POLL_MS);
        await b.pass();
        assert.equal(b.view().runner.role, 'standby');
      }
      clock.advance(POLL_MS);
      const r = await b.pass();
      assert.equal(b.view().runner.role, 'runner');
      assert.ok(clock.now() - until <= POLL_MS, 'taken over within one poll of the lease lapsing');
      assert.equal(r?.hosts.find((h) => h.host === 'n5')?.decision, 'block');
      assert.deepEqual(await autoBlocks(storeB, clock.now()), ['n5']);
      assert.equal(await runnerGauge(), 'blocklist_detector_runner 1');
    } finally {
      await storeA.close().catch(() => undefined);
      await session.close().catch(() => undefined);
      await storeB.close();
    }
  });
});
