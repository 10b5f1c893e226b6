/** The RM calls counted by call and result, and the detector's automatic blocks against its cap. */
import { strict as assert } from 'node:assert';
import { Counter, Registry } from 'prom-client';
import { countedResourceManager } from '../../src/sidecar/counted-rm';
import { registerDetectorCapGauges } from '../../src/detect/metrics';
import { ResourceManagerReader } from '../../src/yarn/types';

const fail = async (): Promise<never> => {
  throw new Error('RM down');
};

describe('metrics: RM calls and the detector cap', () => {
  it('counts each RM call by name and result and passes answers and errors through', async () => {
    const registry = new Registry();
    const requests = new Counter({ name: 'blocklist_rm_requests_total', help: 'h', labelNames: ['call', 'result'] as const, registers: [registry] });
    const rm = {
      clusterMetrics: async () => ({ activeNodes: 3 }),
      nodes: fail,
      clusterInfo: fail,
      application: fail,
      attempts: async (id: string) => [{ id }],
      containers: fail,
    } as unknown as ResourceManagerReader;
    const counted = countedResourceManager(rm, requests);
    assert.deepEqual(await counted.clusterMetrics(), { activeNodes: 3 });
    assert.deepEqual(await counted.attempts('application_1_0001'), [{ id: 'application_1_0001' }]);
    await assert.rejects(counted.nodes(), /RM down/);
    const text = await registry.metrics();
    assert.match(text, /blocklist_rm_requests_total\{call="clusterMetrics",result="success"\} 1/);
    assert.match(text, /blocklist_rm_requests_total\{call="attempts",result="success"\} 1/);
    assert.match(text, /blocklist_rm_requests_total\{call="nodes",result="failure"\} 1/);
    assert.match(text, /blocklist_rm_requests_total\{call="containers",result="failure"\} 0/, 'every call is there from the start');
    assert.equal(counted.node, undefined, 'a reader without single nodes gets none (the engine then reads the list)');
  });

  it('passes single-node reads through and counts them (#31.8: without, every refresh read the whole list)', async () => {
    const registry = new Registry();
    const requests = new Counter({ name: 'blocklist_rm_requests_total', help: 'h', labelNames: ['call', 'result'] as const, registers: [registry] });
    const rm = { node: async (id: string) => ({ id, host: 'h1' }) } as unknown as ResourceManagerReader;
    const counted = countedResourceManager(rm, requests);
    assert.deepEqual(await counted.node?.('h1:8041'), { id: 'h1:8041', host: 'h1' });
    assert.match(await registry.metrics(), /blocklist_rm_requests_total\{call="node",result="success"\} 1/);
  });

  it('the detector cap gauges read its last report, and nothing before it', async () => {
    const registry = new Registry();
    let cap: { max: number; inUse: number } | undefined;
    registerDetectorCapGauges(registry, () => cap);
    assert.match(await registry.metrics(), /^blocklist_detector_automatic_blocks 0$/m);
    cap = { max: 4, inUse: 4 };
    const text = await registry.metrics();
    assert.match(text, /^blocklist_detector_automatic_blocks 4$/m);
    assert.match(text, /^blocklist_detector_automatic_blocks_limit 4$/m);
  });
});
