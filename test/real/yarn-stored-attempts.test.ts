/**
 * What the NodeManagers' state stores hold for the AMRMProxy across a new attempt and a NodeManager
 * restart, on the real YARN of test/support/real-yarn.ts (work-preserving recovery, LevelDB store).
 *
 * Hadoop's AMRMProxyService never removes a superseded attempt's entries on the NodeManager where a
 * new attempt's AM starts (initializePipeline removes the new attempt's instead), and keeps the
 * previous AM's pipeline (and entries) on its own NodeManager until the application finishes there;
 * its recover() rebuilds a pipeline from whatever it finds. The interceptor removes earlier attempts'
 * entries when a new attempt starts on its NodeManager, its own when its pipeline shuts down, and a
 * pipeline rebuilt for an attempt that no longer runs there neither serves nor keeps anything.
 *
 * Asserted: a new attempt that starts on a NodeManager holding an earlier attempt's entries leaves
 * only the live attempt's there; after restarts of the NodeManagers holding earlier attempts'
 * entries, no NodeManager holds any but the live attempt's, the proxy (one listener for the three
 * NodeManagers of this JVM) still answers for the live attempt, and the sidecar still sees its
 * blacklist on the RM and a worker's failure.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppState, RealYarn, SHADOW_DETECTOR_KEYS, control, mainSidecarKeys, proxyGet, realYarn, requireRealYarn, until, waitForApp } from '../support/real-yarn';
import { TestSidecar, http, startTestSidecar, tempDir } from '../support/sidecar';

interface Store {
  host: string;
  attempts: Record<string, string[]>;
  containers: Record<string, string>;
}

const STATE_KEY = 'blocklist-interceptor.state';

describe("real YARN: a superseded attempt's AMRMProxy entries do not outlive it in the NodeManagers' state stores", function () {
  this.timeout(120_000);
  let y: RealYarn;
  let sidecar: TestSidecar | undefined;
  let secretFile: string;
  let previous: AppState;
  let live: AppState;
  let blocked: string | undefined;
  let stopped: string | undefined;
  /** Earlier attempts stored on the NodeManager where the live attempt's AM started. */
  let sameNode: string[] = [];

  /** main's attempts stored on the host, with their keys. */
  const mainStored = async (host: string): Promise<Record<string, string[]>> => {
    const s = await control<Store>(y, 'GET', `/nodes/${host}/amrmproxy-store`);
    const app = y.applications.main.replace(/^application_/, 'appattempt_');
    return Object.fromEntries(Object.entries(s.attempts).filter(([a]) => a.startsWith(`${app}_`)));
  };
  const fromProxy = <T>(route: string): Promise<T> => proxyGet<T>(live.proxy!.address, secretFile, route);

  before(async function () {
    this.timeout(150_000);
    requireRealYarn(this);
    y = await realYarn();
    previous = await waitForApp(y, 'main', 'main registered through its proxy with three running workers', (s) => s.registered && s.proxy?.appAttemptId === s.appAttemptId && s.liveWorkers === 3 && s.workers.every((w) => w.running), 90_000);
    const dir = tempDir('blocklist-real-stored-attempts-');
    // The secret is the application's (derived from its id), the same for every attempt.
    secretFile = path.join(dir, 'amrm-proxy.secret');
    fs.copyFileSync(previous.proxy!.secretFile, secretFile);
    sidecar = await startTestSidecar({
      dir,
      define: { ...mainSidecarKeys(y, previous.proxy!.address, secretFile), ...SHADOW_DETECTOR_KEYS },
    });
  });

  after(async function () {
    this.timeout(60_000);
    if (stopped) await control(y, 'POST', `/nodes/${stopped}/start`);
    if (sidecar) {
      if (blocked) {
        await http(sidecar.url, 'DELETE', `/blocklist/nodes/${blocked}`);
        await waitForApp(y, 'main', 'the block lifted and three workers', (s) => s.schedulerBlacklist.join() === y.amOwnHost && s.liveWorkers === 3, 45_000).catch(() => undefined);
      }
      await sidecar.close();
    }
  });

  /** main's stored attempts on every running NodeManager. */
  const everywhere = async (): Promise<Record<string, Record<string, string[]>>> =>
    Object.fromEntries(await Promise.all(y.nodes.map(async (h) => [h, await mainStored(h)] as const)));

  it("new attempts until one starts on a NodeManager holding an earlier attempt's entries: it then holds only the live attempt's", async () => {
    blocked = y.nodes.find((n) => n !== previous.proxy!.nodeHost && n !== y.amOwnHost) ?? y.nodes.find((n) => n !== previous.proxy!.nodeHost)!;
    const put = await http(sidecar!.url, 'PUT', `/blocklist/nodes/${blocked}`, { action: 'MARK_BLOCKED', cause: 'stored-attempts test' });
    assert.equal(put.status, 201, put.text);
    await waitForApp(y, 'main', `${blocked} on the scheduler's blacklist`, (s) => s.schedulerBlacklist.includes(blocked!));
    live = previous;
    const seen = [{ attempt: previous.appAttemptId!, host: previous.proxy!.nodeHost }];
    // Hadoop keeps each earlier AM's pipeline and entries on its NodeManager until the application
    // finishes there, so after at most three new attempts on three NodeManagers one starts where an
    // earlier one is stored (AMRMProxyService#initializePipeline then replaces the pipeline).
    // Then on, until another NodeManager stores an earlier attempt too (the next test restarts it).
    let elsewhere = false;
    for (let i = 0; i < 6 && !(sameNode.length > 0 && elsewhere); i++) {
      const before = await everywhere();
      assert.ok(live.appAttemptId! in before[live.proxy!.nodeHost], "the running attempt is stored on its AM's NodeManager");
      const failed = live.appAttemptId;
      await control(y, 'POST', '/apps/main/fail-attempt');
      live = await waitForApp(y, 'main', 'a new attempt registered through its proxy', (s) => s.appAttemptId !== failed && s.registered && s.proxy?.appAttemptId === s.appAttemptId, 60_000);
      const host = live.proxy!.nodeHost;
      seen.push({ attempt: live.appAttemptId!, host });
      // The sidecar follows the new attempt and pushes its blacklist again (stored under the attempt).
      await waitForApp(y, 'main', `${blocked} on the new attempt's blacklist`, (s) => s.schedulerBlacklist.includes(blocked!), 30_000);
      const now = await until('the re-push stored under the live attempt', 10_000, async () => {
        const s = await mainStored(host);
        return s[live.appAttemptId!]?.includes(STATE_KEY) ? s : undefined;
      });
      assert.deepEqual(Object.keys(now), [live.appAttemptId], `only the live attempt's entries on ${host} (before it: ${JSON.stringify(Object.keys(before[host]))})`);
      assert.deepEqual(now[live.appAttemptId!].filter((k) => !k.startsWith('blocklist-interceptor.completed.')), ['amrmtoken', STATE_KEY, 'user']);
      const replaced = Object.keys(before[host]).filter((a) => a !== live.appAttemptId);
      if (replaced.length > 0) sameNode = replaced;
      elsewhere = y.nodes.some((h) => h !== host && Object.keys(before[h]).length > 0);
    }
    assert.ok(sameNode.length > 0, 'a new attempt started where an earlier one was stored');
    // Elsewhere it is Hadoop's: an earlier AM's NodeManager where no later AM started keeps its
    // attempt's entries while the application runs there, and removes them with the application's
    // pipeline once the RM tells it the application has nothing left there (stopApplication): seen
    // in a run where that NodeManager held none of main's workers any more. Reported, not asserted.
    const after = await everywhere();
    const kept = seen.filter((e, i) => !seen.slice(i + 1).some((l) => l.host === e.host)).map((e) => `${e.attempt} on ${e.host}: ${e.attempt in after[e.host] ? 'kept' : 'removed by Hadoop'}`);
    console.log(`      (earlier attempts where no later AM started: ${kept.join('; ') || 'none'})`);
  });

  it("NodeManager restarts: no dead attempt's entries are kept anywhere, the proxy answers for the live attempt, the sidecar sees its blacklist and a failure", async () => {
    const holding = Object.entries(await everywhere()).filter(([h, s]) => h !== live.proxy!.nodeHost && Object.keys(s).length > 0).map(([h]) => h);
    // The NodeManagers storing earlier attempts (the previous test makes sure there is one). Not the
    // live AM's: restarted seconds after a new attempt's AM started where an earlier AM was stopped,
    // a NodeManager here starts the AM container again, whose registration the RM refuses
    // (test/real/yarn-nm-restart.test.ts restarts a long-running AM's NodeManager).
    assert.ok(holding.length > 0, 'a NodeManager other than the live AM\'s stores an earlier attempt');
    const stale = holding;
    // The live AM has its registration's answer (it sent its own blacklist, which it does after
    // registering): a NodeManager restart between the RM registering the AM and the answer reaching
    // it makes the AM's retried registration fail ("already registered") and the attempt end.
    await until("the live AM's own blacklist entry through its proxy", 20_000, async () =>
      (await fromProxy<{ owners: Record<string, string[]> }>('/blacklist')).owners.am?.includes(y.amOwnHost) ? true : undefined,
    );
    const t0 = Date.now();
    for (const h of stale) {
      await control(y, 'POST', `/nodes/${h}/stop`);
      stopped = h;
      await control(y, 'POST', `/nodes/${h}/start`);
      stopped = undefined;
    }
    const restartMs = Date.now() - t0;
    // AMRMProxyService#recover runs inside the NodeManager's start. An earlier attempt whose AM
    // container that NodeManager still runs (the RM's clean-up of a failed attempt's AM is not always
    // done within seconds here) is rebuilt as live, not served, and retires at a re-check (every 5 s)
    // once the container's end is recorded; any other is not kept.
    const allowed = async (): Promise<Record<string, string[]>> =>
      Object.fromEntries(await Promise.all(y.nodes.map(async (h) => {
        const s = await control<Store>(y, 'GET', `/nodes/${h}/amrmproxy-store`);
        const running = (a: string): boolean => Object.entries(s.containers).some(([id, st]) => st === 'RUNNING' && id.endsWith('_000001') && id.includes(`_${a.slice(a.lastIndexOf('_') + 1).slice(-2)}_`));
        return [h, Object.keys(s.attempts).filter((a) => a.startsWith(live.appAttemptId!.slice(0, live.appAttemptId!.lastIndexOf('_'))) && !(a === live.appAttemptId && h === live.proxy!.nodeHost) && !running(a))] as const;
      })));
    let lastLeft: Record<string, string[]> = {};
    await until("no dead attempt stored but one whose AM container still runs there", 20_000, async () => {
      lastLeft = await allowed();
      return Object.values(lastLeft).every((l) => l.length === 0) ? true : undefined;
    }).catch(() => assert.deepEqual(lastLeft, Object.fromEntries(y.nodes.map((h) => [h, []])), 'attempts stored that should not be'));
    assert.ok(live.appAttemptId! in (await mainStored(live.proxy!.nodeHost)), "the live attempt stays stored on its AM's NodeManager");
    const settledMs = Date.now() - t0 - restartMs;
    const att = await until('the proxy to answer', 20_000, () => fromProxy<{ appAttemptId: string }>('/attempt'));
    assert.equal(att.appAttemptId, live.appAttemptId, 'the secret still selects the live attempt, not a pipeline rebuilt for a dead one');
    const view = await fromProxy<{ owners: Record<string, string[]> }>('/blacklist');
    assert.deepEqual(view.owners, { am: [y.amOwnHost], blocklist: [blocked] });
    const back = await waitForApp(y, 'main', "the block on the live attempt's blacklist, a running worker", (s) => s.appAttemptId === live.appAttemptId && s.schedulerBlacklist.includes(blocked!) && s.workers.some((w) => w.running), 30_000);

    const victim = back.workers.find((w) => w.running)!;
    const killed = await until(`a worker on ${victim.host} to kill`, 10_000, async () => {
      const r = await control<{ containerId: string | null; killed: boolean }>(y, 'POST', `/apps/main/kill-worker?host=${victim.host}&container=${victim.containerId}`);
      return r.killed && r.containerId ? r.containerId : undefined;
    });
    let lastPage: unknown;
    await until("the failure in the live attempt's completed ring", 20_000, async () => {
      const p = await fromProxy<{ containers: { containerId: string }[] }>('/completed-containers?after=0');
      lastPage = p;
      return p.containers.some((c) => c.containerId === killed) ? true : undefined;
    }).catch(async (e: Error) => {
      const am = live.appAttemptId!.replace(/^appattempt_(\d+_\d+)_0*(\d+)$/, (_m, app: string, n: string) => `container_${app}_${n.padStart(2, '0')}_000001`);
      const logs: string[] = [];
      const walk = (d: string): void => {
        for (const f of fs.readdirSync(d, { withFileTypes: true })) {
          const q = path.join(d, f.name);
          if (f.isDirectory()) walk(q);
          else if (q.includes(am) && f.name === 'stderr') logs.push(`${q}: ${fs.readFileSync(q, 'utf8').split('\n').filter((l) => !/^\s+at (java|jdk|com\.sun|org\.apache\.hadoop\.(ipc|security|util))/.test(l)).join('\n').slice(-8000)}`);
        }
      };
      walk(path.join(y.workDir, 'yarn'));
      const launcher = fs.readFileSync(y.log, 'utf8').split('\n').filter((l) => /AMRMProxy|blocklist AMRM|Recover|ERROR|WARN.*amrm/i.test(l)).slice(-60).join('\n');
      throw new Error(`${e.message}; killed ${killed} on ${victim.host} (restarted ${stale.join()}); ring ${JSON.stringify(lastPage)}; app ${JSON.stringify(await control(y, 'GET', '/apps/main'))}\nAM ${am}:\n${logs.join('\n')}\nlauncher:\n${launcher}`);
    });
    const report = await sidecar!.detector!.pass();
    assert.ok(report, 'the detector made a pass');
    const ids = report.hosts.flatMap((h) => h.incidents.flatMap((i) => i.containerIds));
    assert.equal(ids.filter((i) => i === killed).length, 1, `${killed} counted once by the detector`);
    const st = (await http(sidecar!.url, 'GET', '/status')).body as { blacklist: { desired: string[] } };
    assert.deepEqual(st.blacklist.desired, [blocked]);
    console.log(`      (live ${live.appAttemptId} on ${live.proxy!.nodeHost}, replaced ${sameNode.join()} there; restarted ${stale.join(', ')} in ${restartMs} ms, stores settled ${settledMs} ms after)`);
  });
});
