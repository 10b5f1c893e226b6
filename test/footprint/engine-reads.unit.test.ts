/**
 * What the whole engine reads from the RM over time, on a fake clock, in-process over the
 * simulator's cluster: an idle sidecar reads next to nothing, node items make the node list read
 * once and then rarely, the cap's denominator follows the node counts, RM attempts are read at
 * start and for a new attempt only.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/metrics/metrics';
import { SimCluster } from '../../src/sim/cluster';
import { inProcessYarn } from '../../src/sim/in-process';
import { SyncEngine } from '../../src/sync/engine';
import { EVACUATE } from '../../src/model/item';
import { ResourceManagerReader, YarnCallError } from '../../src/yarn/types';
import { FlakyStore, TEST_SETTINGS } from '../sync/fakes';
import { nodeItem } from '../sync/items';

const T0 = 1_652_313_600_000;
const MIN = 60_000;

interface Counts {
  /** While true every RM call fails (an RM outage). */
  down?: boolean;
  metrics: number;
  nodes: number;
  attempts: number;
  other: number;
}

function counting(rm: ResourceManagerReader, c: Counts): ResourceManagerReader {
  const up = <T>(f: () => Promise<T>): Promise<T> => (c.down ? Promise.reject(new YarnCallError('RM down (test)')) : f());
  return {
    clusterInfo: () => (c.other++, up(() => rm.clusterInfo())),
    clusterMetrics: () => (c.metrics++, up(() => rm.clusterMetrics())),
    nodes: (states, need) => (c.nodes++, up(() => rm.nodes(states, need))),
    application: (id) => (c.other++, up(() => rm.application(id))),
    attempts: (id) => (c.attempts++, up(() => rm.attempts(id))),
    containers: (id, a) => (c.other++, up(() => rm.containers(id, a))),
  };
}

/** Engines started by setup(), stopped after each test whatever it did. */
const running: { close(): Promise<void> }[] = [];

async function setup(o: { nodes?: number; maxBlockedFraction?: number } = {}) {
  const clock = new FakeClock(T0);
  const cluster = new SimCluster({ nodes: o.nodes ?? 10, containers: 20, slotsPerNode: 32, seed: 3, clock });
  cluster.allocate();
  const yarn = inProcessYarn(cluster);
  const reads: Counts = { metrics: 0, nodes: 0, attempts: 0, other: 0 };
  const store = new FlakyStore();
  const engine = new SyncEngine({
    store,
    rm: counting(yarn.rm, reads),
    proxy: yarn.proxy,
    clock,
    logger: silentLogger,
    settings: { ...TEST_SETTINGS, maxBlockedFraction: o.maxBlockedFraction ?? 1, nodesRefreshIntervalMs: 10 * MIN },
    metrics: createMetrics(),
    applicationId: cluster.applicationId,
  });
  await engine.start();
  const step = async (ms: number, by = 1000): Promise<void> => {
    for (let t = 0; t < ms; t += by) {
      clock.advance(Math.min(by, ms - t));
      await engine.idle();
    }
  };
  const block = async (host: string, action?: typeof EVACUATE): Promise<void> => {
    await store.put(nodeItem(host, action ? { action, evacuationTimeout: 3600 } : {}));
    engine.kick('test');
    await engine.idle();
  };
  const s = { clock, cluster, reads, store, engine, step, block, close: () => engine.stop() };
  running.push(s);
  return s;
}

describe('engine reads from the RM (RM footprint)', () => {
  afterEach(async () => {
    for (const s of running.splice(0)) await s.close();
  });

  it('idle (nothing blocked): no node list at all, node counts once and then every nodes.refresh-interval, attempts once', async () => {
    const s = await setup();
    await s.step(30 * MIN, 5000);
    assert.equal(s.reads.nodes, 0);
    assert.ok(s.reads.metrics <= 4, `metrics read ${s.reads.metrics} times in 30 min`);
    assert.equal(s.reads.attempts, 1, 'the RM view of the attempt: at start only, not at every full resync');
    assert.equal(s.reads.other, 0);
  });

  it('node items in force: the list once, then every nodes.refresh-interval; counts every refresh-interval', async () => {
    const s = await setup();
    await s.block(s.cluster.nodes[2].host);
    assert.equal(s.reads.nodes, 1);
    const m0 = s.reads.metrics;
    await s.step(10 * MIN - 1000, 5000);
    assert.equal(s.reads.nodes, 1, 'no node list read before the rare refresh');
    assert.ok(s.reads.metrics - m0 >= 55 && s.reads.metrics - m0 <= 61, `counts read ${s.reads.metrics - m0} times in 10 min`);
    await s.step(2000);
    assert.equal(s.reads.nodes, 2);
    // A second block on a host already on the list reads nothing more.
    await s.block(s.cluster.nodes[3].host);
    assert.equal(s.reads.nodes, 2);
  });

  it('a host missing from the list is looked up (at most once per refresh-interval), a host the RM does not know only once', async () => {
    const s = await setup();
    await s.block(s.cluster.nodes[1].host);
    assert.equal(s.reads.nodes, 1);
    await s.step(11_000);
    await s.block('ghost.example.com');
    assert.equal(s.reads.nodes, 2, 'looked up at once (the list is older than refresh-interval)');
    await s.step(5 * MIN, 5000);
    assert.equal(s.reads.nodes, 2, 'an unknown host is not looked up again before the rare refresh');
    assert.deepEqual(s.cluster.clientBlacklistView().sort(), [s.cluster.nodes[1].host, 'ghost.example.com'].sort(), 'an unknown host is blacklisted (takes no cap slot)');
  });

  it("the cap's denominator follows the node counts between node-list reads (after the 5-minute high-water floor)", async () => {
    const s = await setup({ nodes: 10, maxBlockedFraction: 0.3 });
    const hosts = s.cluster.nodes.slice(0, 3).map((n) => n.host);
    for (const h of hosts) await s.block(h);
    assert.equal(s.cluster.clientBlacklistView().length, 3, 'floor(0.3 × 10) = 3 fit');
    const listReads = s.reads.nodes;
    // Two other nodes leave: 8 RUNNING, floor(0.3 × 8) = 2. The node list is not re-read for it.
    s.cluster.setNodeState(s.cluster.nodes[8].host, 'LOST');
    s.cluster.setNodeState(s.cluster.nodes[9].host, 'LOST');
    await s.step(4 * MIN, 5000);
    assert.equal(s.cluster.clientBlacklistView().length, 3, 'the high-water floor keeps 10 for 5 minutes');
    await s.step(2 * MIN, 5000);
    assert.equal(s.cluster.clientBlacklistView().length, 2, 'then the counts (8 RUNNING) shrink the cap');
    assert.equal(s.reads.nodes, listReads, 'from the counts, without reading the node list');
  });

  it('RM down after a first sync with nothing blocked: new blocks are pushed, each taking a slot of the cap (no list yet)', async () => {
    const s = await setup({ nodes: 10, maxBlockedFraction: 0.2 });
    s.reads.down = true;
    const hosts = s.cluster.nodes.slice(0, 3).map((n) => n.host);
    for (const h of hosts) await s.block(h);
    assert.equal(s.reads.nodes, 3, 'the list was tried for each pass');
    assert.equal(s.cluster.clientBlacklistView().length, 2, 'floor(0.2 × 10) = 2: the third is deferred');
    s.reads.down = false;
    await s.step(11_000);
    assert.equal(s.cluster.clientBlacklistView().length, 2);
  });

  it('RM attempts: read again for a new attempt, not after a full resync or a failure', async () => {
    const s = await setup();
    await s.block(s.cluster.nodes[2].host);
    await s.step(6 * MIN, 5000); // past a full resync (5 min)
    assert.equal(s.reads.attempts, 1);
    s.cluster.newAttempt();
    await s.step(2000);
    assert.equal(s.reads.attempts, 2);
  });

  it('an evacuation in progress reads the containers (from the proxy) every pass, the RM no more', async () => {
    const s = await setup();
    const am = s.cluster.currentAttempt.amHost;
    const busy = s.cluster.nodes.find((n) => n.host !== am && n.containers.size > 0);
    assert.ok(busy);
    const m0 = { ...s.reads };
    await s.block(busy.host, EVACUATE);
    await s.step(60_000, 1000);
    assert.equal(s.reads.nodes - m0.nodes, 1);
    assert.ok(s.reads.metrics - m0.metrics <= 8);
    assert.equal(s.reads.other, 0);
  });
});
