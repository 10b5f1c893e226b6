import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import axios from 'axios';
import YAML from 'yaml';
import { repoRoot } from '../support/paths';
import { startSimulator, RunningSimulator } from '../../src/sim/server';
import { AmrmProxyClient } from '../../src/yarn/amrm-client';
import { resolveApplicationId } from '../../src/yarn/resolve-app';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { rejects } from './assert-yarn';
import { startFixtureServer } from './fixture-server';


describe('yarn clients against the simulator over real HTTP', () => {
  let sim: RunningSimulator;
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 30, containers: 60, racks: 3, seed: 11, tickMs: 0 });
  });
  afterEach(async () => {
    await sim.close();
  });

  it('RM client reads nodes, app, attempts and live containers in both container shapes', async () => {
    const rm = new ResourceManagerClient({ addresses: sim.rmUrl, user: 'flink' });
    const nodes = await rm.nodes();
    assert.equal(nodes.length, 30);
    assert.equal(nodes[0].host, 'node0001.sim.local');
    assert.equal(nodes[0].rack, '/rack01');
    assert.equal(nodes[29].rack, '/rack03');
    assert.equal(nodes.reduce((s, n) => s + n.numContainers, 0), 61, '60 task managers + the AM');

    const appId = sim.cluster.applicationId;
    const app = await rm.application(appId);
    assert.equal(app.state, 'RUNNING');
    assert.equal(app.trackingUrl, `${sim.rmUrl}/proxy/${appId}/`, "the app's web UI behind the RM's proxy, as the RM reports it (the console links Flink's)");
    const attempts = await rm.attempts(appId);
    assert.equal(attempts.length, 1);
    const current = attempts[0].appAttemptId;

    const real = await rm.containers(appId, current);
    assert.equal(real.length, 61);
    sim.settings.rmContainersShape = 'documented';
    const documented = await rm.containers(appId, current);
    assert.deepEqual(documented, real);
    const byHost = new Map<string, number>();
    for (const c of real) byHost.set(c.host, (byHost.get(c.host) ?? 0) + 1);
    for (const n of nodes) assert.equal(byHost.get(n.host) ?? 0, n.numContainers, n.host);
    assert.equal(sim.cluster.counters.rmLastUser, 'flink');

    // a node state change shows in the node list
    sim.cluster.setNodeState('node0005.sim.local', 'DECOMMISSIONING');
    const after = await rm.nodes();
    assert.equal(after.find((n) => n.host === 'node0005.sim.local')?.state, 'DECOMMISSIONING');
  });

  it('RM client: cluster metrics count nodes by state, and the states filter narrows the node list on the RM side', async () => {
    const rm = new ResourceManagerClient({ addresses: sim.rmUrl });
    sim.cluster.setNodeState('node0005.sim.local', 'DECOMMISSIONING');
    sim.cluster.setNodeState('node0006.sim.local', 'UNHEALTHY');
    sim.cluster.setNodeState('node0007.sim.local', 'LOST');
    const m = await rm.clusterMetrics();
    assert.deepEqual(
      { active: m.activeNodes, decommissioning: m.decommissioningNodes, unhealthy: m.unhealthyNodes, lost: m.lostNodes, total: m.totalNodes },
      { active: 27, decommissioning: 1, unhealthy: 1, lost: 1, total: 30 },
    );
    const unusable = await rm.nodes(['UNHEALTHY', 'LOST', 'DECOMMISSIONING']);
    assert.deepEqual(unusable.map((n) => n.host).sort(), ['node0005.sim.local', 'node0006.sim.local', 'node0007.sim.local']);
    // The answer is about 1 KB whatever the size; the node list grows with every node.
    const metricsBytes = (await axios.get(`${sim.rmUrl}/ws/v1/cluster/metrics`, { responseType: 'text' })).data.length;
    const listBytes = (await axios.get(`${sim.rmUrl}/ws/v1/cluster/nodes`, { responseType: 'text' })).data.length;
    assert.ok(metricsBytes < 1024, `metrics ${metricsBytes} B`);
    assert.ok(listBytes > 10 * metricsBytes, `node list ${listBytes} B`);
  });

  it('RM client: one node by its NodeId (GET /ws/v1/cluster/nodes/{nodeid}); a NodeId the RM does not know is undefined, a bad one refused', async () => {
    const rm = new ResourceManagerClient({ addresses: sim.rmUrl });
    sim.cluster.setNodeState('node0005.sim.local', 'LOST');
    const id = sim.cluster.node('node0005.sim.local')?.nodeId ?? '';
    const n = await rm.node(id);
    assert.deepEqual({ host: n?.host, state: n?.state, id: n?.id }, { host: 'node0005.sim.local', state: 'LOST', id });
    assert.equal(await rm.node('ghost.example.com:8041'), undefined);
    await assert.rejects(rm.node('node0005.sim.local'), /not a NodeId/);
  });

  it('RM client: a single live container arrives as a bare object and still parses', async () => {
    await sim.close();
    sim = await startSimulator({ port: 0, nodes: 3, containers: 0, tickMs: 0 });
    const rm = new ResourceManagerClient({ addresses: sim.url });
    const cs = await rm.containers(sim.cluster.applicationId, sim.cluster.currentAttempt.id);
    assert.deepEqual(cs.map((c) => c.containerId), [sim.cluster.currentAttempt.amContainerId]);
  });

  it('AMRM client: attempt, blacklist round trip, "*" refused (400, not retriable), containers, release', async () => {
    const amrm = new AmrmProxyClient({ address: sim.amrmUrl.replace('http://', '') });
    const a = await amrm.attempt();
    assert.equal(a.applicationId, sim.cluster.applicationId);
    assert.equal(a.registered, true);
    assert.equal(a.amContainerId, sim.cluster.currentAttempt.amContainerId, "the proxy names the attempt's AM container");
    assert.deepEqual((await amrm.blacklist()).blacklist, []);
    await amrm.updateBlacklist({ additions: ['node0002.sim.local', 'node0003.sim.local'], removals: [] });
    await amrm.updateBlacklist({ additions: [], removals: ['node0003.sim.local'] });
    assert.deepEqual((await amrm.blacklist()).blacklist, ['node0002.sim.local']);

    await rejects(amrm.updateBlacklist({ additions: ['node0009.sim.local', '*'], removals: [] }), (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.retriable, false);
      assert.match(e.message, /Cannot add \* to the blacklist!/);
    });
    assert.deepEqual((await amrm.blacklist()).blacklist, ['node0002.sim.local'], 'the whole update was refused');

    const tms = await amrm.containers();
    assert.equal(tms.length, 60);
    assert.ok(tms.every((c) => c.host.endsWith('.sim.local') && c.nodeId === `${c.host}:8041`));
    const r = await amrm.release([tms[0].containerId, tms[1].containerId, tms[0].containerId]);
    assert.deepEqual(r.released, [tms[0].containerId, tms[1].containerId]);
    assert.deepEqual(r.unknown, [tms[0].containerId]);
    assert.deepEqual(await amrm.release([]), { released: [], unknown: [] });
    assert.equal(sim.cluster.counters.releaseCalls, 1, 'an empty release makes no call');
  });

  it('AMRM client: errors from an outage are retriable; a broken body is a clear error', async () => {
    const amrm = new AmrmProxyClient({ address: sim.url, timeoutMs: 2000 });
    sim.faults.set('amrm', { outage: 'unavailable' });
    await rejects(amrm.blacklist(), (e) => {
      assert.equal(e.status, 503);
      assert.equal(e.retriable, true);
      assert.match(e.message, /simulated outage/);
    });
    sim.faults.set('amrm', { outage: 'reset' });
    await rejects(amrm.attempt(), (e) => {
      assert.equal(e.status, undefined);
      assert.equal(e.retriable, true);
      assert.match(e.message, /cannot reach/);
    });
    sim.faults.clear('amrm');
    assert.deepEqual((await amrm.blacklist()).blacklist, []);

    const broken = await startFixtureServer({
      '/amrm/v1/blacklist': { body: '{"blacklist":"node1"}' },
      '/amrm/v1/attempt': { body: '<html>proxy error</html>' },
    });
    try {
      const bad = new AmrmProxyClient({ address: broken.url });
      await rejects(bad.blacklist(), (e) => assert.match(e.message, /"blacklist" is not a list of strings/));
      await rejects(bad.attempt(), (e) => assert.match(e.message, /not a JSON object: <html>proxy error/));
    } finally {
      await broken.close();
    }
  });

  it('resolve-app: config, then CONTAINER_ID, then the proxy; a bad value is an error, not a fall-through', async () => {
    const proxy = new AmrmProxyClient({ address: sim.url });
    assert.deepEqual(await resolveApplicationId({ configured: 'application_1652313600000_0042', env: {}, proxy }), {
      applicationId: 'application_1652313600000_0042',
      source: 'config',
    });
    assert.deepEqual(await resolveApplicationId({ configured: '', env: { CONTAINER_ID: 'container_e01_1652313600000_0007_01_000001' }, proxy }), {
      applicationId: 'application_1652313600000_0007',
      source: 'CONTAINER_ID',
    });
    const viaProxy = await resolveApplicationId({ env: {}, proxy });
    assert.equal(viaProxy.applicationId, sim.cluster.applicationId);
    assert.equal(viaProxy.source, 'proxy');
    assert.equal(viaProxy.appAttemptId, sim.cluster.currentAttempt.id);
    await rejects(resolveApplicationId({ configured: 'app_7', env: {} }), (e) => assert.match(e.message, /yarn\.application\.id/));
    await rejects(resolveApplicationId({ env: { CONTAINER_ID: 'container_x' } }), (e) => assert.match(e.message, /CONTAINER_ID/));
    await rejects(resolveApplicationId({ env: {} }), (e) => assert.match(e.message, /cannot tell the YARN application/));
  });
});

describe('docs/amrm-proxy.openapi.yaml and the simulator agree', () => {
  it('every path of the contract is served, and GET answers carry the required fields', async () => {
    const doc = YAML.parse(fs.readFileSync(path.join(repoRoot, 'docs', 'amrm-proxy.openapi.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json'?: { schema?: { $ref?: string; required?: string[] } } } }> }>>;
      components: { schemas: Record<string, { required?: string[] }> };
    };
    const sim = await startSimulator({ port: 0, nodes: 4, containers: 4, tickMs: 0 });
    try {
      const http = axios.create({ validateStatus: () => true });
      for (const [p, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          const schema = op.responses['200']?.content?.['application/json']?.schema;
          const required = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!].required : schema?.required;
          const body = p.endsWith('/release') ? { containerIds: [] } : p.endsWith('/blacklist') ? { blacklistAdditions: [] } : undefined;
          const r = await http.request({ method, url: sim.url + p, data: body });
          assert.equal(r.status, 200, `${method} ${p}`);
          for (const k of required ?? []) assert.ok(k in r.data, `${method} ${p}: missing ${k}`);
        }
      }
    } finally {
      await sim.close();
    }
  });
});
