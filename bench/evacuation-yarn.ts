/**
 * EVACUATE against kill -9 on unmodified Flink 2.3 on a real YARN (the Flink-on-YARN rig of
 * test/support/flink-yarn.ts: the release tarball in Flink's AM container, three NodeManagers with the
 * interceptor, one TaskManager per node, checkpoints every 2 s). The suite's check measures one of
 * each, and a single pair swings by where each falls in Flink's 5 s idle heartbeat (both paths wait
 * for one: the kill for YARN's completion report, the evacuation for its release to ride the next
 * allocate). Here the same job, in the same run, takes `trials` of each, alternating, each started
 * at a spread phase of that interval; the figure is mean(EVACUATE) / mean(kill -9), goal ≤ 1.2×
 * (design §11), the checkpoint-aligned release included.
 */
import { FlinkYarnRig, allRunning, flinkApp, flinkYarn, flinkYarnUnavailableReason, killContainer, publishedSidecar, stopFlinkYarn, waitForFlinkApp, waitForFlinkJob } from '../test/support/flink-yarn';
import { http } from '../test/support/sidecar';
import { sleep } from './lib/stats';
import { SectionResult, emptyResult } from './lib/report';

export interface EvacuationYarnSizes {
  /** Pairs of trials (one kill -9, one EVACUATE each). */
  trials: number;
}

const SECTION = 'evacuation-yarn';
const EVACUATE = 'MARK_BLOCKED_AND_EVACUATE_TASKS';
/** Flink's yarn.heartbeat.interval default: the trials' start phases are spread over it. */
const HEARTBEAT_MS = 5000;
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

/** kill -9 of one TaskManager's JVM → every task RUNNING again without it (ms). */
async function killTrial(rig: FlinkYarnRig): Promise<number> {
  const app = await flinkApp(rig);
  const victim = app.taskManagers.find((t) => t.running) ?? app.taskManagers[0];
  const k = await killContainer(rig, victim.containerId);
  if (!k.killed) throw new Error(`could not kill ${victim.containerId}`);
  await waitForFlinkJob(rig, rig.streamJobId, 'RUNNING again after the kill', (j) => allRunning(j) && j.subtasks.every((s) => s.taskManagerId !== victim.containerId), 120_000);
  return Date.now() - k.atMs;
}

/** PUT EVACUATE of a node with the fewest TaskManagers → every task RUNNING again off it (ms); the block is then lifted. */
async function evacuateTrial(rig: FlinkYarnRig, sidecar: string): Promise<{ ms: number; taskManagers: number }> {
  const app = await flinkApp(rig);
  const count = (h: string): number => app.taskManagers.filter((t) => t.host === h).length;
  const y = rig.nodes.filter((h) => count(h) > 0).sort((a, b) => count(a) - count(b))[0];
  const t0 = Date.now();
  const put = await http(sidecar, 'PUT', `/blocklist/nodes/${y}`, { action: EVACUATE, cause: 'bench evacuation-yarn' });
  if (put.status !== 201) throw new Error(`PUT EVACUATE ${y}: ${put.status} ${put.text}`);
  try {
    await waitForFlinkJob(rig, rig.streamJobId, `RUNNING again off ${y}`, (j) => allRunning(j) && j.subtasks.every((s) => s.host !== y), 120_000);
  } catch (e) {
    // What the sidecar says of the evacuation, for whoever reads the failure.
    const item = await http(sidecar, 'GET', `/blocklist/nodes/${y}`);
    const status = await http(sidecar, 'GET', '/status');
    const flink = JSON.stringify((status.body as { flink?: unknown } | undefined)?.flink ?? status.text.slice(0, 2000));
    throw new Error(`${(e as Error).message}; the sidecar's item: ${item.text.slice(0, 2000)}; its Flink: ${flink}`);
  }
  const ms = Date.now() - t0;
  const del = await http(sidecar, 'DELETE', `/blocklist/nodes/${y}`);
  if (del.status !== 200) throw new Error(`DELETE ${y}: ${del.status} ${del.text}`);
  await waitForFlinkApp(rig, `${y} off the blacklist`, (a) => !a.schedulerBlacklist.includes(y), 30_000);
  return { ms, taskManagers: count(y) };
}

export async function benchEvacuationYarn(sizes: EvacuationYarnSizes): Promise<SectionResult> {
  const out = emptyResult();
  const why = flinkYarnUnavailableReason('2.3');
  if (why) {
    out.skipped.push({ section: SECTION, figure: 'EVACUATE vs kill -9 on Flink on YARN', reason: why });
    return out;
  }
  const rig = await flinkYarn('2.3');
  try {
    const sidecar = (await publishedSidecar(rig, (await flinkApp(rig)).appAttemptId ?? undefined)).url;
    await waitForFlinkJob(rig, rig.streamJobId, 'the job running on all three nodes', (j) => allRunning(j), 120_000);
    const kills: number[] = [];
    const evacuations: { ms: number; taskManagers: number }[] = [];
    for (let i = 0; i < sizes.trials; i++) {
      // Each pair starts at another phase of Flink's heartbeat interval.
      await sleep(((i * HEARTBEAT_MS) / sizes.trials) % HEARTBEAT_MS + 2000);
      kills.push(await killTrial(rig));
      await sleep(((i * HEARTBEAT_MS) / sizes.trials + HEARTBEAT_MS / 2) % HEARTBEAT_MS + 2000);
      evacuations.push(await evacuateTrial(rig, sidecar));
    }
    const e = mean(evacuations.map((x) => x.ms));
    const k = mean(kills);
    out.rows.push({ section: SECTION, figure: `PUT EVACUATE → every task RUNNING again, Flink 2.3 on YARN (mean of ${sizes.trials}; checkpoint-aligned release)`, value: e, unit: 'ms', limit: k, limitUnit: 'ms', limitWhat: `the same job's recovery from a TaskManager's JVM killed with kill -9, same run (mean of ${sizes.trials})`, ratio: e / k, goal: '≤ 1.2×', met: e / k <= 1.2 });
    out.notes.push(`evacuation-yarn: kill -9 ${kills.map((x) => (x / 1000).toFixed(1)).join(', ')} s; EVACUATE ${evacuations.map((x) => `${(x.ms / 1000).toFixed(1)} s (${x.taskManagers} TM)`).join(', ')}; rig ${rig.flinkVersion} on Hadoop ${rig.hadoopVersion}, job on every node at ${(rig.startupMs / 1000).toFixed(1)} s`);
  } finally {
    await stopFlinkYarn('2.3');
  }
  return out;
}
