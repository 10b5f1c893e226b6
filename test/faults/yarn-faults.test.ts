/**
 * YARN faults against a real sidecar and the YARN simulator over loopback HTTP, injected through
 * the simulator's fault API (and a few small servers of our own for what it cannot fake: a
 * standby RM, a proxy that answers garbage, a clock that jumps). In every case: the API keeps
 * answering, writes are acknowledged only once stored, /status and the metrics say what is wrong,
 * and once the fault is gone YARN's blacklist converges to exactly the blocklist.
 */
import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Clock, systemClock } from '../../src/core/clock';
import { http as request } from '../support/sidecar';
import { count, printFigures } from '../fuzz/figures';
import { YarnSidecar, sleep, startYarnSidecar, waitFor } from './support';

const block = { action: 'MARK_BLOCKED', cause: 'fault test' };

interface Status {
  lastError?: string;
  storeDegraded: boolean;
  appAttemptId?: string;
  blacklist: { desired: string[]; actual: string[] };
  pending: { additions: string[]; removals: string[] };
}

const sorted = (xs: string[]) => [...xs].sort();

describe('faults: YARN (RM and AMRM proxy) against the simulator', function () {
  this.timeout(30_000);
  let sim: RunningSimulator;
  let s: YarnSidecar | undefined;
  const extra: http.Server[] = [];

  beforeEach(async () => {
    sim = await startSimulator({ port: 0, nodes: 10, containers: 20, tickMs: 0, seed: 11 });
  });
  afterEach(async () => {
    await s?.close();
    s = undefined;
    sim.faults.clear();
    await sim.close();
    for (const x of extra.splice(0)) await new Promise((r) => x.close(r));
  });
  after(() => printFigures('YARN faults', ['YARN faults injected', 'faulty YARN requests answered']));

  const host = (i: number) => sim.cluster.nodes[i].host;
  const status = async () => (await request(s!.url, 'GET', '/status')).body as Status;
  const converged = (want: string[]) => async () => JSON.stringify(sorted(sim.cluster.clientBlacklistView())) === JSON.stringify(sorted(want));
  const metric = async (re: RegExp) => Number(re.exec((await request(s!.url, 'GET', '/metrics')).text)?.[1] ?? 0);
  const inject = async (face: 'rm' | 'amrm', spec: Record<string, unknown>) => {
    count('YARN faults injected');
    const r = await request(sim.url, 'PUT', `/sim/v1/faults/${face}`, spec);
    assert.equal(r.status, 200, r.text);
  };
  const heal = async () => {
    const c = sim.cluster.counters.faultsInjected;
    count('faulty YARN requests answered', c.rm + c.amrm);
    await request(sim.url, 'DELETE', '/sim/v1/faults');
  };

  for (const [name, spec] of [
    ['down (connections reset)', { outage: 'reset' }],
    ['unavailable (503 to everything)', { outage: 'unavailable' }],
    ['failing (every call 500)', { errorRate: 1 }],
    ['slow (answers after the request timeout)', { latencyMs: 1500 }],
  ] as const) {
    it(`proxy ${name}: writes are acknowledged from the store, /status and metrics show the failure, YARN converges after`, async () => {
      s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
      await waitFor('first sync', async () => (await request(s!.url, 'GET', '/readyz')).status === 200);
      await inject('amrm', spec);
      for (const i of [1, 2, 3]) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(i)}`, block)).status, 201);
      await waitFor('the failure shows in /status', async () => /push|attempt|blacklist/.test((await status()).lastError ?? ''), 5000);
      const item = (await request(s.url, 'GET', `/blocklist/nodes/${host(1)}`)).body as { sync?: { state: string } };
      assert.equal(item.sync?.state, 'pending');
      assert.ok((await status()).lastError);
      assert.ok((await metric(/^blocklist_reconcile_passes_total\{result="failure"\} (\d+)/m)) > 0, 'blocklist_reconcile_passes_total{result="failure"} counts the failed passes');
      assert.deepEqual(sim.cluster.clientBlacklistView(), []);
      // An unblock during the outage is not lost either.
      assert.equal((await request(s.url, 'DELETE', `/blocklist/nodes/${host(2)}`)).status, 200);
      await heal();
      await waitFor('YARN converges to the blocklist', converged([host(1), host(3)]), 5000);
      await waitFor('/status clears the error', async () => (await status()).lastError === undefined, 3000);
    });
  }

  // Each pass makes several proxy calls, all of which must pass: at 40% failures per call most passes fail.
  it('proxy flaky (40% of calls fail): 12 changes still converge exactly', async () => {
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
    await inject('amrm', { errorRate: 0.4 });
    const want = new Set<string>();
    for (let k = 0; k < 12; k++) {
      const h = host(k % 8);
      if (want.has(h)) {
        assert.equal((await request(s.url, 'DELETE', `/blocklist/nodes/${h}`)).status, 200);
        want.delete(h);
      } else {
        assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${h}`, block)).status, 201);
        want.add(h);
      }
      await sleep(20);
    }
    await waitFor('converges despite 40% failures', converged([...want]), 15_000);
    await heal();
  });

  it('RM outage after the first sync: blocks still reach the proxy (the last node list serves the safety cap)', async () => {
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
    await waitFor('first sync', async () => (await request(s!.url, 'GET', '/readyz')).status === 200);
    await inject('rm', { outage: 'reset' });
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(4)}`, block)).status, 201);
    await waitFor('pushed during the RM outage', converged([host(4)]), 5000);
    await heal();
  });

  it('RM outage from the start: nothing is pushed blind, /status says why, readiness waits; it converges when the RM is back', async () => {
    await inject('rm', { outage: 'unavailable' });
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(5)}`, block)).status, 201);
    await waitFor('/status names the RM', async () => /nodes/.test((await status()).lastError ?? ''), 5000);
    assert.equal((await request(s.url, 'GET', '/readyz')).status, 503);
    await heal();
    await waitFor('converges once the RM answers', converged([host(5)]), 5000);
    // The proxy has the block while the pass that pushed it is still finishing (it reads containers
    // after the push); readiness follows at the end of that pass.
    const url = s.url;
    await waitFor('ready once a pass succeeded', async () => (await request(url, 'GET', '/readyz')).status === 200, 5000);
  });

  it('RM HA: a dead RM and a standby (307 to the active) in front of the active one', async () => {
    const standby = http.createServer((req, res) => {
      res.writeHead(307, { location: `${sim.url}${req.url ?? '/'}` });
      res.end('This is standby RM. The redirect url is: ' + sim.url);
    });
    extra.push(standby);
    await new Promise<void>((r) => standby.listen(0, '127.0.0.1', r));
    count('YARN faults injected', 2);
    const standbyUrl = `http://127.0.0.1:${(standby.address() as AddressInfo).port}`;
    s = await startYarnSidecar({ rm: `127.0.0.1:1,${standbyUrl}`, proxy: sim.url });
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(6)}`, block)).status, 201);
    await waitFor('converges through the standby redirect', converged([host(6)]), 5000);
  });

  it('a new application attempt (the AM restarts with an empty AMRMClient): every block is pushed again', async () => {
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url });
    for (const i of [1, 2]) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(i)}`, block)).status, 201);
    await waitFor('pushed', converged([host(1), host(2)]));
    const before = (await status()).appAttemptId;
    const a = await request(sim.url, 'POST', '/sim/v1/attempts', { blacklist: 'empty' });
    count('YARN faults injected');
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(sim.cluster.clientBlacklistView(), []);
    await waitFor('re-pushed to the new attempt', converged([host(1), host(2)]), 5000);
    assert.notEqual((await status()).appAttemptId, before);
  });

  it('a proxy that answers garbage (HTML, wrong types, truncated JSON, "*"): never a crash, never an unblock, converges when it is sane again', async () => {
    let mode = 0;
    const garbage = [
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Bad Gateway</body></html>'),
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"blacklist":'),
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"blacklist":"node1","containers":{"a":1},"applicationId":42,"released":null}'),
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"blacklist":[null,1,{}],"containers":[{"containerId":"x"}],"applicationId":"application_1_1","appAttemptId":"*","registered":"maybe"}'),
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'),
      (res: http.ServerResponse) => res.writeHead(204).end(),
      (res: http.ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ blacklist: Array.from({ length: 5000 }, (_, i) => `liar${i}`) })),
    ];
    let sane = false;
    const proxy = http.createServer((req, res) => {
      if (sane) {
        // Forward to the simulator's proxy face.
        const fwd = http.request(`${sim.url}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        });
        req.pipe(fwd);
        return;
      }
      req.resume();
      count('faulty YARN requests answered');
      garbage[mode++ % garbage.length](res);
    });
    extra.push(proxy);
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    count('YARN faults injected', garbage.length);
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // Start sane, block two nodes, then turn the proxy into a liar.
    sane = true;
    s = await startYarnSidecar({ rm: sim.url, proxy: proxyUrl });
    for (const i of [1, 2]) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(i)}`, block)).status, 201);
    await waitFor('pushed', converged([host(1), host(2)]));
    const removalsBefore = sim.cluster.counters.blacklistRemovals;
    sane = false;
    // Full resync = re-read the liar's blacklist; kick passes with writes meanwhile.
    for (const i of [3, 4]) assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(i)}`, block)).status, 201);
    await sleep(600);
    assert.equal((await request(s.url, 'GET', '/healthz')).status, 200);
    assert.equal((await request(s.url, 'GET', '/blocklist')).status, 200);
    assert.match((await status()).lastError ?? '', /unusable body|not a JSON object|not valid|blacklist|attempt/);
    // Nothing reached YARN while the proxy lied: in particular no removal of the real blocks.
    assert.equal(sim.cluster.counters.blacklistRemovals, removalsBefore);
    assert.deepEqual(sorted(sim.cluster.clientBlacklistView()), sorted([host(1), host(2)]));
    sane = true;
    await waitFor('converges once the proxy is sane', converged([host(1), host(2), host(3), host(4)]), 5000);
  });

  it('the wall clock jumps back an hour: no block ends early; it ends at its endTimestamp by the clock', async () => {
    let offset = 0;
    const clock: Clock = { now: () => Date.now() + offset, setTimer: (ms, fn) => systemClock.setTimer(ms, fn) };
    s = await startYarnSidecar({ rm: sim.url, proxy: sim.url, clock });
    const r = await request(s.url, 'PUT', `/blocklist/nodes/${host(7)}`, { ...block, timeout: '600 ms' });
    assert.equal(r.status, 201, r.text);
    await waitFor('pushed', converged([host(7)]));
    offset = -3_600_000; // NTP step backwards
    count('YARN faults injected');
    await sleep(1200); // past the block's end by monotonic time and by the old wall clock
    assert.deepEqual(sim.cluster.clientBlacklistView(), [host(7)], 'removed from YARN early');
    assert.equal((await request(s.url, 'GET', `/blocklist/nodes/${host(7)}`)).status, 200, 'gone from the API early');
    // Kick a pass and an expiry-like poll: still there.
    assert.equal((await request(s.url, 'PUT', `/blocklist/nodes/${host(8)}`, block)).status, 201);
    await waitFor('the other block is pushed', converged([host(7), host(8)]));
    offset = 0; // the clock catches up: the block ends (by the next poll or deadline)
    await waitFor('ends once the clock reaches its end', converged([host(8)]), 5000);
    assert.equal((await request(s.url, 'GET', `/blocklist/nodes/${host(7)}`)).status, 404);
  });
});
