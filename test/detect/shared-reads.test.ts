/**
 * The detector at many jobs: its RM reads go through the cluster-state reading the sidecars of one
 * ZooKeeper store share (one elected sidecar reads the RM's node counts and node list; the others
 * read them in ZooKeeper). Two sidecars of two applications, each beside its own simulated YARN
 * (same node names), on one real ZooKeeper; the detector on in both. The follower's detector read
 * the RM itself every pass (cluster metrics) and the whole node list at start and every 10 min:
 * a thousand jobs meant a thousand readers of megabytes of node list, the cost the shared reading
 * exists to avoid; and its node-health read (the filtered list of UNHEALTHY, LOST and
 * DECOMMISSIONING nodes) every pass of every job: a hundred RM requests a second at a thousand
 * jobs polling every 10 s. Both now come from the leader's readings while fresh.
 */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { ZkCluster, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { pollUntil } from '../support/wait';

/** The polling wait of these tests: every 20 ms, 10 s unless told. */
const waitFor = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<number> => pollUntil(what, cond, timeoutMs, 20);

describe("detector: a follower's RM reads come from the shared cluster state", function () {
  this.timeout(40_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    const root = `/shared-reads${process.pid}`;
    for (const appNumber of [1, 2]) {
      const sim = await startSimulator({ port: 0, nodes: 20, containers: 10, seed: 5, tickMs: 0, appNumber });
      sims.push(sim);
      const config = zkJobConfig(zk!.connectString(), root, sim, {
        'cluster.resource-blocklist.store.zookeeper.operation-timeout': '3 s',
        'cluster.resource-blocklist.detector.mode': 'shadow',
        'cluster.resource-blocklist.detector.poll-interval': '1 h',
      });
      const s = await startSidecar({ config, logger: silentLogger, env: {} });
      sidecars.push(s);
      await waitFor('first sync', () => s.sync.synced());
      // The first sidecar leads before the second starts: the second is a follower from its first read.
      if (appNumber === 1) {
        await waitFor('sidecar 1 leads and has shared both readings', () => {
          const st = s.sync.clusterState?.();
          return st?.role === 'leader' && st.rmReads.metrics > 0 && st.rmReads.nodes > 0;
        });
        // The leader's detector reads node health as the leader: it is shared from then on.
        await s.detector!.pass();
        await s.detector!.pass();
        assert.ok((s.sync.clusterState?.().rmReads.filtered ?? 0) > 0);
      }
    }
  });

  after(async () => {
    for (const s of sidecars.splice(0)) await s.close().catch(() => undefined);
    for (const s of sims.splice(0)) await s.close().catch(() => undefined);
    await zk?.stop();
  });

  it("the follower's detector reads neither the cluster metrics, nor the node list, nor node health from its RM", async () => {
    const follower = sidecars[1];
    await waitFor('sidecar 2 follows', () => follower.sync.clusterState?.().role === 'follower');
    // The elected sidecar alone looks for gone jobs' records (core/sweep-schedule.ts).
    assert.deepEqual(sidecars.map((s) => s.sync.sweepsRecords?.()), [true, false]);
    await follower.detector!.pass(); // the pass start() began: its first reads (node list included) count too
    const before: Record<string, number> = {};
    const passes = 5;
    for (let i = 0; i < passes; i++) {
      const r = await follower.detector!.pass();
      assert.ok(r, 'the pass ran');
    }
    const view = follower.detector!.view();
    assert.equal(view.lastError, null);
    assert.equal(view.report?.cap.runningNodes, 20, "the cap's RUNNING count, from the shared reading");
    const read = (p: string) => (sims[1].cluster.counters.rmRequestsByPath[p] ?? 0) - (before[p] ?? 0);
    assert.equal(read('/ws/v1/cluster/metrics'), 0, 'cluster metrics read from the RM by the follower');
    assert.equal(read('/ws/v1/cluster/nodes'), 0, 'full node list read from the RM by the follower');
    assert.equal(read('/ws/v1/cluster/nodes?states=UNHEALTHY,LOST,DECOMMISSIONING'), 0, "node health (a filtered node list) from the leader's reading too");
    assert.ok((follower.sync.clusterState?.().sharedAnswers.filtered ?? 0) >= passes);
  });
});
