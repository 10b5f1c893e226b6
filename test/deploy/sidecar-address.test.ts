/**
 * Where a job's sidecar is (rest.port 0 in the AM profile): the ephemeral znode
 * <root>/sidecars/<attempt> on a real ZooKeeper, Prometheus' HTTP service discovery served by any
 * sidecar from those znodes, `blocklist --app` finding the right one, and rest.address-file.
 * Two jobs (two simulators) share one ZooKeeper store, each sidecar in its AM container's
 * environment (CONTAINER_ID).
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ZkCluster, expireSession, requireZookeeper, zkJobConfig } from '../support/zookeeper';
import { cliMain, tempDir } from '../support/paths';
import { spawn } from 'node:child_process';
import { listeningUrl } from '../support/child-sidecar';
import { RunningTargets } from '../../src/api/routes/discovery';
import { ResourceManagerClient } from '../../src/yarn/rm-client';
import { startTestSidecar } from '../support/sidecar';
import { pollUntil } from '../support/wait';
import { RunningSimulator, startSimulator } from '../../src/sim/server';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { applicationStates } from '../../src/sidecar/published-address';
import { ZkSession } from '../../src/store/zookeeper/session';
import { SidecarRecord, SidecarRegistry, parseSidecarRecord } from '../../src/store/zookeeper/sidecar-registry';
import { silentLogger } from '../../src/core/logger';
import { expectCode, runCli } from '../cli/run';

const root = `/address${process.pid}`;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** f's first answer that is not undefined. */
async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  let v: T | undefined;
  await pollUntil(what, async () => (v = await f()) !== undefined, ms, 50);
  return v as T;
}

describe('deploy: the sidecar publishes where it listens (real ZooKeeper)', function () {
  this.timeout(90_000);
  let zk: ZkCluster | undefined;
  const sims: RunningSimulator[] = [];
  const sidecars: Sidecar[] = [];
  let probe: ZkSession | undefined;
  const znode = (attempt: string): string => `${root}/sidecars/${attempt}`;
  const read = async (attempt: string): Promise<{ record: SidecarRecord; owner: string } | undefined> => {
    const got = await probe!.getData(znode(attempt), 3000);
    const record = got ? parseSidecarRecord(got.data.toString('utf8')) : undefined;
    return got && record ? { record, owner: got.stat.ephemeralOwner ?? '' } : undefined;
  };
  const sessionOf = (s: Sidecar): ZkSession => (s.store as unknown as { session: ZkSession }).session;

  async function job(appNumber: number, define: Record<string, string> = {}): Promise<{ sim: RunningSimulator; sidecar: Sidecar; attempt: string }> {
    const sim = await startSimulator({ port: 0, nodes: 4, containers: 2, tickMs: 0, appNumber });
    sims.push(sim);
    const env = { CONTAINER_ID: sim.cluster.currentAttempt.amContainerId, NM_HOST: `nm${appNumber}.example` };
    const sidecar = await startSidecar({ config: zkJobConfig(zk!.connectString(), root, sim, define), env, logger: silentLogger, version: '9.9.9' });
    sidecars.push(sidecar);
    return { sim, sidecar, attempt: sim.cluster.currentAttempt.id };
  }

  before(async function () {
    requireZookeeper(this);
    zk = await ZkCluster.start(1);
    probe = new ZkSession({ hosts: zk.connectString(), sessionTimeoutMs: 5000, operationTimeoutMs: 3000 });
  });
  after(async () => {
    for (const s of sidecars) await s.close().catch(() => undefined);
    for (const s of sims) await s.close();
    await probe?.close();
    await zk?.stop();
  });

  it('two jobs: one ephemeral znode per attempt with the address; http_sd lists both; blocklist --app reaches the right one', async () => {
    const dir = tempDir('blocklist-address-');
    const a = await job(1, { 'rest.address-file': path.join(dir, 'a.json') });
    const b = await job(2);
    const ra = await until('job 1\'s znode', () => read(a.attempt));
    assert.equal(ra.record.url, a.sidecar.url);
    assert.deepEqual([ra.record.application, ra.record.attempt, ra.record.version, ra.record.scheme, ra.record.host], [a.sim.cluster.applicationId, a.attempt, '9.9.9', 'http', 'nm1.example']);
    assert.notEqual(ra.owner, '0000000000000000', 'ephemeral');
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'a.json'), 'utf8')), a.sidecar.address.record, 'rest.address-file holds the same record');
    await until('job 2\'s znode', () => read(b.attempt));

    const sd = await fetch(`${a.sidecar.url}/discovery/prometheus`);
    assert.equal(sd.status, 200);
    assert.match(sd.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await sd.json(), [
      { targets: [new URL(a.sidecar.url).host], labels: { __scheme__: 'http', application: a.sim.cluster.applicationId, attempt: a.attempt, host: 'nm1.example' } },
      { targets: [new URL(b.sidecar.url).host], labels: { __scheme__: 'http', application: b.sim.cluster.applicationId, attempt: b.attempt, host: 'nm2.example' } },
    ]);

    const spec = `zookeeper:${zk!.connectString()}${root}`;
    for (const j of [a, b]) {
      const st = expectCode(await runCli(['status', '-o', 'json', '--app', j.sim.cluster.applicationId, '--store', spec]), 0, `status --app ${j.sim.cluster.applicationId}`);
      assert.equal((JSON.parse(st.stdout) as { applicationId?: string }).applicationId, j.sim.cluster.applicationId);
    }
    // The ZooKeeper from the sidecar's own configuration (here its environment), as on a gateway host.
    const viaEnv = await runCli(['status', '-o', 'json', '--app', b.sim.cluster.applicationId], {
      env: { BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_QUORUM: zk!.connectString(), BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_STORE_ZOOKEEPER_ROOT: root },
    });
    assert.equal((JSON.parse(expectCode(viaEnv, 0, 'status --app (config from env)').stdout) as { applicationId?: string }).applicationId, b.sim.cluster.applicationId);
    const missing = await runCli(['status', '--app', 'application_1652313600000_0099', '--store', spec]);
    expectCode(missing, 4, '--app of a job with no sidecar');
    assert.match(missing.stderr, /no sidecar of application_1652313600000_0099 is published .*2 sidecar\(s\) of 2 application\(s\)/);
    expectCode(await runCli(['status', '--app', 'app_1']), 2, 'a malformed application id');
    assert.match((await runCli(['status', '--app', a.sim.cluster.applicationId])).stderr, /--app needs the ZooKeeper/);

    // Stopping removes the znode and the file.
    await a.sidecar.close();
    assert.equal(await read(a.attempt), undefined);
    assert.equal(fs.existsSync(path.join(dir, 'a.json')), false);
  });

  it('the znode is ephemeral (a sidecar that dies takes it along) and comes back after a session expiry', async () => {
    const c = await job(3);
    const before = await until('job 3\'s znode', () => read(c.attempt));
    const session = sessionOf(c.sidecar);
    const renewed = new Promise<boolean>((resolve) => session.once('session', () => resolve(true)));
    assert.ok(await expireSession(zk!.connectString(), () => session.credentials(), renewed), 'the session did not expire');
    const after = await until('job 3\'s znode on the new session', async () => {
      const r = await read(c.attempt);
      return r && r.owner !== before.owner ? r : undefined;
    });
    assert.equal(after.owner, session.credentials().idHex.padStart(16, '0'));
    assert.equal(after.record.url, c.sidecar.url);
    // A crash: the session ends without the sidecar deleting anything.
    await session.close();
    await until('job 3\'s znode to go with its session', async () => ((await read(c.attempt)) === undefined ? true : undefined));
  });

  it("kill -9: the crashed sidecar's target stays in http_sd, marked, while the RM runs its attempt; its registration goes once another attempt runs", async () => {
    const sim = await startSimulator({ port: 0, nodes: 4, containers: 2, tickMs: 0, appNumber: 4 });
    sims.push(sim);
    const app = sim.cluster.applicationId;
    const first = sim.cluster.currentAttempt;
    const flags = Object.entries({
      'rest.port': '0',
      'cluster.resource-blocklist.store.type': 'zookeeper',
      'cluster.resource-blocklist.store.zookeeper.quorum': zk!.connectString(),
      'cluster.resource-blocklist.store.zookeeper.root': root,
      'cluster.resource-blocklist.store.zookeeper.session-timeout': '2 s',
      'yarn.resourcemanager.webapp.address': sim.url.replace(/^http:\/\//, ''),
      'cluster.resource-blocklist.amrm-proxy.address': sim.url,
      'yarn.application.id': app,
    }).map(([k, v]) => `-D${k}=${v}`);
    const child = spawn(process.execPath, [cliMain, 'sidecar', ...flags], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, BLOCKLIST_CONFIG_FILE: '', CONTAINER_ID: first.amContainerId, NM_HOST: 'nm4.example' } });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      const { url } = await listeningUrl(child, 20_000);
      const target = new URL(url).host;
      // The cluster's other sidecar (same RM) serves the discovery; it publishes attempt 2's znode.
      const serving = await startSidecar({ config: zkJobConfig(zk!.connectString(), root, sim), env: { CONTAINER_ID: first.amContainerId.replace(/_01_(\d+)$/, '_02_$1'), NM_HOST: 'nm9.example' }, logger: silentLogger, version: '9.9.9' });
      sidecars.push(serving);
      type Group = { targets: string[]; labels: Record<string, string> };
      const groupOf = async (): Promise<Group | undefined> => ((await (await fetch(`${serving.url}/discovery/prometheus`)).json()) as Group[]).find((g) => g.targets[0] === target);
      const live = await until('the child in http_sd', groupOf);
      assert.equal(live.labels.__meta_blocklist_published, undefined);
      const registration = `${root}/sidecar-attempts/${first.id}`;
      assert.ok(await probe!.getData(registration, 3000), 'a registration beside the ephemeral znode');
      child.kill('SIGKILL');
      await exited;
      await until('its znode to go with its session', async () => ((await read(first.id)) === undefined ? true : undefined));
      const kept = await groupOf();
      assert.deepEqual(kept, { targets: [target], labels: { ...live.labels, __meta_blocklist_published: 'false' } }, 'still a target (up == 0 fires), marked');
      // The job moves to another attempt: a discovery that asks the RM now lets it go, and its registration.
      sim.cluster.newAttempt();
      // (A serving sidecar asks again RECHECK_MS after its last answer; a fresh one asks now, as the sidecar wires it.)
      const fresh = new RunningTargets(serving.address, applicationStates(new ResourceManagerClient({ addresses: sim.url })), () => Date.now());
      assert.ok(!(await fresh.sidecars()).some((r) => r.address === target));
      assert.equal(await probe!.getData(registration, 3000), undefined, 'the registration is forgotten');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('two processes of one attempt: the newer holds the znode, the older stands back and takes over when it goes', async () => {
    const sessions = [0, 1].map(() => new ZkSession({ hosts: zk!.connectString(), sessionTimeoutMs: 5000, operationTimeoutMs: 3000 }));
    const registries = sessions.map((session) => new SidecarRegistry({ session, basePath: root, operationTimeoutMs: 3000, retryMs: 100 }));
    const rec = (port: number, started: string): SidecarRecord => ({ url: `http://127.0.0.1:${port}`, address: `127.0.0.1:${port}`, scheme: 'http', version: 't', application: 'application_1652313600000_0077', attempt: 'appattempt_1652313600000_0077_000001', started, host: 'h', pid: port });
    try {
      const older = registries[0].publish(rec(1, '2026-12-01T10:00:00.000Z'));
      await until('the older record', async () => ((await read('appattempt_1652313600000_0077_000001'))?.record.pid === 1 ? true : undefined));
      const newer = registries[1].publish(rec(2, '2026-12-01T10:00:05.000Z'));
      await until('the newer record', async () => ((await read('appattempt_1652313600000_0077_000001'))?.record.pid === 2 ? true : undefined));
      await sleep(500);
      assert.equal((await read('appattempt_1652313600000_0077_000001'))?.record.pid, 2, 'the older one does not take it back');
      assert.equal(older.published, false);
      await newer.stop();
      await until('the older record again', async () => ((await read('appattempt_1652313600000_0077_000001'))?.record.pid === 1 ? true : undefined));
      await older.stop();
      assert.equal(await read('appattempt_1652313600000_0077_000001'), undefined);
    } finally {
      for (const s of sessions) await s.close();
    }
  });
});

describe('deploy: the sidecar address with the SQLite store', () => {
  it('is in rest.address-file (and the log line); http_sd answers with this sidecar alone', async () => {
    const dir = tempDir('blocklist-address-');
    const file = path.join(dir, 'blocklist-sidecar.json');
    const s = await startTestSidecar({ dir, define: { 'yarn.application.id': 'application_1652313600000_0005', 'rest.address-file': file } });
    try {
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as SidecarRecord;
      assert.equal(written.url, s.url);
      const sd = (await (await fetch(`${s.url}/discovery/prometheus`)).json()) as unknown;
      assert.deepEqual(sd, [{ targets: [new URL(s.url).host], labels: { __scheme__: 'http', application: 'application_1652313600000_0005', host: written.host } }]);
    } finally {
      await s.close();
    }
    assert.equal(fs.existsSync(file), false, 'removed when the sidecar stops');
  });
});
