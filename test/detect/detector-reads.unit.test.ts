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
import { unitDetector } from './unit-detector';
import { detectorSettingsFromConfig } from '../../src/sidecar/detector-factory';
import { countNodeStates } from '../../src/yarn/node-counts';
import { ClusterNode } from '../../src/yarn/types';
import { DetectorSource } from '../../src/detect/source';
import { Failure } from '../../src/detect/types';
import { MemoryStore } from '../../src/store/memory-store';
import { newItem } from '../../src/model/merge';

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

  it('a quiet pass writes no state: the record is written when something changed, not every poll', async () => {
    const clock = new FakeClock(1_716_900_000_000);
    const nodes: ClusterNode[] = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
    const records = new Map<string, string>();
    const writes: string[] = [];
    let pending: Failure[] = [];
    const source: DetectorSource = {
      name: 'test',
      poll: async () => {
        const failures = pending;
        pending = [];
        return { failures };
      },
    };
    const settings = detectorSettingsFromConfig(loadConfig({ dynamic: { 'cluster.resource-blocklist.detector.mode': 'shadow' } }).values);
    const deps = {
      settings,
      clock,
      logger: silentLogger,
      store: {
        list: async () => [],
        readRecord: async (k: string) => records.get(k),
        writeRecord: async (k: string, v: string) => {
          writes.push(k);
          records.set(k, v);
        },
      },
      addItem: async () => ({ outcome: 'created' as const }),
      proxy: { containers: async () => [] },
      nodes: async () => nodes,
      sources: [source],
      applicationId: () => 'application_1652313600000_0001',
    };
    const d = new Detector(deps);
    for (let i = 0; i < 10; i++) {
      await d.pass();
      clock.advance(10_000);
    }
    assert.equal(writes.length, 1, 'the first pass stores the state; nine quiet ones write nothing');
    pending = [{ key: 'test:1', source: 'test', host: 'n3', at: clock.now() - 1, group: 'test:1', signature: 'x', summary: 'x' }];
    await d.pass();
    assert.equal(writes.length, 2, 'an incident is written');
    await d.pass();
    assert.equal(writes.length, 2);
    // A restarted detector reads the record and writes nothing until something changes.
    const again = new Detector(deps);
    await again.pass();
    assert.equal(writes.length, 2);
    assert.equal(again.view().report?.hosts.find((h) => h.host === 'n3')?.score, 1, 'the incident survived the restart');
  });

  it("lists the store's items again only when the store's version moved (a thousand jobs' quiet passes read no item)", async () => {
    const clock = new FakeClock(1_716_900_000_000);
    const nodes: ClusterNode[] = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}:8041`, host: `n${i}`, rack: '/r', state: 'RUNNING', healthReport: '', numContainers: 0 }));
    const store = new MemoryStore({ clock });
    const pending: Failure[] = [];
    let lists = 0;
    const realList = store.list.bind(store);
    store.list = async () => {
      lists++;
      return realList();
    };
    const d = unitDetector({ clock, store, nodeList: nodes, sources: [{ name: 'test', poll: async () => ({ failures: pending.splice(0) }) }] });
    for (let i = 0; i < 10; i++) {
      await d.pass();
      clock.advance(10_000);
    }
    assert.equal(lists, 1, 'ten quiet passes, one listing');
    // An operator blocks n5: the next pass lists again and sees it.
    await store.add({ item: newItem({ id: 'n5', kind: 'node', node: 'n5', action: 'MARK_BLOCKED', end: { type: 'after', ms: 60_000 }, cause: 'ops', scope: 'cluster', allowMerge: false }, clock.now(), { by: 'alice', from: 'cli' }), allowMerge: false });
    for (let i = 0; i < 3; i++) pending.push({ key: `test:${i}`, source: 'test', host: 'n5', at: clock.now() - 10 + i, group: `test:${i}`, signature: 'x', summary: 'x' });
    const r = await d.pass();
    assert.equal(lists, 2);
    const n5 = r!.hosts.find((h) => h.host === 'n5')!;
    assert.equal(n5.decision, 'blocked');
    assert.match(n5.why, /blocked by alice/);
    // The block ends by the clock, without a store change: the pass goes by the time, not the listing.
    clock.advance(60_000);
    await d.pass();
    assert.equal(lists, 2);
  });
});
