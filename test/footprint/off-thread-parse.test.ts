/**
 * The node list parsed in a worker thread: the same nodes as the inline parser, the same errors,
 * and through the RM client against the real simulator.
 */
import { strict as assert } from 'node:assert';
import { parseNodes, RmShapeError } from '../../src/yarn/rm-json';
import { NotJsonError, OFF_THREAD_BYTES, parseNodesText, stopParsingWorker } from '../../src/yarn/off-thread';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { startSimulator } from '../../src/sim/server';

function nodesBody(n: number, tweak?: (node: Record<string, unknown>, i: number) => void): string {
  const node = [];
  for (let i = 0; i < n; i++) {
    const x: Record<string, unknown> = {
      id: `host${i}.example.com:8041`,
      nodeHostName: `host${i}.example.com`,
      rack: `/rack${i % 7}`,
      state: i % 50 === 0 ? 'LOST' : 'RUNNING',
      nodeHTTPAddress: i % 50 === 0 ? '' : `host${i}.example.com:8042`,
      healthReport: i % 97 === 0 ? 'disk\nfull \u0001 tab\t' : '',
      numContainers: String(i % 5),
      usedMemoryMB: 1024,
      availMemoryMB: 4096,
    };
    tweak?.(x, i);
    node.push(x);
  }
  return JSON.stringify({ nodes: { node } });
}

describe('RM node list parsed off the event loop (worker thread)', () => {
  after(() => stopParsingWorker());

  it('gives the same nodes as the inline parser for a body big enough to go to the worker', async () => {
    const text = nodesBody(3000);
    assert.ok(text.length > OFF_THREAD_BYTES);
    const want = parseNodes(JSON.parse(text)).map((n) => ({ ...n, healthReport: n.healthReport.replace(/\u0001/g, ' ') }));
    assert.deepEqual(await parseNodesText(text), want);
  });

  it('reports the same shape errors and non-JSON bodies', async () => {
    const bad = nodesBody(3000, (x, i) => {
      if (i === 2500) x.state = 'ASLEEP';
    });
    await assert.rejects(parseNodesText(bad), (e: unknown) => e instanceof RmShapeError && /nodes\.node\[2500\]\.state 'ASLEEP'/.test(e.message));
    await assert.rejects(parseNodesText('<html>' + 'x'.repeat(OFF_THREAD_BYTES) + '</html>'), NotJsonError);
  });

  it('ResourceManagerClient.nodes() reads 3,000 simulated nodes through it', async () => {
    const sim = await startSimulator({ port: 0, nodes: 3000, containers: 10, tickMs: 0, seed: 2 });
    try {
      const rm = new ResourceManagerClient({ addresses: sim.rmUrl });
      const nodes = await rm.nodes();
      assert.equal(nodes.length, 3000);
      assert.deepEqual(new Set(nodes.map((n) => n.host)), new Set(sim.cluster.nodes.map((n) => n.host)));
      const running = await rm.nodes(['RUNNING']);
      assert.equal(running.length, sim.cluster.nodes.filter((n) => n.state === 'RUNNING').length);
    } finally {
      await sim.close();
    }
  });
});
