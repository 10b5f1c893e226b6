/**
 * Two jobs, one cluster-wide EVACUATE block on a shared ZooKeeper store: each job's grace period
 * counts from when *that job* put the node on its own blacklist. Job A applies the block at once;
 * job B's safety cap holds it back (B's one slot is taken by an older block of its own) until that
 * older block is lifted two hours later. B must then wait its full evacuation timeout — before the
 * start was per job, B found the item's start (A's, two hours old) and killed its containers at
 * once. B's start is stored: a restart of B's sidecar keeps it, and A's sidecar being gone changes
 * nothing for B.
 *
 * Real ZooKeeper, real simulators (two applications on the same node names), real sidecars over
 * HTTP; the sidecars' time is one FakeClock, so two hours pass without waiting.
 */
import { strict as assert } from 'node:assert';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { ZkCluster, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { http } from '../support/sidecar';
import { pollUntil } from '../support/wait';

const T0 = 1_652_313_600_000;
const TIMEOUT_S = 600;
const HOUR = 3_600_000;

interface EvacuationShown {
  phase: string;
  since: number;
  deadline?: number;
  containers: string[];
  released: string[];
}

describe('evacuation: two jobs on one ZooKeeper store, the second held back by its cap', function () {
  this.timeout(60_000);
  let zk: ZkCluster | undefined;
  const clock = new FakeClock(T0);
  const root = `/two-jobs-evac${process.pid}`;
  const sims: RunningSimulator[] = [];
  const sidecars: (Sidecar | undefined)[] = [];

  const start = async (i: number): Promise<Sidecar> => {
    const config = zkJobConfig(zk!.connectString(), root, sims[i], {
      'cluster.resource-blocklist.store.zookeeper.operation-timeout': '3 s',
      // Passes come from ZooKeeper's watch, the API's kick and the deadline timer; the clock is fake.
      'cluster.resource-blocklist.poll-interval': '1 h',
      'cluster.resource-blocklist.full-resync-interval': '1 h',
      // Job B: one slot on 10 RUNNING nodes; job A: the default (3).
      ...(i === 1 ? { 'cluster.resource-blocklist.max-blocked-fraction': '0.1' } : {}),
    });
    const s = await startSidecar({ config, clock, logger: silentLogger, env: {} });
    sidecars[i] = s;
    await pollUntil('first sync', () => s.sync.synced(), 10_000, 20);
    return s;
  };

  const evacuation = async (s: Sidecar, id: string): Promise<{ state: string; evacuation?: EvacuationShown }> => {
    const r = await http(s.url, 'GET', `/blocklist/nodes/${id}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return (r.body as { sync: { state: string; evacuation?: EvacuationShown } }).sync;
  };

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    for (const appNumber of [1, 2]) sims.push(await startSimulator({ port: 0, nodes: 10, containers: 10, seed: 5, tickMs: 0, appNumber }));
    for (const i of [0, 1]) await start(i);
  });

  after(async () => {
    for (const s of sidecars.splice(0)) await s?.close().catch(() => undefined);
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
  });

  it("job B's grace period starts when B applies the block, not when job A did; B's start survives a restart of B's sidecar", async () => {
    const [simA, simB] = sims;
    const [a, b] = [sidecars[0]!, sidecars[1]!];
    const amHosts = new Set(sims.map((s) => s.cluster.currentAttempt.amHost));
    const [x, y] = simA.cluster.nodes.map((n) => n.host).filter((h) => !amHosts.has(h));
    assert.ok(x && y, 'two hosts without an AM');
    const onXofA = simA.cluster.placeOn(x, 2);
    const onXofB = simB.cluster.placeOn(x, 2);

    // B's own older block takes B's one slot (scope: B only; A does not see it).
    const own = await http(b.url, 'PUT', `/blocklist/nodes/${y}`, { action: 'MARK_BLOCKED', cause: 'job B: hot node', scope: simB.cluster.applicationId });
    assert.equal(own.status, 201, JSON.stringify(own.body));
    clock.advance(1000);
    // The cluster-wide evacuation, through A's API.
    const put = await http(a.url, 'PUT', `/blocklist/nodes/${x}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'disk errors', evacuationTimeout: TIMEOUT_S });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const applied = clock.now();
    await pollUntil('A blacklists x', () => simA.cluster.clientBlacklistView().includes(x), 10_000, 20);
    await pollUntil('B sees x, deferred', async () => (await evacuation(b, x)).state === 'deferred', 10_000, 20);
    await pollUntil('A evacuates x', async () => (await evacuation(a, x)).evacuation !== undefined, 10_000, 20);
    const seenByA = await evacuation(a, x);
    assert.equal(seenByA.evacuation?.phase, 'WAIT_CONTAINER');
    assert.equal(seenByA.evacuation?.since, applied);
    assert.ok(!simB.cluster.clientBlacklistView().includes(x));

    // Two hours on: A's deadline passed long ago and A released its containers; B still waits.
    for (let i = 0; i < 4; i++) clock.advance(HOUR / 2);
    await pollUntil("A's containers on x released", () => onXofA.every((c) => !simA.cluster.container(c)), 10_000, 20);
    assert.deepEqual(onXofB.filter((c) => !simB.cluster.container(c)), [], 'B has not started');

    // A's sidecar goes away (its job ended): nothing of B's waits for it.
    await sidecars[0]!.close();
    sidecars[0] = undefined;

    // B's cap frees: B applies x now, and its grace period starts now.
    const lift = await http(b.url, 'DELETE', `/blocklist/nodes/${y}`);
    assert.equal(lift.status, 200, JSON.stringify(lift.body));
    const bApplied = clock.now();
    await pollUntil('B blacklists x', () => simB.cluster.clientBlacklistView().includes(x), 10_000, 20);
    await pollUntil('B evacuates x', async () => (await evacuation(b, x)).evacuation !== undefined, 10_000, 20);
    const seenByB = await evacuation(b, x);
    assert.equal(seenByB.evacuation?.phase, 'WAIT_CONTAINER', JSON.stringify(seenByB));
    assert.equal(seenByB.evacuation?.since, bApplied);
    assert.equal(seenByB.evacuation?.deadline, bApplied + TIMEOUT_S * 1000);
    assert.deepEqual(onXofB.filter((c) => !simB.cluster.container(c)), [], 'B released nothing at once');

    // B's sidecar restarts half-way through its grace period: the start is kept, not reset.
    clock.advance((TIMEOUT_S / 2) * 1000);
    await sidecars[1]!.close();
    const b2 = await start(1);
    await pollUntil('B evacuates x again', async () => (await evacuation(b2, x)).evacuation !== undefined, 10_000, 20);
    const afterRestart = await evacuation(b2, x);
    assert.equal(afterRestart.evacuation?.since, bApplied, 'the start survives the restart');
    assert.equal(afterRestart.evacuation?.phase, 'WAIT_CONTAINER');
    clock.advance((TIMEOUT_S / 2) * 1000 - 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(onXofB.filter((c) => !simB.cluster.container(c)), [], 'one millisecond before its deadline: nothing released');
    clock.advance(1);
    await pollUntil("B's containers on x released at B's deadline", () => onXofB.every((c) => !simB.cluster.container(c)), 10_000, 20);
  });
});
