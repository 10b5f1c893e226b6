/**
 * The detector across an RM failover: the new active RM knows no nodes until the NodeManagers
 * register again, so for a while it reports no unhealthy or decommissioning node either. That is
 * not every node healthy again: a node still decommissioning, evacuated once (and the evacuation
 * lifted by an operator), was evacuated a second time when the RM came back. A real Detector on a
 * memory store, fake clock.
 */
import { strict as assert } from 'node:assert';
import { loadConfig } from '../../src/config/config';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Detector } from '../../src/detect/detector';
import { HealthObservation } from '../../src/detect/types';
import { newItem } from '../../src/model/merge';
import { MemoryStore } from '../../src/store/memory-store';
import { detectorSettingsFromConfig } from '../../src/sidecar/detector-factory';
import { countNodeStates } from '../../src/yarn/node-counts';
import { ClusterNode } from '../../src/yarn/types';

describe('detector across an RM failover', () => {
  it('a node still decommissioning is not evacuated again because the failing-over RM knew no nodes', async () => {
    const clock = new FakeClock(1_716_900_000_000);
    const store = new MemoryStore({ clock });
    let nodes: ClusterNode[] = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: i === 4 ? 'DECOMMISSIONING' : 'RUNNING', healthReport: '', numContainers: 0 }));
    const all = nodes;
    let adds = 0;
    const settings = detectorSettingsFromConfig(
      loadConfig({ dynamic: { 'cluster.resource-blocklist.detector.mode': 'enforce', 'cluster.resource-blocklist.detector.evacuate-decommissioning': 'true' } }).values,
    );
    const d = new Detector({
      settings,
      clock,
      logger: silentLogger,
      store,
      addItem: async (spec, principal) => {
        adds++;
        const o = await store.add({ item: newItem(spec, clock.now(), { by: principal, from: 'detector' }), allowMerge: spec.allowMerge });
        return o.outcome === 'conflict' ? { outcome: 'conflict', reason: o.conflict.message } : { outcome: o.outcome };
      },
      proxy: { containers: async () => [] },
      nodes: async () => nodes,
      clusterMetrics: async () => countNodeStates(nodes),
      sources: [
        {
          name: 'yarn-nodes',
          poll: async (ctx) => ({ failures: [], health: nodes.filter((n) => n.state !== 'RUNNING').map((n): HealthObservation => ({ host: n.host, state: n.state, healthReport: '', seenAt: ctx.now })) }),
        },
      ],
      applicationId: () => 'application_1652313600000_0001',
    });
    const pass = async () => {
      clock.advance(10_000);
      return (await d.pass())!;
    };
    assert.equal((await pass()).hosts.find((h) => h.host === 'n4')?.decision, 'evacuate');
    assert.equal(adds, 1);
    // The operator does not want it: lifts the evacuation. n4 stays decommissioning.
    await store.remove('n4');
    await pass();
    assert.equal(adds, 1, 'evacuated once per decommissioning');
    // The RM fails over: the new one knows no nodes for a while.
    nodes = [];
    await pass();
    await pass();
    // Its NodeManagers register again; n4 is still decommissioning.
    nodes = all;
    const back = await pass();
    assert.equal(adds, 1, `evacuated again after the failover: ${back.hosts.find((h) => h.host === 'n4')?.why}`);
    assert.equal(back.hosts.find((h) => h.host === 'n4')?.health?.state, 'DECOMMISSIONING');
  });
});
