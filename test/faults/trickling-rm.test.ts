/**
 * #31.4 end to end: an RM that trickles its answer (a byte at a time, so no idle timeout fires)
 * wedged the sync engine without an error — a new block stayed off YARN, lastError empty,
 * /readyz 200. Now the call ends at its deadline and the block reaches YARN; while the pass waits,
 * /status shows the running pass, and past cluster.resource-blocklist.sync.stall-limit /readyz
 * answers 503 and the metric says how long; the abandoned call is counted by peer and kind. A real sidecar on a FakeClock (deadlines and the stall
 * limit run on it), the simulator's AMRM proxy face, and a fake RM in front of the simulator's RM
 * face that starts to trickle when told.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { FakeClock } from '../../src/core/clock';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { http as request } from '../support/sidecar';
import { YarnSidecar, startYarnSidecar, waitFor } from './support';

/** Forwards to `target` until `trickle` is set; then answers every call 200 and a space every 20 ms (at most 1,000). */
async function switchableRm(target: string): Promise<{ url: string; trickle: boolean; trickled: number; paths: string[]; close(): Promise<void> }> {
  const t = new URL(target);
  const state = { url: '', trickle: false, trickled: 0, paths: [] as string[], close: async () => undefined as void };
  const server = http.createServer((req, res) => {
    state.paths.push((req.url ?? '').split('?')[0]);
    if (state.trickle) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      let n = 0;
      const timer = setInterval(() => {
        if (n++ >= 1000 || res.destroyed) return clearInterval(timer);
        res.write(' ');
        state.trickled++;
      }, 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers }, (u) => {
      res.writeHead(u.statusCode ?? 502, u.headers);
      u.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return state;
}

describe('faults: an RM that trickles its answers (#31.4)', function () {
  this.timeout(30_000);
  let sim: RunningSimulator;
  let rm: Awaited<ReturnType<typeof switchableRm>>;
  let s: YarnSidecar | undefined;
  afterEach(async () => {
    // The RM first: its connections reset, so no call of a pass waits for a deadline nobody advances.
    await rm?.close();
    await s?.close();
    s = undefined;
    await sim?.close();
  });

  it('a new block reaches YARN at the call deadline; meanwhile /status shows the pass and, past the stall limit, /readyz is 503 and the metric counts', async () => {
    sim = await startSimulator({ port: 0, nodes: 10, containers: 20, tickMs: 0, seed: 11 });
    rm = await switchableRm(sim.url);
    const clock = new FakeClock(Date.now());
    s = await startYarnSidecar({
      rm: rm.url,
      proxy: sim.url,
      clock,
      define: { 'cluster.resource-blocklist.yarn.request-timeout': '10 s', 'cluster.resource-blocklist.sync.stall-limit': '5 s' },
    });
    const url = s.url;
    await waitFor('first sync', async () => (await request(url, 'GET', '/readyz')).status === 200);
    rm.trickle = true;
    const host = sim.cluster.nodes[3].host;
    assert.equal((await request(url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'trickle test' })).status, 201);
    // The pass reads the node list for the cap (the first node item) and gets a byte at a time.
    await waitFor('the RM trickles', () => rm.trickled >= 5);
    const during = (await request(url, 'GET', '/status')).body as { passRunningSince?: number; stalled?: string; lastError?: string };
    assert.equal(typeof during.passRunningSince, 'number', 'the running pass shows in /status');
    assert.equal((await request(url, 'GET', '/readyz')).status, 200, 'within the stall limit: still ready');

    clock.advance(6_000);
    const ready = await request(url, 'GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.text, /a reconcile pass has been running for 6 s .*cluster\.resource-blocklist\.sync\.stall-limit/);
    assert.match(((await request(url, 'GET', '/status')).body as { stalled?: string }).stalled ?? '', /running for 6 s/);
    assert.match((await request(url, 'GET', '/metrics')).text, /^blocklist_sync_pass_running_seconds 6$/m);
    assert.ok(!sim.cluster.clientBlacklistView().includes(host));

    clock.advance(4_000); // the node list's deadline: the pass goes on without it (every blocked host takes a slot of the cap)
    await waitFor('the block is on YARN', () => sim.cluster.clientBlacklistView().includes(host));
    // Pushed before the pass reads Flink: the RM's application report that locates the JobManager
    // trickles too, and only that read still waits for its own deadline.
    assert.equal((await request(url, 'GET', '/readyz')).status, 503, 'the pass still runs (it reads the application report)');
    clock.advance(10_000);
    await waitFor('ready again', async () => (await request(url, 'GET', '/readyz')).status === 200);
    const metrics = (await request(url, 'GET', '/metrics')).text;
    assert.match(metrics, /^blocklist_sync_pass_running_seconds 0$/m);
    assert.match(metrics, /^blocklist_peer_call_failures_total\{peer="rm",failure="deadline"\} [1-9]/m, 'the abandoned call is counted');
  });

  it('a real sidecar refreshes its blocked node by a single-node read, not the whole list (#31.8)', async () => {
    sim = await startSimulator({ port: 0, nodes: 10, containers: 20, tickMs: 0, seed: 11 });
    rm = await switchableRm(sim.url);
    const clock = new FakeClock(Date.now());
    s = await startYarnSidecar({ rm: rm.url, proxy: sim.url, clock, define: { 'cluster.resource-blocklist.yarn.nodes.refresh-interval': '30 s' } });
    const url = s.url;
    await waitFor('first sync', async () => (await request(url, 'GET', '/readyz')).status === 200);
    const node = sim.cluster.nodes[3];
    assert.equal((await request(url, 'PUT', `/blocklist/nodes/${node.host}`, { action: 'MARK_BLOCKED', cause: 'refresh test' })).status, 201);
    await waitFor('the block is on YARN', () => sim.cluster.clientBlacklistView().includes(node.host));
    sim.cluster.setNodeState(node.host, 'LOST');
    for (let t = 0; t < 31; t++) clock.advance(1000);
    const seen = async () => ((await request(url, 'GET', '/status?nodes=true')).body as { nodes?: { list: { host: string; state: string }[] } }).nodes?.list.find((n) => n.host === node.host)?.state;
    await waitFor('the refresh saw the node leave', async () => (await seen()) === 'LOST');
    assert.equal(rm.paths.filter((p) => p === '/ws/v1/cluster/nodes').length, 1, 'the whole list once');
    assert.ok(rm.paths.includes(`/ws/v1/cluster/nodes/${node.nodeId}`), rm.paths.join(' '));
    assert.match((await request(url, 'GET', '/metrics')).text, /^blocklist_rm_requests_total\{call="node",result="success"\} [1-9]/m);
  });
});
