/**
 * The real sidecar against a real YARN: the RM's REST API of a MiniYARNCluster and the blocklist
 * AMRMProxy interceptor in front of a real AM (test/support/real-yarn.ts). What YARN holds is read
 * from inside the RM (the scheduler's blacklist for the attempt) through the launcher's control
 * endpoint, so every assertion is about YARN, not about the sidecar's own view.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { cliMain, repoRoot } from '../support/paths';
import { AppState, RealYarn, appState, control, mainSidecarKeys, realYarn, requireRealYarn, waitForApp } from '../support/real-yarn';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';
import { launchInAm, writeYarnSite } from '../support/child-sidecar';

const NM1 = 'nm1.blocklist.test';
const NM2 = 'nm2.blocklist.test';
const NM3 = 'nm3.blocklist.test';

async function proxyCall(p: AppState['proxy'], secret: string | undefined, method: string, route: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  assert.ok(p, 'the interceptor wrote no hand-off');
  const headers: Record<string, string> = {};
  if (secret !== undefined) headers.authorization = `Bearer ${secret}`;
  const r = await http(p.address, method, `/amrm/v1${route}`, body, headers);
  return { status: r.status, body: r.body };
}

const secretOf = (s: AppState): string => fs.readFileSync(s.proxy!.secretFile, 'utf8').trim();

interface ProxyBlacklist {
  blacklist: string[];
  owners: Record<string, string[]>;
}

/** Polls the proxy's GET /blacklist (what the interceptor will send the RM) until `ok` holds. */
async function waitForProxy(s: AppState, what: string, ok: (b: ProxyBlacklist) => boolean, timeoutMs = 15_000): Promise<ProxyBlacklist> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    last = (await proxyCall(s.proxy, secretOf(s), 'GET', '/blacklist')).body;
    if (ok(last as ProxyBlacklist)) return last as ProxyBlacklist;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; proxy blacklist: ${JSON.stringify(last)}`);
}

describe('real YARN: the sidecar, the RM REST API and the AMRMProxy interceptor', function () {
  this.timeout(120_000);
  let y: RealYarn;
  let main: AppState;
  let sidecar: TestSidecar | undefined;
  let dir: string;
  let secretCopy: string;

  /** A sidecar's keys for the main application: its RM, the interceptor of its current attempt, a fast poll. */
  const wiredToMain = (): Record<string, string> => mainSidecarKeys(y, main.proxy!.address, secretCopy);

  const startSidecar = async (): Promise<TestSidecar> =>
    startTestSidecar({
      dir,
      define: { ...wiredToMain(), 'cluster.resource-blocklist.yarn.refresh-interval': '500 ms' },
    });

  before(async function () {
    this.timeout(200_000);
    requireRealYarn(this);
    y = await realYarn();
    main = await appState(y, 'main');
    dir = tempDir('blocklist-real-yarn-sidecar-');
    // The secret is the same for every attempt of the application (derived from the NodeManagers'
    // shared key), so a copy stays valid when a new attempt writes its hand-off on another node.
    // In production the sidecar runs in the AM container and finds the file itself (launch-in-am.sh).
    secretCopy = path.join(dir, 'amrm-proxy.secret');
    fs.copyFileSync(main.proxy!.secretFile, secretCopy);
    sidecar = await startSidecar();
  });

  after(async () => {
    await sidecar?.close();
  });

  const block = async (id: string, action = 'MARK_BLOCKED', extra: Record<string, unknown> = {}): Promise<void> => {
    const r = await http(sidecar!.url, 'PUT', `/blocklist/nodes/${id}`, { action, cause: 'real-yarn test', ...extra });
    assert.equal(r.status, 201, r.text);
  };
  const unblock = async (id: string): Promise<void> => {
    const r = await http(sidecar!.url, 'DELETE', `/blocklist/nodes/${id}`);
    assert.equal(r.status, 200, r.text);
  };

  it('the RM client reads the real RM: cluster info, metrics, nodes with distinct host names, the app, its attempts and containers', async () => {
    if (process.env.BLOCKLIST_SAVE_REAL_FIXTURES === '1') {
      // Raw answers of the real RM, kept as fixtures beside the documented ones.
      const out = path.join(repoRoot, 'test', 'fixtures', 'rm', 'real');
      fs.mkdirSync(out, { recursive: true });
      const save = async (name: string, p: string): Promise<void> => {
        const res = await fetch(y.rmWebapp + p, { headers: { accept: 'application/json' } });
        fs.writeFileSync(path.join(out, name), JSON.stringify(await res.json(), null, 2) + '\n');
      };
      await save('cluster-info.json', '/ws/v1/cluster/info');
      await save('cluster-metrics.json', '/ws/v1/cluster/metrics');
      await save('nodes.json', '/ws/v1/cluster/nodes');
      await save('app.json', `/ws/v1/cluster/apps/${y.applications.main}`);
      await save('appattempts.json', `/ws/v1/cluster/apps/${y.applications.main}/appattempts`);
      await save('containers.json', `/ws/v1/cluster/apps/${y.applications.main}/appattempts/${main.appAttemptId}/containers`);
      await save('app-notfound.json', '/ws/v1/cluster/apps/application_1_0099');
      // The neighbour runs only its AM: a one-container list (Jettison RMs wrote a bare object).
      const other = await appState(y, 'other');
      await save('containers-single.json', `/ws/v1/cluster/apps/${y.applications.other}/appattempts/${other.appAttemptId}/containers`);
    }
    const rm = new ResourceManagerClient({ addresses: y.rmWebapp });
    const info = await rm.clusterInfo();
    assert.equal(info.state, 'STARTED');
    const nodes = await rm.nodes();
    assert.deepEqual(nodes.map((n) => n.host).sort(), [NM1, NM2, NM3]);
    assert.ok(nodes.every((n) => n.state === 'RUNNING' && /:\d+$/.test(n.id)));
    const app = await rm.application(y.applications.main);
    assert.equal(app.state, 'RUNNING');
    // Hadoop's AppInfo has no currentAppAttemptId (the simulator used to send one).
    assert.equal(app.currentAppAttemptId, undefined);
    const attempts = await rm.attempts(y.applications.main);
    assert.ok(attempts.some((a) => a.appAttemptId === main.appAttemptId));
    const containers = await rm.containers(y.applications.main, main.appAttemptId!);
    const workers = new Set(main.workers.map((w) => w.containerId));
    assert.ok([...workers].every((id) => containers.some((c) => c.containerId === id)), 'every worker is listed by the RM');
    assert.ok(containers.every((c) => [NM1, NM2, NM3].includes(c.host)));
    const metrics = await rm.clusterMetrics();
    assert.equal(metrics.activeNodes, 3);
    assert.equal(metrics.lostNodes, 0);
  });

  it("a block reaches the RM scheduler's blacklist for the attempt; an unblock removes it", async () => {
    await block(NM2);
    await waitForApp(y, 'main', `${NM2} on the scheduler's blacklist`, (s) => s.schedulerBlacklist.includes(NM2));
    const view = await waitForProxy(main, 'the owners', () => true);
    assert.deepEqual(view.owners, { am: [y.amOwnHost], blocklist: [NM2] });
    await unblock(NM2);
    const s = await waitForApp(y, 'main', `${NM2} off the scheduler's blacklist`, (st) => !st.schedulerBlacklist.includes(NM2));
    assert.deepEqual(s.schedulerBlacklist, [y.amOwnHost], "the AM's own entry stays");
  });

  it("an entry the AM blacklisted itself survives the sidecar's unblock and a full resync (sidecar restart)", async () => {
    await block(y.amOwnHost);
    const view = await waitForProxy(main, 'the sidecar to hold the entry too', (b) => b.owners.blocklist !== undefined);
    assert.deepEqual(view.owners, { am: [y.amOwnHost], blocklist: [y.amOwnHost] });
    await unblock(y.amOwnHost);
    await waitForProxy(main, 'the sidecar to drop its own entry', (b) => b.owners.blocklist === undefined);
    const after = await proxyCall(main.proxy, secretOf(main), 'GET', '/blacklist');
    assert.deepEqual(after.body, { blacklist: [y.amOwnHost], owners: { am: [y.amOwnHost] } });
    assert.deepEqual((await appState(y, 'main')).schedulerBlacklist, [y.amOwnHost]);
    // A restarted sidecar re-reads everything and reconciles from scratch.
    await sidecar!.close();
    sidecar = await startSidecar();
    await new Promise((r) => setTimeout(r, 1500));
    const s = await appState(y, 'main');
    assert.deepEqual(s.schedulerBlacklist, [y.amOwnHost]);
  });

  it('docs/amrm-proxy.openapi.yaml and the interceptor agree: every path is served, answers carry the required fields', async () => {
    const doc = YAML.parse(fs.readFileSync(path.join(repoRoot, 'docs', 'amrm-proxy.openapi.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json'?: { schema?: { $ref?: string; required?: string[] } } } }> }>>;
      components: { schemas: Record<string, { required?: string[] }> };
    };
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const schema = op.responses['200']?.content?.['application/json']?.schema;
        const required = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!].required : schema?.required;
        // Writes that change nothing: an empty release, the sidecar's owner adding nothing.
        const body = method !== 'post' ? undefined : p.endsWith('/release') ? { containerIds: [] } : { blacklistAdditions: [] };
        const route = p.replace(/^\/amrm\/v1/, '');
        const r = await proxyCall(main.proxy, secretOf(main), method.toUpperCase(), route, body);
        assert.equal(r.status, 200, `${method} ${p}`);
        for (const k of required ?? []) assert.ok(k in (r.body as Record<string, unknown>), `${method} ${p}: missing ${k}`);
        assert.equal((await proxyCall(main.proxy, undefined, method.toUpperCase(), route, body)).status, 401, `${method} ${p} without the secret`);
      }
    }
  });

  it("'*' is refused by the sidecar (400, nothing stored), by the proxy (400) and by the real RM", async () => {
    const r = await http(sidecar!.url, 'PUT', '/blocklist/nodes/%2A', { action: 'MARK_BLOCKED', cause: 'any' });
    assert.equal(r.status, 400, r.text);
    const p = await proxyCall(main.proxy, secretOf(main), 'POST', '/blacklist', { blacklistAdditions: ['*'] });
    assert.equal(p.status, 400);
    assert.deepEqual(p.body, { errors: ['Cannot add * to the blacklist!'] });
    const probe = await control<{ refused: boolean; exception: string; message: string }>(y, 'POST', '/probe/star-blacklist');
    assert.equal(probe.refused, true, JSON.stringify(probe));
    assert.match(probe.exception, /InvalidResourceBlacklistRequestException/);
    assert.match(probe.message, /Cannot add \* to the blacklist!/);
    assert.deepEqual((await appState(y, 'main')).schedulerBlacklist, [y.amOwnHost]);
  });

  it("another application cannot use main's proxy: no secret or a wrong one is 401, the neighbour's secret reaches only the neighbour", async () => {
    const other = await appState(y, 'other');
    assert.notEqual(secretOf(other), secretOf(main));
    assert.equal((await proxyCall(main.proxy, undefined, 'GET', '/attempt')).status, 401);
    assert.equal((await proxyCall(main.proxy, 'f'.repeat(64), 'POST', '/blacklist', { blacklistAdditions: [NM1] })).status, 401);
    const att = await proxyCall(main.proxy, secretOf(other), 'GET', '/attempt');
    assert.equal((att.body as { applicationId: string }).applicationId, y.applications.other);
    const w = await proxyCall(main.proxy, secretOf(other), 'POST', '/blacklist', { blacklistAdditions: [NM1] });
    assert.equal(w.status, 200);
    await waitForApp(y, 'other', `${NM1} on the neighbour's blacklist`, (s) => s.schedulerBlacklist.includes(NM1));
    assert.deepEqual((await appState(y, 'main')).schedulerBlacklist, [y.amOwnHost], "main's blacklist is untouched");
    const rel = await proxyCall(main.proxy, secretOf(other), 'POST', '/containers/release', { containerIds: [main.workers[0].containerId] });
    assert.deepEqual(rel.body, { released: [], unknown: [main.workers[0].containerId] }, "the neighbour cannot release main's containers");
    await proxyCall(main.proxy, secretOf(other), 'POST', '/blacklist', { blacklistRemovals: [NM1] });
  });

  it("the interceptor versions the blacklist: ETag, 304 to If-None-Match, a write names the version it changed and the one it made", async () => {
    // The neighbour application: no sidecar writes there, so every version change below is ours.
    const other = await appState(y, 'other');
    const call = (method: string, body?: unknown, headers: Record<string, string> = {}) =>
      http(main.proxy!.address, method, '/amrm/v1/blacklist', body, { authorization: `Bearer ${secretOf(other)}`, ...headers });
    const first = await call('GET');
    const tag = first.headers.get('etag');
    assert.match(tag ?? '', /^"[0-9a-f]{16}-\d+"$/);
    const held = await call('GET', undefined, { 'if-none-match': tag! });
    assert.equal(held.status, 304);
    assert.equal(held.text, '');
    const w = await call('POST', { owner: 'speculation', blacklistAdditions: [NM3] }, { prefer: 'return=minimal' });
    assert.equal(w.status, 200, w.text);
    const { etag, previousEtag } = w.body as { etag: string; previousEtag: string };
    assert.equal(previousEtag, tag, 'nobody wrote between our read and our write');
    assert.notEqual(etag, tag);
    const stale = await call('GET', undefined, { 'if-none-match': tag! });
    assert.equal(stale.status, 200);
    assert.equal(stale.headers.get('etag'), etag);
    assert.deepEqual((stale.body as { owners: Record<string, string[]> }).owners.speculation, [NM3]);
    assert.equal((await call('GET', undefined, { 'if-none-match': etag })).status, 304);
    assert.equal((await call('POST', { owner: 'speculation', blacklistRemovals: [NM3] })).status, 200);
  });

  it('an EVACUATE block releases the real containers on the node: the RM lists them no more, the AM gets replacements, none on the blocked node', async () => {
    const before = await waitForApp(y, 'main', 'three workers', (s) => s.liveWorkers === 3);
    // Evacuate a node that runs a worker (the scheduler spreads them, but do not assume where).
    const victim = before.workers[0].host;
    const onVictim = before.workers.filter((w) => w.host === victim).map((w) => w.containerId);
    await block(victim, 'MARK_BLOCKED_AND_EVACUATE_TASKS', { evacuationTimeout: 0 });
    const s = await waitForApp(
      y,
      'main',
      `workers off ${victim} and replaced`,
      (st) => st.schedulerBlacklist.includes(victim) && st.liveWorkers === 3 && st.workers.every((w) => w.host !== victim && !onVictim.includes(w.containerId)),
      60_000,
    );
    assert.ok(s.workers.every((w) => w.host !== victim));
    const rm = new ResourceManagerClient({ addresses: y.rmWebapp });
    const listed = await rm.containers(y.applications.main, s.appAttemptId!);
    for (const id of onVictim) assert.ok(!listed.some((c) => c.containerId === id), `${id} is no longer listed by the RM`);
    const done = await proxyCall(main.proxy, secretOf(main), 'GET', '/completed-containers?after=0');
    const ring = (done.body as { containers: { containerId: string; exitStatus: number; diagnostics: string; nodeId: string }[] }).containers;
    for (const id of onVictim) {
      const c = ring.find((x) => x.containerId === id);
      assert.ok(c, `${id} is in the completed ring`);
      assert.equal(c.exitStatus, -100, 'ABORTED: released by the application');
      assert.match(c.diagnostics, /released by application/i);
      assert.ok(c.nodeId.startsWith(`${victim}:`));
    }
    await unblock(victim);
    await waitForApp(y, 'main', `${victim} off the blacklist`, (st) => !st.schedulerBlacklist.includes(victim));
  });

  it('killing the AM gives a new attempt, and the sidecar pushes its whole blacklist to it', async () => {
    await block(NM3);
    await waitForApp(y, 'main', `${NM3} on the blacklist`, (s) => s.schedulerBlacklist.includes(NM3));
    const first = await appState(y, 'main');
    await control(y, 'POST', '/apps/main/fail-attempt');
    const next = await waitForApp(
      y,
      'main',
      'a new attempt with the blocklist re-pushed',
      (s) => s.appAttemptId !== first.appAttemptId && s.registered && s.proxy !== null && s.proxy.appAttemptId === s.appAttemptId,
      90_000,
    );
    // The new attempt's interceptor starts empty: only the sidecar's re-push puts NM3 under its owner.
    const pushed = await waitForProxy(next, "the sidecar's re-push to the new attempt", (b) => (b.owners.blocklist ?? []).includes(NM3) && b.owners.am !== undefined, 30_000);
    assert.deepEqual(pushed.owners.am, [y.amOwnHost], "the new AM's own entry is there too");
    await waitForApp(y, 'main', `${NM3} on the new attempt's blacklist`, (s) => s.schedulerBlacklist.includes(NM3) && s.schedulerBlacklist.includes(y.amOwnHost));
    const att = await proxyCall(next.proxy, secretOf(next), 'GET', '/attempt');
    assert.equal((att.body as { appAttemptId: string }).appAttemptId, next.appAttemptId);
    await unblock(NM3);
    await waitForApp(y, 'main', `${NM3} off the new attempt's blacklist`, (s) => !s.schedulerBlacklist.includes(NM3));
  });
  it("scripts/launch-in-am.sh as YARN runs it in the AM container finds the interceptor's hand-off in $LOCAL_DIRS and enforces a block", async () => {
    // One sidecar per application: the suite's own steps aside first.
    await sidecar?.close();
    sidecar = undefined;
    const s = await appState(y, 'main');
    const rm = new ResourceManagerClient({ addresses: y.rmWebapp });
    const attempt = (await rm.attempts(y.applications.main)).find((a) => a.appAttemptId === s.appAttemptId);
    assert.ok(attempt?.containerId, 'the RM names the AM container');
    const conf = tempDir('blocklist-real-launch-');
    writeYarnSite(conf, y.rmWebapp);
    // What YARN sets in the AM container: its id, and the application's local dirs (where the interceptor wrote).
    const env: NodeJS.ProcessEnv = { ...process.env, CONTAINER_ID: attempt.containerId, LOCAL_DIRS: path.dirname(s.proxy!.handoffFile), HADOOP_CONF_DIR: conf, BLOCKLIST_BIN: cliMain, BLOCKLIST_CONFIG_FILE: '', BLOCKLIST_PROXY_WAIT: '5' };
    delete env.BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS;
    delete env.BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_SECRET_FILE;
    // The AM profile stores in ZooKeeper; this suite has none, so a SQLite file stands in.
    const flags = ['-Drest.port=0', '-Dcluster.resource-blocklist.store.type=sqlite', `-Dcluster.resource-blocklist.store.sqlite.path=${path.join(conf, 'b.db')}`, '-Dcluster.resource-blocklist.poll-interval=200 ms', '-Dcluster.resource-blocklist.max-blocked-fraction=0.7'];
    const { child, url, output } = await launchInAm(flags, env, 15_000);
    try {
      assert.match(output(), /launch-in-am: AMRM proxy http:\/\/127\.0\.0\.1:\d+ \(hand-off /);
      assert.equal((await http(url, 'PUT', `/blocklist/nodes/${NM2}`, { action: 'MARK_BLOCKED', cause: 'launch-in-am' })).status, 201);
      await waitForApp(y, 'main', `${NM2} on the blacklist through the launched sidecar`, (st) => st.schedulerBlacklist.includes(NM2));
      assert.equal((await http(url, 'DELETE', `/blocklist/nodes/${NM2}`)).status, 200);
      await waitForApp(y, 'main', `${NM2} off again`, (st) => !st.schedulerBlacklist.includes(NM2));
    } finally {
      child.kill('SIGTERM');
    }
  });

  it("a worker killed on a node (exit 137, as a failing machine) reaches the detector through the interceptor's completed ring, and its block reaches the RM", async () => {
    const before = await waitForApp(y, 'main', 'three workers', (st) => st.liveWorkers === 3);
    const victim = before.workers[0].host;
    // The attempt may have changed (an earlier test failed the AM): use its hand-off.
    main = before;
    const det = await startTestSidecar({
      dir: tempDir('blocklist-real-yarn-detector-'),
      define: {
        ...wiredToMain(),
        'cluster.resource-blocklist.detector.mode': 'enforce',
        'cluster.resource-blocklist.detector.failures-per-host': '1',
        'cluster.resource-blocklist.detector.max-blocked-fraction': '0.4',
        // Passes are driven by the test; the timer only makes the first.
        'cluster.resource-blocklist.detector.poll-interval': '1 h',
      },
    });
    try {
      await det.detector!.pass();
      const killed = await control<{ containerId: string | null; killed: boolean }>(y, 'POST', `/apps/main/kill-worker?host=${victim}`);
      assert.ok(killed.killed && killed.containerId, JSON.stringify(killed));
      // The AM sees the container complete with the NodeManager's exit code.
      const deadline = Date.now() + 20_000;
      let seen: { exitStatus: number; diagnostics: string } | undefined;
      while (!seen && Date.now() < deadline) {
        const page = (await proxyCall(main.proxy, secretOf(main), 'GET', '/completed-containers?after=0')).body as { containers: { containerId: string; exitStatus: number; diagnostics: string }[] };
        seen = page.containers.find((c) => c.containerId === killed.containerId);
        if (!seen) await new Promise((r) => setTimeout(r, 200));
      }
      assert.ok(seen, 'the killed container is in the completed ring');
      assert.equal(seen.exitStatus, 137);
      const report = await det.detector!.pass();
      const item = await det.store.get(victim);
      assert.ok(item, `the detector blocked ${victim}: ${JSON.stringify(report)} ${JSON.stringify((await http(det.url, 'GET', '/detector')).body)}`);
      assert.equal(item.created.by, 'detector');
      await waitForApp(y, 'main', `${victim} on the RM's blacklist from the detector`, (st) => st.schedulerBlacklist.includes(victim));
      assert.equal((await http(det.url, 'DELETE', `/blocklist/nodes/${victim}`)).status, 200);
      await waitForApp(y, 'main', `${victim} off again`, (st) => !st.schedulerBlacklist.includes(victim));
    } finally {
      await det.close();
    }
  });
});
