/**
 * What the detector costs the RM: the automatic-block cap's RUNNING count comes from the cluster
 * metrics (about 1 KB) every pass; the node list (megabytes at 10,000 nodes) only answers "does the
 * RM know this host?" and is re-read at most every 10 minutes.
 */
import { strict as assert } from 'node:assert';
import { loadConfig } from '../../src/config/config';
import { FakeClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Detector } from '../../src/detect/detector';
import { detectorSettingsFromConfig } from '../../src/sidecar/detector-factory';
import { countNodeStates } from '../../src/yarn/node-counts';
import { ClusterNode } from '../../src/yarn/types';

describe('detector: RM reads', () => {
  it('cluster metrics every pass, the node list at most every 10 minutes', async () => {
    const clock = new FakeClock();
    const nodes: ClusterNode[] = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
    let nodeReads = 0;
    let metricReads = 0;
    const settings = detectorSettingsFromConfig(loadConfig({ dynamic: { 'cluster.resource-blocklist.detector.mode': 'shadow' } }).values);
    const d = new Detector({
      settings,
      clock,
      logger: silentLogger,
      store: { list: async () => [] },
      addItem: async () => ({ outcome: 'created' }),
      proxy: { containers: async () => [] },
      nodes: async () => {
        nodeReads++;
        return nodes;
      },
      clusterMetrics: async () => {
        metricReads++;
        return countNodeStates(nodes);
      },
      sources: [],
      applicationId: () => 'application_1652313600000_0001',
    });
    for (let i = 0; i < 5; i++) {
      await d.pass();
      clock.advance(60_000);
    }
    assert.equal(metricReads, 5);
    assert.equal(nodeReads, 1, 'one node list read in 5 minutes');
    // A node leaves RUNNING: the next pass's cap counts 19 without a node-list read.
    nodes[0].state = 'LOST';
    const r = await d.pass();
    assert.equal(nodeReads, 1);
    assert.equal(r?.cap.max, Math.floor(19 * settings.maxBlockedFraction));
    clock.advance(10 * 60_000);
    await d.pass();
    assert.equal(nodeReads, 2, 'the list again after 10 minutes');
  });
});
