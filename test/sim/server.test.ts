import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import axios from 'axios';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { YarnCallError } from '../../src/yarn/types';
import { cliMain } from '../support/paths';

const http = axios.create({ validateStatus: () => true });

describe('sim/server: the simulator over HTTP (AMRM face, control API, faults)', () => {
  let sim: RunningSimulator;
  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 20, containers: 40, racks: 2, seed: 4, tickMs: 0 });
  });
  afterEach(async () => {
    await sim.close();
  });

  it('POST /amrm/v1/blacklist: removal wins; "*" → 400 with YARN\'s message and nothing applied; bad bodies → 400', async () => {
    let r = await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: ['node0001.sim.local', 'node0002.sim.local'], blacklistRemovals: ['node0002.sim.local'] });
    assert.equal(r.status, 200);
    const { etag, previousEtag, ...view } = r.data;
    assert.deepEqual(view, { blacklist: ['node0001.sim.local'], owners: { blocklist: ['node0001.sim.local'] } });
    assert.notEqual(etag, previousEtag, 'the answer names the version it made and the one it changed');

    r = await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: ['node0003.sim.local', '*'], blacklistRemovals: ['node0001.sim.local'] });
    assert.equal(r.status, 400);
    assert.deepEqual(r.data, { errors: ['Cannot add * to the blacklist!'] });
    assert.deepEqual((await http.get(`${sim.url}/amrm/v1/blacklist`)).data, { blacklist: ['node0001.sim.local'], owners: { blocklist: ['node0001.sim.local'] } });

    for (const bad of [[], { blacklistAdditions: 'node1' }, { blacklistAdditions: [''] }, { blacklistRemovals: [7] }]) {
      r = await http.post(`${sim.url}/amrm/v1/blacklist`, bad);
      assert.equal(r.status, 400, JSON.stringify(bad));
      assert.ok(Array.isArray(r.data.errors));
    }
    const counters = (await http.get(`${sim.url}/sim/v1/counters`)).data;
    assert.equal(counters.blacklistPosts, 1);
    assert.equal(counters.blacklistPostsRejected, 1);
  });

  it('blacklist reaches the scheduler on the next allocation round; the RM shows it on the attempt', async () => {
    await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: ['node0004.sim.local', '/rack02'] });
    let state = (await http.get(`${sim.url}/sim/v1/state`)).data;
    assert.deepEqual(state.schedulerBlacklist, []);
    assert.deepEqual(state.pendingBlacklist.additions, ['/rack02', 'node0004.sim.local']);
    await http.post(`${sim.url}/sim/v1/allocate`);
    state = (await http.get(`${sim.url}/sim/v1/state`)).data;
    assert.deepEqual(state.schedulerBlacklist, ['/rack02', 'node0004.sim.local']);
    const rm = new ResourceManagerClient({ addresses: sim.url });
    const attempts = await rm.attempts(sim.cluster.applicationId);
    assert.deepEqual(attempts[0].blacklistedNodes, ['/rack02', 'node0004.sim.local']);
  });

  it('released containers are replaced by POST /sim/v1/allocate, never on the blacklisted host or rack', async () => {
    await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: ['node0001.sim.local', '/rack02'] });
    await http.post(`${sim.url}/sim/v1/allocate`);
    const tms: { containerId: string }[] = (await http.get(`${sim.url}/amrm/v1/containers`)).data.containers;
    const ids = tms.slice(0, 10).map((c) => c.containerId);
    const rel = await http.post(`${sim.url}/amrm/v1/containers/release`, { containerIds: ids });
    assert.deepEqual(rel.data, { released: ids, unknown: [] });
    assert.equal((await http.get(`${sim.url}/amrm/v1/containers`)).data.containers.length, 30);
    const alloc = (await http.post(`${sim.url}/sim/v1/allocate`)).data;
    assert.deepEqual(alloc, { placed: 10, pending: 0, runningContainers: 40 });
    const now: { containerId: string; nodeId: string }[] = (await http.get(`${sim.url}/amrm/v1/containers`)).data.containers;
    const fresh = now.filter((c) => !tms.some((t) => t.containerId === c.containerId));
    assert.equal(fresh.length, 10);
    for (const c of fresh) {
      const host = c.nodeId.split(':')[0];
      const n = (await http.get(`${sim.url}/sim/v1/nodes/${host}`)).data;
      assert.notEqual(host, 'node0001.sim.local');
      assert.notEqual(n.rack, '/rack02');
    }
    const counters = (await http.get(`${sim.url}/sim/v1/counters`)).data;
    assert.equal(counters.releaseCalls, 1);
    assert.deepEqual(counters.releasedContainerIds, ids);
  });

  it('control API: node state, kill, new attempt (switchable blacklist), target, options, 404/400 answers', async () => {
    const host = 'node0007.sim.local';
    const onNode = (await http.get(`${sim.url}/sim/v1/nodes/${host}`)).data.containers.length;
    let r = await http.put(`${sim.url}/sim/v1/nodes/${host}/state`, { state: 'lost' });
    assert.equal(r.status, 200);
    assert.equal(r.data.state, 'LOST');
    assert.equal(r.data.containersLost, onNode);
    assert.equal((await http.put(`${sim.url}/sim/v1/nodes/${host}/state`, { state: 'BROKEN' })).status, 400);
    assert.equal((await http.put(`${sim.url}/sim/v1/nodes/nope/state`, { state: 'LOST' })).status, 404);

    const victim = sim.cluster.taskManagers()[0].id;
    assert.equal((await http.post(`${sim.url}/sim/v1/containers/${victim}/kill`)).status, 200);
    assert.equal((await http.post(`${sim.url}/sim/v1/containers/${victim}/kill`)).status, 404);

    await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: ['node0002.sim.local'] });
    await http.post(`${sim.url}/sim/v1/allocate`);
    r = await http.post(`${sim.url}/sim/v1/attempts`, { blacklist: 'scheduler-only' });
    assert.equal(r.data.appAttemptId, 'appattempt_1652313600000_0001_000002');
    let state = (await http.get(`${sim.url}/sim/v1/state`)).data;
    assert.deepEqual(state.clientBlacklist, []);
    assert.deepEqual(state.schedulerBlacklist, ['node0002.sim.local']);
    assert.equal((await http.get(`${sim.url}/amrm/v1/attempt`)).data.appAttemptId, 'appattempt_1652313600000_0001_000002');
    assert.equal((await http.post(`${sim.url}/sim/v1/attempts`, { blacklist: 'sometimes' })).status, 400);

    r = await http.put(`${sim.url}/sim/v1/options`, { newAttemptBlacklist: 'inherit', rmContainersShape: 'documented' });
    assert.equal(r.data.newAttemptBlacklist, 'inherit');
    const rmBody = (await http.get(`${sim.url}/ws/v1/cluster/apps/${sim.cluster.applicationId}/appattempts/${sim.cluster.currentAttempt.id}/containers`)).data;
    assert.ok(Array.isArray(rmBody.containers.container));

    r = await http.put(`${sim.url}/sim/v1/app`, { containers: 5 });
    assert.deepEqual(r.data, { targetContainers: 5, runningContainers: 5 });
    state = (await http.get(`${sim.url}/sim/v1/state`)).data;
    assert.equal(state.nodeStates.LOST, 1);
    assert.equal(state.runningContainers, 5);

    // unknown paths answer in the face's error shape
    const rm404 = await http.get(`${sim.url}/ws/v1/cluster/nope`);
    assert.equal(rm404.status, 404);
    assert.equal(rm404.data.RemoteException.exception, 'NotFoundException');
    assert.equal((await http.get(`${sim.url}/ws/v1/cluster/nodes?states=RUNNING,BOGUS`)).status, 400);
    const lost = (await http.get(`${sim.url}/ws/v1/cluster/nodes?states=LOST`)).data;
    assert.equal(lost.nodes.node.length, 1);
    assert.equal(lost.nodes.node[0].nodeHTTPAddress, '', 'inactive nodes have no HTTP address');
    assert.deepEqual((await http.get(`${sim.url}/ws/v1/cluster/nodes?states=SHUTDOWN`)).data, { nodes: null });
  });

  it('fault injection on the RM face: error rate, latency, outage — and it stops; the control API is never faulted', async () => {
    const rm = new ResourceManagerClient({ addresses: sim.url, timeoutMs: 2000 });
    let r = await http.put(`${sim.url}/sim/v1/faults/rm`, { errorRate: 1 });
    assert.equal(r.status, 200);
    await assert.rejects(rm.nodes(), (e: unknown) => e instanceof YarnCallError && e.status === 500 && e.retriable && /simulated failure/.test(e.message));
    assert.equal((await http.get(`${sim.url}/sim/v1/state`)).status, 200, 'control API unaffected');
    assert.equal((await http.get(`${sim.url}/amrm/v1/blacklist`)).status, 200, 'the other face unaffected');

    await http.put(`${sim.url}/sim/v1/faults/rm`, { latencyMs: 120 });
    const t0 = Date.now();
    assert.equal((await rm.nodes()).length, 20);
    assert.ok(Date.now() - t0 >= 100, 'latency applied');

    await http.put(`${sim.url}/sim/v1/faults/rm`, { outage: 'reset' });
    await assert.rejects(rm.clusterInfo(), (e: unknown) => e instanceof YarnCallError && /cannot reach/.test(e.message));

    assert.equal((await http.put(`${sim.url}/sim/v1/faults/rm`, { errorRate: 2 })).status, 400);
    assert.equal((await http.put(`${sim.url}/sim/v1/faults/xx`, {})).status, 404);

    r = await http.delete(`${sim.url}/sim/v1/faults/rm`);
    assert.deepEqual(r.data, { rm: {}, amrm: {} });
    assert.equal((await rm.clusterInfo()).haState, 'ACTIVE');
    const counters = (await http.get(`${sim.url}/sim/v1/counters`)).data;
    assert.ok(counters.faultsInjected.rm >= 2);
    assert.equal((await http.post(`${sim.url}/sim/v1/counters/reset`)).data.rmRequests, 0);
  });

  it('a partial error rate fails some calls, reproducibly for a seed', async () => {
    const run = async (): Promise<string> => {
      const s = await startSimulator({ port: 0, nodes: 2, containers: 1, seed: 77, tickMs: 0 });
      try {
        s.faults.set('amrm', { errorRate: 0.5 });
        const codes: number[] = [];
        for (let i = 0; i < 20; i++) codes.push((await http.get(`${s.url}/amrm/v1/blacklist`)).status);
        return codes.join(',');
      } finally {
        await s.close();
      }
    };
    const a = await run();
    assert.equal(a, await run());
    assert.ok(a.includes('500') && a.includes('200'), a);
  });

  it('10,000 nodes and 50,000 containers: starts and serves the RM and proxy faces', async () => {
    await sim.close();
    sim = await startSimulator({ port: 0, nodes: 10_000, containers: 50_000, seed: 1, tickMs: 0 });
    assert.equal(sim.cluster.taskManagerCount, 50_000);
    const rm = new ResourceManagerClient({ addresses: sim.url });
    const nodes = await rm.nodes();
    assert.equal(nodes.length, 10_000);
    assert.equal(nodes[9_999].host, 'node10000.sim.local');
    const tms = (await http.get(`${sim.url}/amrm/v1/containers`)).data.containers;
    assert.equal(tms.length, 50_000);
    const ids = tms.slice(0, 5_000).map((c: { containerId: string }) => c.containerId);
    await http.post(`${sim.url}/amrm/v1/blacklist`, { blacklistAdditions: nodes.slice(0, 3_000).map((n) => n.host) });
    assert.deepEqual((await http.post(`${sim.url}/amrm/v1/containers/release`, { containerIds: ids })).data.unknown, []);
    assert.equal((await http.post(`${sim.url}/sim/v1/allocate`)).data.placed, 5_000);
    const blocked = new Set(nodes.slice(0, 3_000).map((n) => n.host));
    const before = new Set<string>(tms.map((c: { containerId: string }) => c.containerId));
    const fresh = sim.cluster.taskManagers().filter((t) => !before.has(t.id));
    assert.equal(fresh.length, 5_000);
    assert.ok(fresh.every((t) => !blocked.has(t.host)), 'no replacement on the 3,000 blacklisted hosts');
  });
});

describe('blocklist yarn-sim (CLI)', () => {
  it('prints its URLs, serves, and stops on SIGTERM', async function () {
    const child = spawn(process.execPath, [cliMain, 'yarn-sim', '--port', '0', '--nodes', '12', '--containers', '24', '--seed', '3', '--tick', '50'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 10_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /yarn-sim listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m && out.includes('application:')) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      const state = (await http.get(`${url}/sim/v1/state`)).data;
      assert.equal(state.nodes, 12);
      assert.equal(state.runningContainers, 24);
      assert.equal(state.options.tickMs, 50);
      // the real tick replaces a released container without a manual allocate
      const tms = (await http.get(`${url}/amrm/v1/containers`)).data.containers;
      await http.post(`${url}/amrm/v1/containers/release`, { containerIds: [tms[0].containerId] });
      let running = 23;
      for (let i = 0; i < 40 && running !== 24; i++) {
        await new Promise((r) => setTimeout(r, 25));
        running = (await http.get(`${url}/sim/v1/state`)).data.runningContainers;
      }
      assert.equal(running, 24);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });

  it('refuses a bad flag with the usage exit code', async () => {
    const child = spawn(process.execPath, [cliMain, 'yarn-sim', '--port', '0', '--nodes', 'many'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(err, /--nodes must be an integer/);
  });
});
