/**
 * `npm run demo`: a scripted story against a real sidecar and the YARN simulator, over real HTTP,
 * printed so a person can follow it. Each step checks what it claims; a failed check ends the
 * story with a non-zero exit.
 *   1. a hot node is blocked with a timeout (MARK_BLOCKED: no new containers; running ones stay)
 *   2. a broken node is blocked with evacuation (containers move off, replacements land elsewhere)
 *   3. the broken node is unblocked
 *   4. the hot node's block expires on time
 *   5. the failure detector (enforce mode) blocks a host whose task managers keep failing, and says why
 *   6. a bug in the job fails it on many hosts: the detector blames nobody
 */
import * as path from 'node:path';
import * as os from 'node:os';
import * as fs from 'node:fs';
import { LocalCluster, startLocalCluster } from './local-cluster';

type Out = (line: string) => void;

class DemoFailure extends Error {}

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as unknown) : undefined };
}

const put = (url: string, body: unknown) => json(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new DemoFailure(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What every step of the story uses: the cluster, the sidecar's address, and how to print and look. */
interface Story {
  sim: LocalCluster['sim'];
  api: string;
  out: Out;
  say(line: string): void;
  step(n: number, title: string): void;
  /** YARN's blacklist for the job as the AMRM proxy holds it. */
  blacklist(): Promise<string[]>;
  /** The task manager containers on a host (not the AM's). */
  containersOn(host: string): string[];
  /** Hosts running task managers, not the AM's. */
  busyHosts(): string[];
}

export async function runDemo(out: Out = (l) => process.stdout.write(l + '\n'), opts: { hotTimeoutMs?: number } = {}): Promise<boolean> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-demo-'));
  const local = await startLocalCluster({
    restPort: 0,
    simPort: 0,
    sqlitePath: path.join(dir, 'demo.db'),
    nodes: 8,
    containers: 12,
    tickMs: 200,
    seed: 3,
    detector: 'enforce',
    // 8 nodes: the default cap (0.1 of RUNNING nodes) would allow no automatic block at all.
    define: { 'cluster.resource-blocklist.detector.poll-interval': '300 ms', 'cluster.resource-blocklist.detector.max-blocked-fraction': '0.25' },
  });
  const story = storyOn(local, out);
  const { sim } = local;
  try {
    out(`A Flink job (${sim.cluster.applicationId}) runs ${sim.cluster.taskManagerCount} task managers on ${sim.cluster.nodes.length} simulated YARN nodes.`);
    out(`The sidecar (${story.api}) keeps YARN's blacklist for the job equal to the blocklist.`);
    const nodes = sim.cluster.nodes.filter((n) => n.state === 'RUNNING' && story.containersOn(n.host).length > 0 && n.host !== sim.cluster.currentAttempt.amHost);
    if (nodes.length < 2) throw new DemoFailure('the simulated cluster has too few busy nodes');
    const hot = nodes[0].host;
    const broken = nodes[1].host;
    const hotTimeout = opts.hotTimeoutMs ?? 4000;
    const hotContainers = await blockHotNode(story, hot, hotTimeout);
    await evacuateBrokenNode(story, broken, { host: hot, containers: hotContainers });
    await unblockAndExpire(story, broken, hotTimeout);
    const sick = await detectorBlocksFailingHost(story);
    await detectorBlamesNobodyForABug(story, sick);
    out('\nThe story is complete: block, evacuate, unblock and expire all reached YARN; the detector blocked a failing host and blamed nobody for a bug.');
    // This sidecar stops with the demo: point at one that keeps running.
    out('Try it yourself: `npm start` keeps a sidecar running (http://127.0.0.1:8090), then `npx blocklist detector`, `npx blocklist watch`.');
    return true;
  } catch (e) {
    out(`\nDEMO FAILED: ${(e as Error).message}`);
    return false;
  } finally {
    await local.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function storyOn(local: LocalCluster, out: Out): Story {
  const { sim } = local;
  const containersOn = (host: string) => [...(sim.cluster.node(host)?.containers ?? [])].filter((id) => !sim.cluster.container(id)?.isAm);
  return {
    sim,
    api: local.sidecar.url,
    out,
    say: (line) => out(`   ${line}`),
    step: (n, title) => out(`\n── ${n}. ${title}`),
    blacklist: async () => ((await json(`${sim.url}/amrm/v1/blacklist`)).body as { blacklist: string[] }).blacklist,
    containersOn,
    busyHosts: () => sim.cluster.nodes.filter((n) => containersOn(n.host).length > 0 && n.host !== sim.cluster.currentAttempt.amHost).map((n) => n.host),
  };
}

/** 1. MARK_BLOCKED with a timeout: no new containers on the node, its running ones stay. Returns them. */
async function blockHotNode(t: Story, hot: string, hotTimeout: number): Promise<string[]> {
  t.step(1, `A hot node: block ${hot} for ${hotTimeout / 1000} s (MARK_BLOCKED)`);
  const before = t.containersOn(hot);
  const r1 = await put(`${t.api}/blocklist/nodes/${hot}`, { action: 'MARK_BLOCKED', timeout: String(hotTimeout), cause: 'Hot machine' });
  if (r1.status !== 201) throw new DemoFailure(`PUT answered ${r1.status}`);
  t.say(`PUT /blocklist/nodes/${hot} → 201; ends at ${new Date(Number((r1.body as { endTimestamp: string }).endTimestamp)).toISOString()}`);
  await waitFor('YARN blacklist holds the hot node', async () => ((await t.blacklist()).includes(hot) ? true : undefined));
  t.say(`YARN's blacklist for the job: ${JSON.stringify(await t.blacklist())}`);
  const still = t.containersOn(hot).filter((c) => before.includes(c));
  if (still.length !== before.length) throw new DemoFailure('MARK_BLOCKED released a container');
  t.say(`its ${before.length} running task manager(s) keep running: MARK_BLOCKED only stops new placements`);
  return before;
}

/** 2. EVACUATE with no grace: the node's task managers are released, replacements land on other nodes. */
async function evacuateBrokenNode(t: Story, broken: string, hot: { host: string; containers: string[] }): Promise<void> {
  const { sim } = t;
  t.step(2, `A broken disk: block ${broken} with MARK_BLOCKED_AND_EVACUATE_TASKS, evacuationTimeout 0`);
  const victims = t.containersOn(broken);
  t.say(`task managers on ${broken}: ${victims.join(', ')}`);
  const r2 = await put(`${t.api}/blocklist/nodes/${broken}`, { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'No space left on device', evacuationTimeout: 0 });
  if (r2.status !== 201) throw new DemoFailure(`PUT answered ${r2.status}`);
  const phase = await waitFor('evacuation READY', async () => {
    const s = (await json(`${t.api}/blocklist/nodes/${broken}`)).body as { sync?: { evacuation?: { phase: string; released: string[] } } };
    return s.sync?.evacuation?.phase === 'READY' ? s.sync.evacuation : undefined;
  });
  t.say(`evacuation READY; released through the AMRM proxy: ${phase.released.length ? phase.released.join(', ') : '(none left)'}`);
  const released = sim.cluster.counters.releasedContainerIds.filter((id) => victims.includes(id));
  if (released.length !== victims.length) throw new DemoFailure(`expected ${victims.length} releases, saw ${released.length}`);
  await waitFor('replacements running', async () => (sim.cluster.taskManagerCount >= 12 ? true : undefined));
  const onBlocked = sim.cluster.taskManagers().filter((c) => (c.host === broken || c.host === hot.host) && !victims.includes(c.id) && !hot.containers.includes(c.id));
  if (onBlocked.length) throw new DemoFailure('a replacement landed on a blocked node');
  t.say(`replacements are running elsewhere: ${sim.cluster.taskManagerCount} task managers, none new on a blocked node`);
}

/** 3. and 4.: an unblock reaches YARN, and the hot node's block ends at its end, not at the next cron tick. */
async function unblockAndExpire(t: Story, broken: string, hotTimeout: number): Promise<void> {
  t.step(3, `The disk is replaced: unblock ${broken}`);
  const d = await json(`${t.api}/blocklist/nodes/${broken}`, { method: 'DELETE' });
  t.say(`DELETE /blocklist/nodes/${broken} → ${d.status}`);
  await waitFor('removal reached YARN', async () => (!(await t.blacklist()).includes(broken) ? true : undefined));
  t.say(`YARN's blacklist for the job: ${JSON.stringify(await t.blacklist())}`);

  t.step(4, `The hot node's block expires on time`);
  await waitFor('expiry reached YARN', async () => ((await t.blacklist()).length === 0 ? true : undefined), hotTimeout + 10_000);
  t.say(`YARN's blacklist for the job: ${JSON.stringify(await t.blacklist())}  (removed at its endTimestamp by a deadline timer, not by the next cron tick)`);
  const list = (await json(`${t.api}/blocklist`)).body as Record<string, unknown>;
  t.say(`GET /blocklist → ${JSON.stringify(list)}`);
  const metric = (await (await fetch(`${t.api}/metrics`)).text()).split('\n').find((l) => l.startsWith('numBlockedNodes '));
  t.say(`metrics: ${metric}`);
}

const flinkFail = (t: Story, body: unknown) => json(`${t.sim.url}/sim/v1/flink/failures`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** 5. The detector (enforce) blocks a host whose task managers keep failing, and says why. Returns the host. */
async function detectorBlocksFailingHost(t: Story): Promise<string> {
  t.step(5, 'The failure detector: a host whose task managers keep failing is blocked automatically');
  const sick = t.busyHosts()[0];
  if (!sick) throw new DemoFailure('no busy node for the detector story');
  for (let i = 0; i < 3; i++) {
    const f = await flinkFail(t, { host: sick, exception: 'java.io.IOException: No space left on device' });
    if (f.status !== 200) throw new DemoFailure(`failure injection answered ${f.status}`);
    t.say(`Flink restarts the job: java.io.IOException: No space left on device on ${sick} (${(f.body as { containers: string[] }).containers.length} task manager(s))`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const auto = await waitFor('the detector blocks the host', async () => {
    const it = (await json(`${t.api}/blocklist/nodes/${sick}`)).body as { cause?: string; createdBy?: string } | undefined;
    return it?.createdBy === 'detector' ? it : undefined;
  });
  t.say(`blocked by '${auto.createdBy}', cause: ${auto.cause}`);
  await waitFor('YARN blacklist holds it', async () => ((await t.blacklist()).includes(sick) ? true : undefined));
  t.say(`YARN's blacklist for the job: ${JSON.stringify(await t.blacklist())}`);
  return sick;
}

/** 6. The same exception on three hosts is the job's bug: none of them is blocked. */
async function detectorBlamesNobodyForABug(t: Story, sick: string): Promise<void> {
  t.step(6, 'A bug in the job: the same exception on three hosts blames none of them');
  const others = t.busyHosts().filter((h) => h !== sick).slice(0, 3);
  if (others.length < 3) throw new DemoFailure('too few busy nodes for the job-wide story');
  for (let i = 0; i < 3; i++) await flinkFail(t, { hosts: others, exception: 'java.lang.NullPointerException: Cannot invoke "String.length()" because "key" is null' });
  t.say(`Flink restarts the job three times: NullPointerException on ${others.join(', ')}`);
  type View = { report?: { hosts: { host: string; decision: string; why: string }[] } };
  const judged = await waitFor('the detector judges them', async () => {
    const v = (await json(`${t.api}/detector`)).body as View;
    const rows = (v.report?.hosts ?? []).filter((h) => others.includes(h.host));
    return rows.length === 3 && rows.every((h) => h.decision === 'job-fault') ? rows : undefined;
  });
  for (const h of judged) t.say(`${h.host}: not blocked — ${h.why}`);
  if ((await t.blacklist()).some((h) => others.includes(h))) throw new DemoFailure("a host was blamed for the job's bug");
  t.say(`YARN's blacklist for the job is unchanged: ${JSON.stringify(await t.blacklist())}`);
}
