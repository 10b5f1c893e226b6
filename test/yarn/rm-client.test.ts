import { strict as assert } from 'node:assert';
import { ResourceManagerClient, normaliseBaseUrl } from '../../src/yarn/rm-client';
import { rejects } from './assert-yarn';
import { FixtureServer, deadPort, startFixtureServer } from './fixture-server';

const APP = 'application_1326821518301_0005';
const APP7 = 'application_1652313600000_0007';
const ATT7 = 'appattempt_1652313600000_0007_000002';


describe('yarn/rm-client against fixtures (Hadoop ResourceManagerRest.md samples and real-RM variants)', () => {
  let srv: FixtureServer;
  afterEach(async () => {
    await srv?.close();
  });

  it('reads the documented samples: cluster info, nodes, application, attempts (numeric id only), containers wrapper', async () => {
    srv = await startFixtureServer({
      '/ws/v1/cluster/info': { fixture: 'cluster-info.json' },
      '/ws/v1/cluster/nodes': { fixture: 'nodes.json' },
      [`/ws/v1/cluster/apps/${APP}`]: { fixture: 'app.json' },
      [`/ws/v1/cluster/apps/${APP}/appattempts`]: { fixture: 'appattempts-documented.json' },
      [`/ws/v1/cluster/apps/${APP}/appattempts/appattempt_1326821518301_0005_000001/containers`]: { fixture: 'containers-documented.json' },
    });
    const rm = new ResourceManagerClient({ addresses: srv.url });
    const info = await rm.clusterInfo();
    assert.deepEqual(info, { id: '1324053971963', state: 'STARTED', haState: 'ACTIVE', resourceManagerVersion: '0.23.1-SNAPSHOT' });

    const nodes = await rm.nodes();
    assert.equal(nodes.length, 2);
    assert.deepEqual(nodes[0], { id: 'h2:1235', host: 'h2', rack: '/default-rack', state: 'NEW', healthReport: 'Healthy', numContainers: 0, nodeHTTPAddress: 'h2:2' });
    // every state: no states= filter is sent (RMWebServices#getNodes then accepts all NodeStates)
    assert.ok(srv.seen.includes('/ws/v1/cluster/nodes'));

    const app = await rm.application(APP);
    assert.equal(app.state, 'FINISHED');
    assert.equal(app.queue, 'a1');

    const attempts = await rm.attempts(APP);
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].appAttemptId, 'appattempt_1326821518301_0005_000001', 'derived from the numeric id');
    assert.equal(attempts[0].containerId, 'container_1326821518301_0005_01_000001');
    assert.equal(attempts[0].startTime, 1326381444693);

    const cs = await rm.containers(APP, attempts[0].appAttemptId);
    assert.deepEqual(
      cs.map((c) => [c.containerId, c.host, c.nodeId, c.state]),
      [
        ['container_1326821518301_0005_01_000001', 'host.domain.com', 'host.domain.com:8041', 'RUNNING'],
        ['container_1326821518301_0005_01_000002', 'h2', 'h2:1235', 'RUNNING'],
      ],
    );
  });

  it('accepts what real RMs send: string values, unwrapped {"container":[…]}, a single bare object, {"nodes":null}', async () => {
    srv = await startFixtureServer({
      '/ws/v1/cluster/nodes': { fixture: 'nodes-single-strings.json' },
      [`/ws/v1/cluster/apps/${APP7}/appattempts`]: { fixture: 'appattempts-newer.json' },
      [`/ws/v1/cluster/apps/${APP7}/appattempts/${ATT7}/containers`]: { fixture: 'containers-real-strings.json' },
    });
    const rm = new ResourceManagerClient({ addresses: [srv.url] });
    const nodes = await rm.nodes();
    assert.deepEqual(nodes, [
      { id: 'worker-17.example.com:45454', host: 'worker-17.example.com', rack: '/rack-7', state: 'DECOMMISSIONING', healthReport: 'disk /data3 is full', numContainers: 3, nodeHTTPAddress: 'worker-17.example.com:8042' },
    ]);

    const attempts = await rm.attempts(APP7);
    assert.deepEqual(attempts.map((a) => a.appAttemptId), ['appattempt_1652313600000_0007_000001', ATT7], 'sorted, current last');
    assert.deepEqual(attempts[1].blacklistedNodes, ['worker-17.example.com', 'worker-18.example.com']);
    assert.equal(attempts[1].state, 'RUNNING');
    assert.deepEqual(attempts[0].blacklistedNodes, []);

    const cs = await rm.containers(APP7, ATT7);
    assert.equal(cs.length, 3);
    assert.deepEqual(cs[1], {
      containerId: 'container_e01_1652313600000_0007_01_000002',
      nodeId: 'worker-17.example.com:45454',
      host: 'worker-17.example.com',
      state: 'RUNNING',
      nodeHttpAddress: 'http://worker-17.example.com:8042',
    });

    srv.routes.set(`/ws/v1/cluster/apps/${APP7}/appattempts/${ATT7}/containers`, { fixture: 'containers-single.json' });
    const one = await rm.containers(APP7, ATT7);
    assert.deepEqual(one.map((c) => c.containerId), ['container_e02_1652313600000_0007_02_000001']);

    srv.routes.set(`/ws/v1/cluster/apps/${APP7}/appattempts/${ATT7}/containers`, { body: '{"containers":null}' });
    assert.deepEqual(await rm.containers(APP7, ATT7), []);
    srv.routes.set(`/ws/v1/cluster/apps/${APP7}/appattempts/${ATT7}/containers`, { body: '{}' });
    assert.deepEqual(await rm.containers(APP7, ATT7), []);

    srv.routes.set('/ws/v1/cluster/nodes', { fixture: 'nodes-null.json' });
    assert.deepEqual(await rm.nodes(), []);
  });

  it('reads cluster metrics: the documented sample, and strings with a count an older RM lacks', async () => {
    srv = await startFixtureServer({ '/ws/v1/cluster/metrics': { fixture: 'cluster-metrics.json' } });
    const m = await new ResourceManagerClient({ addresses: srv.url }).clusterMetrics();
    assert.deepEqual(m, { activeNodes: 1, decommissioningNodes: 0, decommissionedNodes: 0, lostNodes: 0, unhealthyNodes: 0, rebootedNodes: 0, shutdownNodes: 0, totalNodes: 1 });
    await srv.close();
    srv = await startFixtureServer({ '/ws/v1/cluster/metrics': { fixture: 'cluster-metrics-strings.json' } });
    const s = await new ResourceManagerClient({ addresses: srv.url }).clusterMetrics();
    assert.equal(s.activeNodes, 4990);
    assert.equal(s.shutdownNodes, 0);
    assert.equal(s.totalNodes, 5000);
  });

  it('turns a RemoteException into a readable, non-retriable error', async () => {
    srv = await startFixtureServer({
      '/ws/v1/cluster/apps/application_1326821518301_0099': { status: 404, fixture: 'remote-exception-notfound.json' },
    });
    const rm = new ResourceManagerClient({ addresses: srv.url });
    await rejects(rm.application('application_1326821518301_0099'), (e) => {
      assert.equal(e.status, 404);
      assert.equal(e.retriable, false);
      assert.match(e.message, /404 NotFoundException: app with id: application_1326821518301_0099 not found/);
      assert.doesNotMatch(e.message, /java\.lang\.Exception/);
    });
  });

  it('refuses broken bodies with a clear YarnCallError (never a TypeError)', async () => {
    srv = await startFixtureServer({
      '/ws/v1/cluster/info': { body: '<html><body>Login required</body></html>', headers: { 'Content-Type': 'text/html' } },
      '/ws/v1/cluster/nodes': { body: '{"nodes":{"node":[{"id":"h1:1","nodeHostName":"h1","state":"ON_FIRE"}]}}' },
      [`/ws/v1/cluster/apps/${APP7}/appattempts/${ATT7}/containers`]: { fixture: 'containers-bad-id.json' },
      [`/ws/v1/cluster/apps/${APP7}`]: { body: '{"app":{"id":"application_1652313600000_0008","state":"RUNNING"}}' },
      [`/ws/v1/cluster/apps/${APP7}/appattempts`]: { body: '[1,2,3]' },
    });
    const rm = new ResourceManagerClient({ addresses: srv.url });
    await rejects(rm.clusterInfo(), (e) => assert.match(e.message, /not JSON: <html>/));
    await rejects(rm.nodes(), (e) => assert.match(e.message, /nodes\.node\[0\]\.state 'ON_FIRE' is not a YARN NodeState/));
    await rejects(rm.containers(APP7, ATT7), (e) => assert.match(e.message, /container\[1\]\.containerId: 'task_1652313600000_0007_m_000001' is not a YARN container id/));
    await rejects(rm.application(APP7), (e) => assert.match(e.message, /not the application asked for/));
    await rejects(rm.attempts(APP7), (e) => assert.match(e.message, /expected a JSON object, got an array/));
    // bad input ids are refused before any call, and are not retriable
    const before = srv.seen.length;
    await rejects(rm.application('app_1'), (e) => assert.equal(e.retriable, false));
    await rejects(rm.containers(APP7, 'appattempt_1652313600000_0008_000001'), (e) => assert.match(e.message, /does not belong/));
    assert.equal(srv.seen.length, before);
  });

  it("follows a standby RM's 307 to the active one, keeps ?user.name=, and asks the active one first next time", async () => {
    const active = await startFixtureServer({ '/ws/v1/cluster/info': { fixture: 'cluster-info.json' } });
    srv = await startFixtureServer();
    srv.routes.set('/ws/v1/cluster/info', { status: 307, body: 'This is standby RM. The redirect url is: ' + active.url, headers: { Location: `${active.url}/ws/v1/cluster/info?user.name=flink` } });
    try {
      const rm = new ResourceManagerClient({ addresses: [srv.url, active.url], user: 'flink' });
      assert.equal((await rm.clusterInfo()).state, 'STARTED');
      assert.deepEqual(srv.seen, ['/ws/v1/cluster/info?user.name=flink']);
      assert.deepEqual(active.seen, ['/ws/v1/cluster/info?user.name=flink']);
      assert.equal(rm.activeAddress, active.url);
      await rm.clusterInfo();
      assert.equal(srv.seen.length, 1, 'the standby is not asked again');

      // a Location without the query still gets user.name; a relative Location resolves against the RM
      const rm2 = new ResourceManagerClient({ addresses: [srv.url], user: 'alice' });
      srv.routes.set('/ws/v1/cluster/info', { status: 307, headers: { Location: '/ws/v1/cluster/info2' } });
      srv.routes.set('/ws/v1/cluster/info2', { fixture: 'cluster-info.json' });
      await rm2.clusterInfo();
      assert.equal(srv.seen[srv.seen.length - 1], '/ws/v1/cluster/info2?user.name=alice');
    } finally {
      await active.close();
    }
  });

  it('gives up on a redirect loop with a clear message', async () => {
    srv = await startFixtureServer();
    srv.routes.set('/ws/v1/cluster/info', { status: 307, headers: { Location: `${srv.url}/ws/v1/cluster/info` } });
    const rm = new ResourceManagerClient({ addresses: srv.url, maxRedirects: 2 });
    await rejects(rm.clusterInfo(), (e) => assert.match(e.message, /more than 2 redirects/));
    assert.equal(srv.seen.length, 3);
  });

  it('HA list: a dead RM is skipped, the next one answers; all dead → one error naming each', async () => {
    srv = await startFixtureServer({ '/ws/v1/cluster/info': { fixture: 'cluster-info.json' } });
    const dead = await deadPort();
    const rm = new ResourceManagerClient({ addresses: `127.0.0.1:${dead}, ${srv.url}` });
    assert.equal((await rm.clusterInfo()).state, 'STARTED');
    assert.equal(rm.activeAddress, srv.url);

    const dead2 = await deadPort();
    const none = new ResourceManagerClient({ addresses: [`127.0.0.1:${dead}`, `http://127.0.0.1:${dead2}`] });
    await rejects(none.clusterInfo(), (e) => {
      assert.equal(e.retriable, true);
      assert.match(e.message, /no ResourceManager reachable/);
      assert.ok(e.message.includes(`127.0.0.1:${dead}`) && e.message.includes(`127.0.0.1:${dead2}`));
    });
  });

  it('times out a silent RM per call, and moves on to the next', async () => {
    srv = await startFixtureServer({ '/ws/v1/cluster/info': { hang: true } });
    const good = await startFixtureServer({ '/ws/v1/cluster/info': { fixture: 'cluster-info.json' } });
    try {
      const solo = new ResourceManagerClient({ addresses: srv.url, timeoutMs: 150 });
      await rejects(solo.clusterInfo(), (e) => assert.match(e.message, /no answer from .* within 150 ms/));
      const ha = new ResourceManagerClient({ addresses: [srv.url, good.url], timeoutMs: 150 });
      assert.equal((await ha.clusterInfo()).state, 'STARTED');
    } finally {
      await good.close();
    }
  });

  it('normalises addresses', () => {
    assert.equal(normaliseBaseUrl('rm1:8088'), 'http://rm1:8088');
    assert.equal(normaliseBaseUrl('https://rm1:8090/'), 'https://rm1:8090');
    assert.throws(() => new ResourceManagerClient({ addresses: ' , ' }), /no RM web address/);
  });
});
