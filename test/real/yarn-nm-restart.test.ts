/**
 * A NodeManager restart under a running sidecar, on the real YARN of test/support/real-yarn.ts.
 * The NodeManagers run with work-preserving recovery (yarn.nodemanager.recovery.enabled, supervised):
 * stopping the one that hosts main's AM leaves the AM and every container running and the RM keeps
 * the node; starting it again makes AMRMProxyService#recover build a new interceptor pipeline for
 * the attempt from the NodeManager's state store (a new BlocklistRequestInterceptor: init, then
 * recover with the entries the old one stored). The attempt stays the same, so nothing tells the
 * sidecar but the proxy itself: it goes away, then answers under a new epoch.
 *
 * Asserted across the restart, inside YARN (the RM scheduler's blacklist for the attempt) and in
 * the sidecar: the RM's blacklist equals the effective blocklist (a block made while the proxy was
 * away lands after it); the AM's own entries stay the AM's; failures of containers allocated before
 * the restart, completed during or after it, are read from the new instance's ring, each once;
 * the sidecar's status and metrics show the proxy away and back.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppState, RealYarn, SHADOW_DETECTOR_KEYS, appState, control, mainSidecarKeys, proxyGet, realYarn, requireRealYarn, until, waitForApp } from '../support/real-yarn';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';

interface CompletedPage {
  epoch: string;
  next: number;
  containers: { seq: number; containerId: string; nodeId: string; exitStatus: number }[];
}

interface Status {
  lastError?: string;
  lastSuccessfulSync?: number;
  blacklist: { desired: string[]; actual: string[]; owners?: Record<string, string[]> };
}


describe('real YARN: a NodeManager restart with recovery replaces the AMRMProxy interceptor under a running sidecar', function () {
  this.timeout(120_000);
  let y: RealYarn;
  let main: AppState;
  let sidecar: TestSidecar | undefined;
  let secretFile: string;
  /** The AM's host (its NodeManager is the one restarted), and the two others (blocked in turn). */
  let amHost: string;
  let x: string;
  let z: string;
  let stopped: string | undefined;
  let ringBefore: CompletedPage;
  let killedBefore: string;
  let killedAway: string;
  /** Failed before the NodeManager stopped, in the old ring, never read by the detector. */
  let killedUnread: string;
  let failuresBefore: number;
  /** The workers running when the NodeManager stops: allocated through the old instance. */
  let preRestart: AppState['workers'];
  /** The workers when this suite began. */
  let original: AppState['workers'];
  let stoppedAt: number;

  const fromProxy = <T>(route: string): Promise<T> => proxyGet<T>(main.proxy!.address, secretFile, route);
  const status = async (): Promise<Status> => (await http(sidecar!.url, 'GET', '/status')).body as Status;
  const failedPasses = async (): Promise<number> => {
    const text = (await http(sidecar!.url, 'GET', '/metrics')).text;
    const m = /^blocklist_reconcile_passes_total\{result="failure"\} (\d+)/m.exec(text);
    return m ? Number(m[1]) : 0;
  };
  const block = async (host: string): Promise<void> => {
    const r = await http(sidecar!.url, 'PUT', `/blocklist/nodes/${host}`, { action: 'MARK_BLOCKED', cause: 'nm-restart test' });
    assert.equal(r.status, 201, r.text);
  };
  /** SIGKILLs the process of a worker on `host` (exit 137, counted toward the node); its container id. */
  const killWorker = async (w: { host: string; containerId?: string }): Promise<string> => {
    // A container the RM lists may not have its process yet (no pid file): ask again, bounded.
    const k = await until(`a worker on ${w.host} to kill (${w.containerId ?? 'any'})`, 10_000, async () => {
      const r = await control<{ containerId: string | null; killed: boolean }>(y, 'POST', `/apps/main/kill-worker?host=${w.host}${w.containerId ? `&container=${w.containerId}` : ''}`);
      return r.killed && r.containerId ? r.containerId : undefined;
    });
    return k;
  };
  /** Workers to kill, best first: one that ran when the suite began (its process surely runs), off the AM's host (its NodeManager reports at once). */
  const byPreference = (ws: AppState['workers']): AppState['workers'] => {
    const rank = (w: AppState['workers'][number]): number => (original.some((o) => o.containerId === w.containerId) ? 0 : 2) + (w.host !== amHost ? 0 : 1);
    return [...ws].sort((a, b) => rank(a) - rank(b));
  };
  /** Every container id the detector holds an incident for (shadow mode: it only reports). */
  const incidents = async (): Promise<string[]> => {
    const report = await sidecar!.detector!.pass();
    assert.ok(report, 'the detector made a pass');
    return report.hosts.flatMap((h) => h.incidents.flatMap((i) => i.containerIds));
  };

  before(async function () {
    this.timeout(200_000);
    requireRealYarn(this);
    y = await realYarn();
    main = await waitForApp(y, 'main', 'main registered through its proxy with three workers', (s) => s.registered && s.proxy?.appAttemptId === s.appAttemptId && s.liveWorkers === 3 && s.workers.every((w) => w.running), 90_000);
    amHost = main.proxy!.nodeHost;
    original = main.workers;
    const others = y.nodes.filter((n) => n !== amHost);
    // x is blocked before the restart, z while the proxy is away; replacements then go to the AM's host.
    x = others[0];
    z = others.find((h) => h !== x)!;
    const dir = tempDir('blocklist-real-nm-restart-');
    secretFile = path.join(dir, 'amrm-proxy.secret');
    fs.copyFileSync(main.proxy!.secretFile, secretFile);
    sidecar = await startTestSidecar({
      dir,
      define: { ...mainSidecarKeys(y, main.proxy!.address, secretFile), ...SHADOW_DETECTOR_KEYS },
    });
  });

  after(async function () {
    this.timeout(60_000);
    if (stopped) await control(y, 'POST', `/nodes/${stopped}/start`);
    if (sidecar) {
      for (const h of [x, z]) if (h) await http(sidecar.url, 'DELETE', `/blocklist/nodes/${h}`);
      // The next suite finds main as it was: only the AM's own entry, three workers.
      await waitForApp(y, 'main', 'the blocks lifted and three workers', (s) => s.schedulerBlacklist.join() === y.amOwnHost && s.liveWorkers === 3, 45_000).catch(() => undefined);
      await sidecar.close();
    }
  });

  it('before the restart: a block is on the RM scheduler\'s blacklist and a failed worker is read once', async () => {
    await block(x);
    await waitForApp(y, 'main', `${x} on the scheduler's blacklist`, (s) => s.schedulerBlacklist.includes(x));
    killedBefore = await killWorker(byPreference(main.workers)[0]);
    ringBefore = await until('the killed worker in the completed ring', 20_000, async () => {
      const p = await fromProxy<CompletedPage>('/completed-containers?after=0');
      return p.containers.some((c) => c.containerId === killedBefore) ? p : undefined;
    });
    assert.equal((await incidents()).filter((id) => id === killedBefore).length, 1);
    // The replacement runs before the NodeManager goes (three workers for the kills below).
    // Launched, not only allocated: a container the AM has not started when its NodeManager stops
    // may not outlive the restart, and the kills below need processes.
    main = await waitForApp(y, 'main', 'the replacement worker running', (s) => s.liveWorkers === 3 && s.workers.every((w) => w.running) && !s.workers.some((w) => w.containerId === killedBefore), 30_000);
  });

  it('while the NodeManager is down: the proxy refuses, the sidecar says so, a new block is stored and waits', async () => {
    failuresBefore = await failedPasses();
    preRestart = main.workers;
    // A worker fails and its end reaches the old instance's ring, but the detector makes no pass
    // before the NodeManager goes: the entry must come back in the new instance's ring.
    const first = byPreference(preRestart)[0];
    killedUnread = await killWorker(first);
    await until('the unread failure in the old ring', 20_000, async () =>
      (await fromProxy<CompletedPage>('/completed-containers?after=0')).containers.some((c) => c.containerId === killedUnread) ? true : undefined,
    );
    stoppedAt = Date.now();
    await control(y, 'POST', `/nodes/${amHost}/stop`);
    stopped = amHost;
    // Refused when no other application's AM runs there (the listener closed with its last user),
    // a 401 when one does (the listener lives on, main's secret is no longer known).
    const down = await fromProxy('/attempt').then(
      () => 'answered',
      (e: Error) => String(e.cause ?? e.message),
    );
    assert.match(down, /ECONNREFUSED|401/, 'the stopped NodeManager no longer serves main');
    await block(z);
    // A worker of a pre-restart allocation fails while nobody fronts the AM: the RM keeps its
    // completion for the attempt until the AM's next allocate, which goes through the new instance.
    // One of the workers that ran before this suite began (its process surely runs), not on the
    // AM's host if there is one: a NodeManager that stays up reports its end at once.
    killedAway = await killWorker(byPreference(preRestart.filter((w) => w.containerId !== killedUnread))[0]);
    const st = await until('the sidecar to report the proxy unreachable', 20_000, async () => {
      const s = await status();
      return s.lastError !== undefined && (await failedPasses()) > failuresBefore ? s : undefined;
    });
    assert.match(st.lastError ?? '', /proxy|401|ECONNREFUSED|fetch/i, 'the error names the proxy');
    const item = (await http(sidecar!.url, 'GET', `/blocklist/nodes/${z}`)).body as { sync?: { state: string; detail: string } };
    assert.equal(item.sync?.state, 'pending', `the new block is stored and waits: ${JSON.stringify(item.sync)}`);
    const rm = await appState(y, 'main');
    assert.ok(!rm.schedulerBlacklist.includes(z), 'and not on the RM yet: nothing fronts the AM');
    assert.equal(rm.appAttemptId, main.appAttemptId, 'the attempt lives on');
  });

  it("after recovery: the RM's blacklist equals the effective blocklist, the AM's own entry is still the AM's", async () => {
    await control(y, 'POST', `/nodes/${amHost}/start`);
    stopped = undefined;
    const back = await waitForApp(y, 'main', 'the recovered pipeline to write its hand-off', (s) => s.proxy?.appAttemptId === s.appAttemptId, 30_000);
    assert.equal(back.appAttemptId, main.appAttemptId, 'the same attempt: the AM never noticed more than failed connections');
    const want = [...new Set([x, z])].sort();
    const rm = await waitForApp(y, 'main', `${want} on the RM scheduler's blacklist`, (s) => want.every((h) => s.schedulerBlacklist.includes(h)), 30_000);
    assert.deepEqual(rm.schedulerBlacklist, [...want, y.amOwnHost].sort());
    const st = await until('a pass through the new instance', 20_000, async () => {
      const s = await status();
      return s.lastError === undefined && (s.lastSuccessfulSync ?? 0) > stoppedAt ? s : undefined;
    });
    assert.deepEqual([...st.blacklist.desired].sort(), want, "the sidecar's effective blocklist");
    const view = await fromProxy<{ blacklist: string[]; owners: Record<string, string[]> }>('/blacklist');
    assert.deepEqual(view.owners, { am: [y.amOwnHost], blocklist: want }, 'each owner as before the restart: the AM does not send its blacklist again');
    assert.equal((await fromProxy<{ registered: boolean }>('/attempt')).registered, true, 'the AM registered once, before the restart');
  });

  it("after recovery: the new epoch's ring holds the old ring's entries first, then failures of containers allocated before the restart; the detector counts each once", async () => {
    const now = (await appState(y, 'main')).workers;
    // Still running, allocated before the restart: the old instance's live table placed it, the
    // new one knows it only from the stored state.
    const victim = byPreference(preRestart.filter((w) => w.containerId !== killedAway && w.containerId !== killedUnread && now.some((n) => n.containerId === w.containerId && n.running)))[0];
    assert.ok(victim, `a worker allocated before the restart still runs: ${JSON.stringify(now)}`);
    const killedAfter = await killWorker(victim);
    const page = await until('both failures in the new ring', 30_000, async () => {
      const p = await fromProxy<CompletedPage>('/completed-containers?after=0');
      return [killedAway, killedAfter].every((id) => p.containers.some((c) => c.containerId === id)) ? p : undefined;
    });
    assert.notEqual(page.epoch, ringBefore.epoch, 'a new interceptor instance numbers its ring under a new epoch');
    for (const id of [killedAway, killedAfter]) {
      const c = page.containers.filter((e) => e.containerId === id);
      assert.equal(c.length, 1, `${id} once in the ring`);
      assert.equal(c[0].exitStatus, 137);
      assert.ok(y.nodes.some((n) => c[0].nodeId.startsWith(`${n}:`)), `${id} is placed on its node: ${c[0].nodeId}`);
    }
    // The old instance's entries come first in the new ring, renumbered: the one the detector had
    // read comes again (keyed by container, not counted twice), the unread one is not lost.
    for (const id of [killedBefore, killedUnread]) {
      const c = page.containers.filter((e) => e.containerId === id);
      assert.equal(c.length, 1, `${id} of the old ring once in the new one`);
      assert.ok(c[0].seq < page.containers.find((e) => e.containerId === killedAfter)!.seq, 'before the new entries');
    }
    const ids = await incidents();
    for (const id of [killedBefore, killedUnread, killedAway, killedAfter]) assert.equal(ids.filter((i) => i === id).length, 1, `${id} counted once by the detector`);
  });
});
