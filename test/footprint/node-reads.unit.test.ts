/**
 * #31.8: while blocks are in force the RM is asked for the blocked nodes one by one
 * (GET /ws/v1/cluster/nodes/{nodeid}) instead of its whole node list (megabytes at 10,000 nodes),
 * and what the decision needs stays right: a blocked node's state, a blocked rack's RUNNING nodes,
 * a host the RM does not know, one that joins later. The pure plan, then the whole engine on a
 * fake clock over the simulator's cluster in-process.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { createMetrics } from '../../src/metrics/metrics';
import { BlockedItem } from '../../src/model/item';
import { SimCluster } from '../../src/sim/cluster';
import { inProcessYarn } from '../../src/sim/in-process';
import { SyncEngine } from '../../src/sync/engine';
import { MAX_SINGLE_READS, NodeIds, nodeReadPlan } from '../../src/sync/read-policy';
import { ClusterNode, ResourceManagerReader, YarnCallError } from '../../src/yarn/types';
import { FlakyStore, TEST_SETTINGS } from '../sync/fakes';
import { nodeItem } from '../sync/items';

const MIN = 60_000;

const known: NodeIds = {
  ids: new Map([
    ['h1', ['h1:8041']],
    ['h2', ['h2:8041']],
    ['h3', ['h3:8041']],
  ]),
  racks: new Map([['/r1', ['h1', 'h2']]]),
  commonPort: '8041',
};

describe('node reads: the plan (read-policy nodeReadPlan)', () => {
  it('the first read is the whole list; later ones ask for the needed nodes, a rack for its nodes', () => {
    assert.deepEqual(nodeReadPlan('first', ['h1'], ['h1'], known, false), { how: 'full' });
    assert.deepEqual(nodeReadPlan('refresh', ['h1', 'h3'], [], known, false), { how: 'single', ids: ['h1:8041', 'h3:8041'] });
    assert.deepEqual(nodeReadPlan('refresh', ['/r1'], [], known, false), { how: 'single', ids: ['h1:8041', 'h2:8041'] });
  });

  it("a host not on the list is asked for at the cluster's common port; without one only the whole list can say", () => {
    assert.deepEqual(nodeReadPlan('unseen-host', ['h1', 'new'], ['new'], known, false), { how: 'single', ids: ['h1:8041', 'new:8041'] });
    const mixed: NodeIds = { ...known, commonPort: undefined };
    assert.deepEqual(nodeReadPlan('unseen-host', ['h1', 'new'], ['new'], mixed, false), { how: 'full' });
    // Missing since the last list (not unseen): not worth a whole list at every refresh.
    assert.deepEqual(nodeReadPlan('refresh', ['h1', 'ghost'], [], mixed, false), { how: 'single', ids: ['h1:8041'] });
  });

  it('nodes joined the cluster: the whole list when a host is missing or a rack is blocked (it may be among them), else single nodes', () => {
    assert.deepEqual(nodeReadPlan('refresh', ['h1', 'ghost'], [], known, true), { how: 'full' });
    assert.deepEqual(nodeReadPlan('refresh', ['/r1'], [], known, true), { how: 'full' });
    assert.deepEqual(nodeReadPlan('refresh', ['h1'], [], known, true), { how: 'single', ids: ['h1:8041'] });
  });

  it(`more than ${MAX_SINGLE_READS} nodes: the whole list`, () => {
    const many = Array.from({ length: MAX_SINGLE_READS + 1 }, (_, i) => `n${i}`);
    const ids: NodeIds = { ids: new Map(many.map((h) => [h, [`${h}:8041`]])), racks: new Map(), commonPort: '8041' };
    assert.deepEqual(nodeReadPlan('refresh', many, [], ids, false), { how: 'full' });
    assert.equal((nodeReadPlan('refresh', many.slice(1), [], ids, false) as { ids: string[] }).ids.length, MAX_SINGLE_READS);
  });
});

interface Reads {
  lists: number;
  singles: number;
}

/** The in-process RM, counted, with nodes it can hide (not yet joined, or removed from the RM). */
function countedRm(rm: ResourceManagerReader, reads: Reads, hidden: Set<string>, refuse: () => boolean): ResourceManagerReader {
  const visible = (n: ClusterNode): boolean => !hidden.has(n.host);
  const single = rm.node?.bind(rm);
  assert.ok(single);
  return {
    clusterInfo: () => rm.clusterInfo(),
    clusterMetrics: async () => {
      const m = await rm.clusterMetrics();
      return { ...m, totalNodes: m.totalNodes - hidden.size, activeNodes: m.activeNodes - hidden.size };
    },
    nodes: async (states, need) => {
      reads.lists++;
      return (await rm.nodes(states, need)).filter(visible);
    },
    node: async (id) => {
      reads.singles++;
      if (refuse()) throw new YarnCallError(`RM GET /ws/v1/cluster/nodes/${id}: 400 BadRequestException`, 400, false);
      const n = await single(id);
      return n && visible(n) ? n : undefined;
    },
    application: (id) => rm.application(id),
    attempts: (id) => rm.attempts(id),
    containers: (id, a) => rm.containers(id, a),
  };
}

const running: SyncEngine[] = [];

async function setup(hidden: string[] = []) {
  const clock = new FakeClock();
  const cluster = new SimCluster({ nodes: 40, containers: 20, slotsPerNode: 32, seed: 3, clock });
  const reads: Reads = { lists: 0, singles: 0 };
  const hide = new Set(hidden);
  const flags = { refuseSingles: false };
  const yarn = inProcessYarn(cluster);
  const store = new FlakyStore();
  const engine = new SyncEngine({
    store,
    rm: countedRm(yarn.rm, reads, hide, () => flags.refuseSingles),
    proxy: yarn.proxy,
    clock,
    logger: silentLogger,
    settings: { ...TEST_SETTINGS, maxBlockedFraction: 1, nodesRefreshIntervalMs: 10 * MIN },
    metrics: createMetrics(),
    applicationId: cluster.applicationId,
  });
  running.push(engine);
  await engine.start();
  const step = async (ms: number, by = 5000): Promise<void> => {
    for (let t = 0; t < ms; t += by) {
      clock.advance(Math.min(by, ms - t));
      await engine.idle();
    }
  };
  const block = async (item: BlockedItem): Promise<void> => {
    await store.put(item);
    engine.kick('test');
    await engine.idle();
  };
  const state = (host: string): string | undefined => engine.view().nodes?.list.find((n) => n.host === host)?.state;
  return Object.assign(flags, { cluster, reads, hide, engine, step, block, state });
}

describe('node reads: the engine asks for single nodes while blocks are in force (#31.8)', () => {
  afterEach(async () => {
    for (const e of running.splice(0)) await e.stop();
  });

  it('one whole list, then each refresh reads only the blocked nodes, and sees their state change', async () => {
    const s = await setup();
    const [a, b, c] = [s.cluster.nodes[1].host, s.cluster.nodes[2].host, s.cluster.nodes[3].host];
    for (const h of [a, b, c]) await s.block(nodeItem(h));
    assert.equal(s.reads.lists, 1);
    s.cluster.setNodeState(b, 'LOST');
    await s.step(30 * MIN + 5000);
    assert.equal(s.reads.lists, 1, 'the whole list was read once in 30 minutes');
    assert.equal(s.reads.singles, 3 * 3, 'three nodes at each of three refreshes');
    assert.equal(s.state(b), 'LOST', 'a blocked node that left is seen at the next refresh');
    assert.equal(s.state(a), 'RUNNING');
    assert.equal(s.engine.view().plan?.capUsed, 2, 'the cap counts the two RUNNING blocked nodes');
  });

  it("a blocked rack: its nodes are read one by one, and a node that leaves stops counting as the rack's RUNNING node", async () => {
    const s = await setup();
    const rack = s.cluster.nodes[0].rack;
    const members = s.cluster.nodes.filter((n) => n.rack === rack);
    await s.block({ ...nodeItem(rack), kind: 'rack' });
    assert.equal(s.reads.lists, 1);
    const capBefore = s.engine.view().plan?.capUsed;
    assert.equal(capBefore, members.length);
    s.cluster.setNodeState(members[0].host, 'UNHEALTHY');
    await s.step(10 * MIN + 5000);
    assert.equal(s.reads.lists, 1);
    assert.equal(s.reads.singles, members.length);
    assert.equal(s.state(members[0].host), 'UNHEALTHY');
    assert.equal(s.engine.view().plan?.capUsed, members.length - 1);
  });

  it('a host the RM does not know is asked for at the common port; when it joins it is known (no longer unknown-host)', async () => {
    const late = 'node0039.sim.local';
    const s = await setup([late]);
    await s.block(nodeItem(s.cluster.nodes[1].host));
    await s.step(15_000);
    await s.block(nodeItem(late));
    assert.equal(s.reads.lists, 1, 'looked up by one single read, not the whole list');
    assert.equal(s.state(late), undefined);
    s.hide.delete(late); // it joins: the RM's counts grow
    await s.step(10 * MIN + 5000);
    assert.equal(s.state(late), 'RUNNING');
  });

  it('a single read the RM refuses for good (a 4xx, a NodeId it cannot take) falls back to the whole list', async () => {
    const s = await setup();
    const h = s.cluster.nodes[5].host;
    await s.block(nodeItem(h));
    s.refuseSingles = true;
    s.cluster.setNodeState(h, 'LOST');
    await s.step(10 * MIN + 5000);
    assert.equal(s.reads.lists, 2);
    assert.equal(s.state(h), 'LOST');
  });

  it('a blocked node the RM forgot (404 on its NodeId) is no longer on the list', async () => {
    const s = await setup();
    const gone = s.cluster.nodes[4].host;
    await s.block(nodeItem(gone));
    assert.equal(s.state(gone), 'RUNNING');
    s.hide.add(gone);
    await s.step(10 * MIN + 5000);
    assert.equal(s.state(gone), undefined);
  });
});
