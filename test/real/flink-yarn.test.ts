/**
 * Unmodified Flink on a real YARN, with the sidecar started inside Flink's AM container the way
 * docs/deploy.md tells a user to (test/support/flink-yarn.ts): Flink's own YarnClusterDescriptor
 * deploys a session into a MiniYARNCluster whose NodeManagers run the blocklist interceptor, and a
 * never-ending streaming job runs with one TaskManager per NodeManager. Every assertion reads YARN
 * inside the RM (the scheduler's blacklist for Flink's current attempt, where its containers are)
 * or Flink through its REST API, never the sidecar's own view. The figures it prints are measured
 * here, each beside its limit from the same run (docs/benchmarks.md).
 */
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cliMain } from '../support/paths';
import { until } from '../support/real-yarn';
import { http } from '../support/sidecar';
import {
  FlinkApp, FlinkJob, FlinkYarnLine, FlinkYarnRig, RecoverySteps, allRunning, amAudit, flinkApp, flinkJob, flinkYarn, killContainer, publishedSidecar, recoverySteps, requireFlinkYarn, startNeighbour, neighbourApp, stopFlinkYarn, submitSlowBatch, waitForFlinkApp, waitForFlinkJob,
} from '../support/flink-yarn';

const EVACUATE = 'MARK_BLOCKED_AND_EVACUATE_TASKS';
/** Flink's defaults, which the rig keeps (YarnConfigOptions: yarn.heartbeat.interval, yarn.heartbeat.container-request-interval). */
const AM_HEARTBEAT_IDLE_MS = 5000;
const AM_HEARTBEAT_PENDING_MS = 500;

/** Each process's pid and one of its /proc files, as text (the processes that went meanwhile, or are not ours to read, left out). */
function procFiles(file: 'environ' | 'cmdline'): { pid: number; text: string }[] {
  const out: { pid: number; text: string }[] = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push({ pid: Number(d), text: fs.readFileSync(`/proc/${d}/${file}`, 'latin1') });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/** The pids of processes started in a container (YARN puts CONTAINER_ID into each one's environment). */
function processesOf(containerId: string): number[] {
  return procFiles('environ').filter((p) => p.text.split('\0').includes(`CONTAINER_ID=${containerId}`)).map((p) => p.pid);
}

/** Processes whose command line names `dir` (the rig's JVM, its NodeManagers' containers: every one of them passes the rig's hosts file). */
function processesNaming(dir: string): string[] {
  return procFiles('cmdline')
    .filter((p) => p.pid !== process.pid && p.text.includes(dir))
    .map((p) => `${p.pid}: ${p.text.split('\0').join(' ').slice(0, 160)}`);
}
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Flink's own account of a recovery (its jobmanager.log), in seconds from `t0`, up to `runningAt` (every task RUNNING, from its REST API). */
const steps = (s: RecoverySteps, t0: number, runningAt: number): string => {
  const at = (ms: number | undefined): string => (ms === undefined ? '?' : `+${seconds(ms - t0)}`);
  return `YARN told Flink the container ended ${at(s.terminated)}, replacement container ${at(s.received)}, its TaskManager registered ${at(s.registered)}, every task RUNNING ${at(runningAt)}`;
};
const figure = (text: string): void => console.log(`      figure: ${text}`);

/** The hosts Flink's job runs on, from Flink's REST API. */
const jobHosts = (j: FlinkJob): Set<string> => new Set(j.subtasks.map((s) => s.host));
const tmHosts = (a: FlinkApp): string[] => a.taskManagers.map((t) => t.host);

function suite(line: FlinkYarnLine, full: boolean): void {
  describe(`real Flink ${line} on YARN: the sidecar in Flink's AM container`, function () {
    this.timeout(180_000);
    let rig: FlinkYarnRig;
    /** The sidecar of Flink's current attempt, where it published its address (rest.port 0: any free port). */
    let sidecarUrl: string;
    let blockedX: string;
    /** Recovery of the same job from a TaskManager killed with kill -9 (the evacuation's yardstick). */
    let killRecoveryMs: number | undefined;

    const sidecar = async (method: string, p: string, body?: unknown): Promise<{ status: number; text: string }> => {
      const r = await http(sidecarUrl, method, p, body);
      return { status: r.status, text: r.text };
    };
    const block = async (node: string, action = 'MARK_BLOCKED'): Promise<number> => {
      const t0 = Date.now();
      const r = await sidecar('PUT', `/blocklist/nodes/${node}`, { action, cause: `flink-yarn ${line} test` });
      assert.equal(r.status, 201, r.text);
      return t0;
    };
    const unblock = async (node: string): Promise<void> => {
      const r = await sidecar('DELETE', `/blocklist/nodes/${node}`);
      assert.equal(r.status, 200, r.text);
    };
    const sidecarPasses = async (): Promise<number> => {
      const text = (await sidecar('GET', '/metrics')).text;
      return [...text.matchAll(/^blocklist_reconcile_passes_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const job = async (): Promise<FlinkJob> => flinkJob((await flinkApp(rig)).flinkRest!, rig.streamJobId);

    before(async function () {
      this.timeout(320_000);
      requireFlinkYarn(this, line);
      rig = await flinkYarn(line);
      console.log(`      rig: Flink ${rig.flinkVersion} on Hadoop ${rig.hadoopVersion}, shipping ${path.basename(rig.tarball)} (${(rig.tarballBytes / 1048576).toFixed(1)} MiB, sha256 checked; npm run dist: ${seconds(rig.distMs)}); YARN up in ${seconds(rig.yarnMs)}, session deployed at ${seconds(rig.deployMs)}, job on every node at ${seconds(rig.startupMs)}`);
      sidecarUrl = (await publishedSidecar(rig, (await flinkApp(rig)).appAttemptId ?? undefined)).url;
    });

    // The next line's rig must not run beside this one on 2 cores.
    after(async function () {
      this.timeout(60_000);
      const dir = rig?.workDir;
      await stopFlinkYarn(line);
      if (dir === undefined) return;
      // Nothing of the rig outlives it: a container left behind would run beside the next suites.
      let left: string[] = [];
      const deadline = Date.now() + 20_000;
      while ((left = processesNaming(dir)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      assert.deepEqual(left, [], `processes of the ${line} rig still running 20 s after it stopped`);
    });

    it("deploys: Flink's AM registers through its NodeManager's AMRMProxy, the sidecar runs in its container, one TaskManager per NodeManager", async () => {
      const app = await flinkApp(rig);
      assert.equal(app.state, 'RUNNING');
      assert.equal(app.attemptState, 'RUNNING');
      assert.deepEqual([...tmHosts(app)].sort(), [...rig.nodes].sort(), 'one TaskManager container on each NodeManager');
      const j = await waitForFlinkJob(rig, rig.streamJobId, 'the job running on all three nodes', (x) => allRunning(x) && jobHosts(x).size === 3);
      assert.deepEqual([...jobHosts(j)].sort(), [...rig.nodes].sort());
      // The interceptor fronted Flink's AM: its hand-off sits in the application's local dir on the AM's host.
      const am = app.amContainer!;
      const nm = `nm${rig.nodes.indexOf(am.host) + 1}`;
      const handoff = path.join(rig.workDir, 'yarn', nm, 'local', 'usercache');
      const user = fs.readdirSync(handoff)[0];
      assert.ok(fs.existsSync(path.join(handoff, user, 'appcache', app.applicationId, 'blocklist-amrm-proxy.json')), 'the interceptor wrote its hand-off for Flink');
      // The sidecar was started by the wrapper inside the AM container: its log is in that container's log dir.
      const log = fs.readFileSync(path.join(rig.workDir, 'yarn', nm, 'log', app.applicationId, am.containerId, 'blocklist-sidecar.log'), 'utf8');
      assert.match(log, /sidecar listening on/);
      assert.match(log, /AMRM proxy/);
      // And it is in step with YARN through the interceptor Flink's AM talks to.
      await until('the sidecar ready (synced with YARN)', 30_000, async () => ((await sidecar('GET', '/readyz')).status === 200 ? true : undefined));
      // An operator finds it as docs/deploy.md says: `blocklist --app <applicationId>` over the ZooKeeper store.
      const status = spawnSync('node', [cliMain, 'status', '--app', app.applicationId, '--store', rig.store, '-o', 'json'], { encoding: 'utf8' });
      assert.equal(status.status, 0, status.stderr);
      assert.equal((JSON.parse(status.stdout) as { appAttemptId?: string }).appAttemptId, app.appAttemptId, status.stdout);
    });

    it("MARK_BLOCKED: the node goes on the scheduler's blacklist for Flink's attempt; the job and the node's TaskManager stay", async () => {
      const before = await flinkApp(rig);
      blockedX = before.taskManagers.find((t) => t.host !== before.amContainer!.host)!.host;
      const t0 = await block(blockedX);
      await waitForFlinkApp(rig, `${blockedX} on the scheduler's blacklist`, (a) => a.schedulerBlacklist.includes(blockedX), 30_000);
      const ms = Date.now() - t0;
      figure(`PUT MARK_BLOCKED -> on the scheduler's blacklist for Flink's attempt: ${seconds(ms)} (limit: Flink's AM heartbeat ${seconds(AM_HEARTBEAT_IDLE_MS)} idle, ${seconds(AM_HEARTBEAT_PENDING_MS)} with pending requests, + the sidecar's 1 s pass)`);
      const after = await flinkApp(rig);
      const onX = before.taskManagers.find((t) => t.host === blockedX)!;
      assert.ok(after.taskManagers.some((t) => t.containerId === onX.containerId), `${blockedX}'s TaskManager stays`);
      assert.ok(allRunning(await job()), 'the job keeps running');
      // The sidecar reads Flink's REST API from the AM container (where the RM's report says it is), so
      // it tells a busy TaskManager from an idle one and can trigger checkpoints.
      await until("the sidecar reading Flink's REST API", 20_000, async () => {
        const st = JSON.parse((await sidecar('GET', '/status')).text) as { flink?: { state?: string; checkpointTrigger?: boolean } };
        return st.flink?.state === 'read' ? st : undefined;
      });
    });

    if (full) {
      it(`a TaskManager killed with kill -9: Flink asks for a replacement, which YARN never places on the blocked node`, async () => {
        const app = await flinkApp(rig);
        const victim = app.taskManagers.find((t) => t.host !== blockedX)!;
        const k = await killContainer(rig, victim.containerId);
        assert.ok(k.killed, JSON.stringify(k));
        const j = await waitForFlinkJob(rig, rig.streamJobId, 'the job RUNNING again without the killed TaskManager', (x) => allRunning(x) && x.subtasks.every((s) => s.taskManagerId !== victim.containerId));
        const runningAt = Date.now();
        killRecoveryMs = runningAt - k.atMs;
        figure(`TaskManager killed with kill -9 -> job RUNNING again: ${seconds(killRecoveryMs)} (${steps(recoverySteps(rig, app.amContainer!, k.atMs), k.atMs, runningAt)})`);
        const now = await flinkApp(rig);
        const fresh = now.taskManagers.filter((t) => !app.taskManagers.some((o) => o.containerId === t.containerId));
        assert.ok(fresh.length >= 1, 'a replacement TaskManager');
        assert.ok(fresh.every((t) => t.host !== blockedX), `no replacement on ${blockedX}: ${JSON.stringify(fresh)}`);
        assert.ok(j.subtasks.some((s) => s.host === blockedX), `the TaskManager on ${blockedX} still runs its subtask`);
      });
    }

    it('EVACUATE: the node\'s TaskManager is released, Flink fails over and its replacement runs elsewhere; RUNNING again with none on the node', async () => {
      const app = await flinkApp(rig);
      // A node with one TaskManager, as the kill -9 above took one (the replacement of that one may share a node with another).
      const count = (h: string): number => app.taskManagers.filter((t) => t.host === h).length;
      const y = rig.nodes.filter((h) => h !== blockedX && count(h) > 0).sort((a, b) => count(a) - count(b))[0];
      const onY = app.taskManagers.filter((t) => t.host === y).map((t) => t.containerId);
      const t0 = await block(y, EVACUATE);
      const released = await waitForFlinkApp(rig, `${y}'s TaskManagers released`, (a) => a.taskManagers.every((t) => !onY.includes(t.containerId)) && a.schedulerBlacklist.includes(y), 60_000);
      const releasedMs = Date.now() - t0;
      assert.ok(released.schedulerBlacklist.includes(blockedX));
      const j = await waitForFlinkJob(rig, rig.streamJobId, `the job RUNNING again with nothing on ${y}`, (x) => allRunning(x) && !jobHosts(x).has(y));
      const runningAt = Date.now();
      const ms = runningAt - t0;
      // The job checkpoints: the sidecar released right after a checkpoint it triggered (#29), not blind.
      const releases = amAudit(rig, app.amContainer!).filter((a) => a.op === 'evacuation-release' && a.id === y);
      assert.equal(releases.length, onY.length, JSON.stringify(releases));
      assert.ok(releases.every((r) => /after a completed checkpoint/.test(r.detail ?? '')), JSON.stringify(releases));
      const checkpoint = amAudit(rig, app.amContainer!).filter((a) => a.op === 'evacuation-checkpoint' && a.at !== undefined && Date.parse(a.at) >= t0);
      const cp = checkpoint.length >= 2 ? `, checkpoint triggered +${seconds(Date.parse(checkpoint[0].at!) - t0)} and ${checkpoint[1].outcome} +${seconds(Date.parse(checkpoint[1].at!) - t0)}` : '';
      const limit = killRecoveryMs === undefined ? '' : `; the same job's recovery from kill -9 ${seconds(killRecoveryMs)}, ratio ${(ms / killRecoveryMs).toFixed(2)}x (goal <= 1.2x)`;
      figure(`PUT EVACUATE -> job RUNNING again elsewhere: ${seconds(ms)} (${onY.length} TaskManager(s)${cp}, ${seconds(releasedMs)} to the container's release seen in the RM; ${steps(recoverySteps(rig, app.amContainer!, t0), t0, runningAt)})${limit}`);
      const now = await flinkApp(rig);
      assert.ok(!tmHosts(now).includes(y), `no TaskManager on ${y}`);
      const fresh = now.taskManagers.filter((t) => !app.taskManagers.some((o) => o.containerId === t.containerId));
      assert.ok(fresh.length >= 1 && fresh.every((t) => t.host !== blockedX && t.host !== y), `the replacement on neither blocked node: ${JSON.stringify(fresh)}`);
      assert.ok(j.subtasks.every((s) => s.host !== y));
      await unblock(y);
      await unblock(blockedX);
      await waitForFlinkApp(rig, 'both nodes off the scheduler\'s blacklist', (a) => !a.schedulerBlacklist.includes(y) && !a.schedulerBlacklist.includes(blockedX), 30_000);
    });

    if (full) {
      it("a node Flink's own AMRMClient blacklists (speculative execution's slow node) stays there through the sidecar's block, unblock and full resync", async () => {
        const before = await flinkApp(rig);
        const { jobId } = await submitSlowBatch(rig);
        const ownBlock = await waitForFlinkApp(rig, "a node on the scheduler's blacklist that the sidecar never blocked", (a) => a.schedulerBlacklist.some((h) => !before.schedulerBlacklist.includes(h)), 120_000);
        const h = ownBlock.schedulerBlacklist.find((n) => !before.schedulerBlacklist.includes(n))!;
        await waitForFlinkJob(rig, jobId, 'the slow batch job finished by its speculative attempt', (j) => j.state === 'FINISHED', 90_000);
        await block(h);
        await unblock(h);
        // Two full resyncs (every 2 s in the rig) after the unblock, each a pass.
        const passes0 = await sidecarPasses();
        const t0 = Date.now();
        await until('two full resyncs after the unblock', 20_000, async () => (Date.now() - t0 >= 4500 && (await sidecarPasses()) >= passes0 + 2 ? true : undefined));
        const after = await flinkApp(rig);
        assert.ok(after.schedulerBlacklist.includes(h), `Flink's own entry ${h} stays: ${JSON.stringify(after.schedulerBlacklist)}`);
        assert.ok(allRunning(await job()), 'the streaming job runs on');
      });
    }

    if (full) {
      it('a plain AM on the same NodeManagers, not opted in, is untouched: its own entry alone on its blacklist, none of the sidecar\'s blocks, no hand-off', async () => {
        const own = 'neighbour-own.blocklist.test';
        const before = await flinkApp(rig);
        await startNeighbour(rig, own);
        await until('the plain AM registered with its own entry', 60_000, async () => {
          const n = await neighbourApp(rig);
          return n.attemptState === 'RUNNING' && n.schedulerBlacklist?.includes(own) ? n : undefined;
        });
        // A node not on Flink's blacklist already (Flink's own entry of the check before stays there).
        const x = rig.nodes.find((h) => !before.schedulerBlacklist.includes(h))!;
        await block(x);
        await waitForFlinkApp(rig, `${x} on Flink's blacklist`, (a) => a.schedulerBlacklist.includes(x), 30_000);
        const n = await neighbourApp(rig);
        assert.deepEqual(n.schedulerBlacklist, [own], "the neighbour's blacklist is its own");
        await unblock(x);
        await waitForFlinkApp(rig, `${x} off Flink's blacklist`, (a) => !a.schedulerBlacklist.includes(x), 30_000);
        const after = await neighbourApp(rig);
        assert.deepEqual(after.schedulerBlacklist, [own]);
        // Not opted in: the interceptor passed it through and wrote it no hand-off (Flink's AM, opted in, has one).
        assert.deepEqual(after.handoffFiles, []);
      });
    }

    it("the JobManager killed: attempt 2's sidecar starts in its AM container and the scheduler's blacklist of attempt 2 holds every block, one made while no AM ran included", async () => {
      const app = await flinkApp(rig);
      const [x, w] = rig.nodes.filter((n) => n !== app.amContainer!.host);
      await block(x);
      await waitForFlinkApp(rig, `${x} on the blacklist of attempt 1`, (a) => a.schedulerBlacklist.includes(x), 30_000);
      const k = await killContainer(rig, app.amContainer!.containerId);
      assert.ok(k.killed, JSON.stringify(k));
      // No sidecar runs now: the block goes into the store the attempts share, as an operator's CLI would write it.
      const cli = spawnSync('node', [cliMain, 'block', w, '--cause', 'made while no AM ran', '--store', rig.store], { encoding: 'utf8' });
      assert.equal(cli.status, 0, cli.stderr);
      const next = await waitForFlinkApp(
        rig,
        "attempt 2 running with both blocks on the scheduler's blacklist",
        (a) => a.appAttemptId !== app.appAttemptId && a.attemptState === 'RUNNING' && a.schedulerBlacklist.includes(x) && a.schedulerBlacklist.includes(w),
        120_000,
      );
      assert.notEqual(next.amContainer?.containerId, app.amContainer!.containerId);
      // Attempt 2's sidecar publishes its own address (another port, maybe another host).
      sidecarUrl = (await publishedSidecar(rig, next.appAttemptId ?? undefined)).url;
      // Nothing of attempt 1's AM container runs on, its sidecar included.
      await until(`attempt 1's AM container's processes gone`, 10_000, async () => (processesOf(app.amContainer!.containerId).length === 0 ? true : undefined));
      await unblock(x);
      await unblock(w);
      // (An entry of Flink's own from attempt 1 may stay: the RM hands a new attempt the old one's blacklist.)
      await waitForFlinkApp(rig, "both off attempt 2's blacklist", (a) => !a.schedulerBlacklist.includes(x) && !a.schedulerBlacklist.includes(w), 30_000);
    });
  });
}

suite('2.3', true);
suite('1.20', false);
