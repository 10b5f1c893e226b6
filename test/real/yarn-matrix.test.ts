/**
 * The one interceptor jar (Java 8 class files, built against Hadoop 3.5) in the NodeManagers of
 * Hadoop 3.3, 3.4 and 3.5. 3.3 and 3.4: each release's own MiniYARNCluster RM and three
 * NodeManagers, the launchers compiled against that release (am-proxy/interceptor/matrix/), one
 * cluster per release for a lean check list, ended before the next starts. 3.5 is the shared
 * cluster of the full suites (yarn-*.test.ts), which load the same jar: checked last here.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { AppState, HADOOP, HadoopRelease, INTERCEPTOR_JAR, INTERCEPTOR_VERSION, RealYarn, appState, control, realYarn, requireRealYarn, startRealYarn, until, waitForApp } from '../support/real-yarn';
import { http } from '../support/sidecar';

interface Blacklist {
  blacklist: string[];
  owners: Record<string, string[]>;
}

interface CompletedPage {
  containers: { containerId: string; nodeId: string; exitStatus: number }[];
  next: number;
  epoch: string;
}

/** Connections that send one byte of a request and stop (#31.3): `count` of them, open until closed. */
async function halfOpen(address: string, count: number): Promise<net.Socket[]> {
  const u = new URL(address);
  return Promise.all(
    Array.from({ length: count }, () => new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(Number(u.port), u.hostname, () => s.write('G', () => resolve(s)));
      s.on('error', reject);
    })),
  );
}

/** What a 3 MB header line gets: the bytes answered before the connection ended (none: reset). */
function hugeHead(address: string): Promise<string> {
  const u = new URL(address);
  return new Promise((resolve) => {
    let answer = '';
    const s = net.connect(Number(u.port), u.hostname, () => s.end(`GET /amrm/v1/attempt HTTP/1.1\r\nX-Big: ${'a'.repeat(3 << 20)}\r\n\r\n`));
    s.on('data', (d) => (answer += d.toString('latin1')));
    s.on('error', () => undefined);
    s.on('close', () => resolve(answer));
  });
}

/** Beside 40 stalled clients an authenticated call on the NodeManager's real listener answers within 2 s, and a 3 MB head is refused. */
async function slowClientsCheck(address: string, secret: string): Promise<number> {
  const stalled = await halfOpen(address, 40);
  try {
    const t0 = performance.now();
    const r = await fetch(`${address}/amrm/v1/attempt`, { headers: { authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(2_000) });
    assert.equal(r.status, 200);
    await r.json();
    const ms = performance.now() - t0;
    assert.doesNotMatch(await hugeHead(address), /^HTTP\/1\.1 200/, 'no answer to a 3 MB head');
    return ms;
  } finally {
    for (const s of stalled) s.destroy();
  }
}

for (const line of ['3.3', '3.4'] as const) {
  const release: HadoopRelease = HADOOP[line];

  describe(`real YARN ${release.version}: the same interceptor jar in its NodeManagers`, function () {
    this.timeout(60_000);
    let y: RealYarn;
    let stop: (() => Promise<void>) | undefined;
    let main: AppState;
    let secret: string;
    let checksFrom: number | undefined;

    const proxy = async <T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> => {
      const r = await http(main.proxy!.address, method, `/amrm/v1${route}`, body, { authorization: `Bearer ${secret}` });
      return { status: r.status, body: r.body as T };
    };

    before(async function () {
      this.timeout(200_000);
      requireRealYarn(this, release);
      const cluster = await startRealYarn(release);
      stop = cluster.stop;
      y = cluster.ready;
      main = await appState(y, 'main');
      secret = fs.readFileSync(main.proxy!.secretFile, 'utf8').trim();
      console.log(`      (Hadoop ${release.version}: RM, 3 NodeManagers and 4 AMs up in ${y.startupMs} ms)`);
      checksFrom = performance.now();
    });

    after(async () => {
      if (checksFrom !== undefined) console.log(`      (Hadoop ${release.version}: its checks took ${(performance.now() - checksFrom).toFixed(0)} ms)`);
      await stop?.();
    });

    it(`its NodeManagers are Hadoop ${release.version}'s and load the shipped jar`, () => {
      assert.equal(y.hadoopVersion, release.version);
      assert.equal(y.interceptorCodeSource, INTERCEPTOR_JAR);
    });

    it('the opted-in AM gets its hand-off and its attempt with the AM container; the plain AM none', async () => {
      assert.ok(main.proxy, 'hand-off written');
      const attempt = await proxy<{ appAttemptId: string; amContainerId: string; registered: boolean; interceptorVersion?: string }>('GET', '/attempt');
      assert.equal(attempt.status, 200);
      assert.equal(attempt.body.interceptorVersion, INTERCEPTOR_VERSION, "the jar's version");
      const handoff = JSON.parse(fs.readFileSync(main.proxy!.handoffFile, 'utf8')) as { interceptorVersion?: string };
      assert.equal(handoff.interceptorVersion, INTERCEPTOR_VERSION, "the hand-off's too");
      assert.equal(attempt.body.appAttemptId, main.appAttemptId);
      assert.equal(attempt.body.registered, true);
      const attemptPart = main.appAttemptId!.replace(/^appattempt_/, '').replace(/_0*(\d+)$/, (_m, n: string) => `_${n.padStart(2, '0')}`);
      assert.match(attempt.body.amContainerId, new RegExp(`^container_(e\\d+_)?${attemptPart}_\\d{6,}$`), 'a container of this attempt');
      assert.equal((await appState(y, 'plain')).proxy, null, 'no hand-off for an AM that did not opt in');
    });

    it("40 half-open connections to the NodeManager's listener: an authenticated call still answers within 2 s; a 3 MB head is reset", async () => {
      console.log(`      (an authenticated call beside 40 stalled clients: ${(await slowClientsCheck(main.proxy!.address, secret)).toFixed(0)} ms)`);
    });

    it("a block reaches the RM scheduler's blacklist beside the AM's own entry, each under its owner", async () => {
      const blocked = y.nodes.find((n) => n !== main.proxy!.nodeHost)!;
      assert.equal((await proxy('POST', '/blacklist', { blacklistAdditions: [blocked] })).status, 200);
      await waitForApp(y, 'main', `${blocked} on the scheduler's blacklist`, (s) => s.schedulerBlacklist.includes(blocked) && s.schedulerBlacklist.includes(y.amOwnHost));
      const b = await proxy<Blacklist>('GET', '/blacklist');
      assert.deepEqual(b.body.owners, { am: [y.amOwnHost], blocklist: [blocked] });
    });

    it('a release ends the container in the RM and in the completed ring (ABORTED, on its node)', async () => {
      const live = await proxy<{ containers: { containerId: string; nodeId: string }[] }>('GET', '/containers');
      const victim = live.body.containers[0];
      assert.ok(victim, 'a live worker');
      const r = await proxy<{ released: string[] }>('POST', '/containers/release', { containerIds: [victim.containerId] });
      assert.deepEqual(r.body.released, [victim.containerId]);
      await waitForApp(y, 'main', 'the RM no longer lists it', (s) => !s.workers.some((w) => w.containerId === victim.containerId));
      const done = await until('the release in the completed ring', 20_000, async () => {
        const page = await proxy<CompletedPage>('GET', '/completed-containers?after=0');
        return page.body.containers.find((c) => c.containerId === victim.containerId);
      });
      assert.equal(done.exitStatus, -100);
      assert.equal(done.nodeId, victim.nodeId);
    });

    it("a NodeManager restart with recovery keeps the attempt, the owners' sets and the ring (under a new epoch)", async () => {
      const before = await proxy<Blacklist>('GET', '/blacklist');
      const ring = await proxy<CompletedPage>('GET', '/completed-containers?after=0');
      const host = main.proxy!.nodeHost;
      await control(y, 'POST', `/nodes/${host}/stop`);
      await control(y, 'POST', `/nodes/${host}/start`);
      const after = await until('the recovered interceptor answering', 30_000, async () => {
        const r = await proxy<CompletedPage>('GET', '/completed-containers?after=0').catch(() => undefined);
        return r?.status === 200 ? r.body : undefined;
      });
      assert.notEqual(after.epoch, ring.body.epoch, 'a new proxy state');
      assert.deepEqual(after.containers.map((c) => c.containerId), ring.body.containers.map((c) => c.containerId), "the old ring's entries first");
      assert.deepEqual((await proxy<Blacklist>('GET', '/blacklist')).body.owners, before.body.owners);
      const s = await appState(y, 'main');
      assert.equal(s.appAttemptId, main.appAttemptId, 'the same attempt');
      assert.ok(s.schedulerBlacklist.includes(before.body.owners.blocklist[0]), 'the RM still holds the block');
    });

    it('an unblock lifts the host from the RM, the AM\'s own entry stays', async () => {
      const blocked = (await proxy<Blacklist>('GET', '/blacklist')).body.owners.blocklist[0];
      assert.equal((await proxy('POST', '/blacklist', { blacklistRemovals: [blocked] })).status, 200);
      await waitForApp(y, 'main', `${blocked} off the scheduler's blacklist`, (s) => !s.schedulerBlacklist.includes(blocked));
      assert.deepEqual((await appState(y, 'main')).schedulerBlacklist, [y.amOwnHost]);
    });
  });
}

describe(`real YARN ${HADOOP['3.5'].version}: the shared cluster of the full suites runs the same jar`, function () {
  this.timeout(200_000);

  it(`its NodeManagers are Hadoop ${HADOOP['3.5'].version}'s and load the shipped jar`, async function () {
    requireRealYarn(this, HADOOP['3.5']);
    const y = await realYarn();
    assert.equal(y.hadoopVersion, HADOOP['3.5'].version);
    assert.equal(y.interceptorCodeSource, INTERCEPTOR_JAR);
  });

  it("its /attempt and hand-off name the jar's version", async function () {
    requireRealYarn(this, HADOOP['3.5']);
    const main = await appState(await realYarn(), 'main');
    const secret = fs.readFileSync(main.proxy!.secretFile, 'utf8').trim();
    const attempt = await http(main.proxy!.address, 'GET', '/amrm/v1/attempt', undefined, { authorization: `Bearer ${secret}` });
    assert.equal((attempt.body as { interceptorVersion?: string }).interceptorVersion, INTERCEPTOR_VERSION);
    assert.equal((JSON.parse(fs.readFileSync(main.proxy!.handoffFile, 'utf8')) as { interceptorVersion?: string }).interceptorVersion, INTERCEPTOR_VERSION);
  });

  it("40 half-open connections to the NodeManager's listener: an authenticated call still answers within 2 s; a 3 MB head is reset", async function () {
    requireRealYarn(this, HADOOP['3.5']);
    const main = await appState(await realYarn(), 'main');
    const ms = await slowClientsCheck(main.proxy!.address, fs.readFileSync(main.proxy!.secretFile, 'utf8').trim());
    console.log(`      (an authenticated call beside 40 stalled clients: ${ms.toFixed(0)} ms)`);
  });
});
