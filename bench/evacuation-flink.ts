/**
 * Evacuation measured with real Flink (am-proxy's EvacuationLauncher: a Flink 2.x MiniCluster whose
 * checkpointed streaming job counts the records it sees twice, i.e. replays after a restore). The
 * sidecar's engine runs as in production — its JobManager client over real HTTP, its pure rules,
 * its fast checkpoint poll — over an in-process YARN whose containers are the MiniCluster's task
 * managers (a release shuts the task manager down, as the NodeManager's kill does; a replacement
 * starts `replaceMs` later, as YARN's next allocation). Figures, each against its limit in the
 * same run:
 *  1. records replayed after an EVACUATE (timeout 0) of one busy task manager with the
 *     checkpoint-aligned release vs a plain one (evacuation.checkpoint.timeout 0), same job, same
 *     checkpoint interval, the same phases after a periodic checkpoint. Goal: aligned ≤ 10 % of plain;
 *  2. failovers (numRestarts) per evacuation of 3 task managers with the budget at its default.
 *     Goal: 1. (With max-parallel 1, for contrast: one per step.)
 *  3. time from the deadline until the job runs every task again, against Flink's own recovery
 *     from the same task manager killed without the sidecar, in the same run. Goal: ≤ 1.2× (design §11),
 *     the checkpoint's duration included.
 */
import { systemClock } from '../src/core/clock';
import { silentLogger } from '../src/core/logger';
import { EVACUATE } from '../src/model/item';
import { FlakyStore } from '../test/sync/fakes';
import { SyncEngine, SyncSettings } from '../src/sync/engine';
import { FlinkRestClient } from '../src/flink/client';
import { FlinkJobManager, FlinkTaskManager } from '../src/flink/types';
import { AmrmProxy, AppContainer, ResourceManagerReader } from '../src/yarn/types';
import { formatContainerId } from '../src/model/ids';
import { nodeItem } from '../test/sync/items';
import { realFlinkUnavailableReason } from '../test/support/real-flink';
import { EvacuationFlink, startEvacuationFlink } from '../test/support/real-flink-evacuation';
import { SectionResult, emptyResult } from './lib/report';

export interface EvacuationFlinkSizes {
  /** Trials per mode of the replay figure. */
  trials: number;
  intervalMs: number;
  replaceMs: number;
}

const SECTION = 'evacuation-flink';
const APP = { clusterTimestamp: '1652313600000', id: 1 };
const AM = formatContainerId({ application: APP, attempt: 1, container: 1 });

/** YARN as the engine sees it: the MiniCluster's task managers as containers, placed on hosts the bench chooses. */
class FakeYarn {
  readonly hosts = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8'];
  /** Flink task manager id → container id, and the other way. */
  private readonly byTm = new Map<string, string>();
  private readonly byContainer = new Map<string, string>();
  readonly hostOf = new Map<string, string>();
  private readonly owned = new Set<string>();
  private seq = 2;
  releasedAt: number | undefined;
  releases: string[][] = [];

  constructor(private readonly flink: EvacuationFlink) {}

  containerOf(tm: string): string {
    let c = this.byTm.get(tm);
    if (!c) {
      c = formatContainerId({ application: APP, attempt: 1, container: this.seq++ });
      this.byTm.set(tm, c);
      this.byContainer.set(c, tm);
      this.hostOf.set(c, this.freeHost());
    }
    return c;
  }

  /** A host for a new task manager: one not blacklisted, with the fewest task managers. */
  private freeHost(): string {
    const load = (h: string) => [...this.hostOf.values()].filter((x) => x === h).length;
    return this.hosts.filter((h) => !this.owned.has(h)).sort((a, b) => load(a) - load(b))[0];
  }

  place(tm: string, host: string): void {
    this.hostOf.set(this.containerOf(tm), host);
  }

  rm(): ResourceManagerReader {
    const nodes = () => this.hosts.map((h) => ({ id: `${h}:8041`, host: h, rack: '/default-rack', state: 'RUNNING' as const, healthReport: '', numContainers: 0 }));
    return {
      clusterInfo: async () => ({ state: 'STARTED' }),
      clusterMetrics: async () => ({ activeNodes: this.hosts.length, decommissioningNodes: 0, decommissionedNodes: 0, lostNodes: 0, unhealthyNodes: 0, rebootedNodes: 0, shutdownNodes: 0, totalNodes: this.hosts.length }),
      nodes: async () => nodes(),
      application: async (id) => ({ id, state: 'RUNNING', amRPCAddress: this.flink.rest.replace('http://', '') }),
      attempts: async () => [{ appAttemptId: 'appattempt_1652313600000_0001_000001', containerId: AM }],
      containers: async () => [],
    };
  }

  proxy(live: () => Promise<string[]>): AmrmProxy {
    return {
      attempt: async () => ({ applicationId: 'application_1652313600000_0001', appAttemptId: 'appattempt_1652313600000_0001_000001', registered: true, amContainerId: AM }),
      blacklist: async () => ({ blacklist: [...this.owned].sort(), owners: { blocklist: [...this.owned].sort() } }),
      updateBlacklist: async (change) => {
        for (const h of change.additions) this.owned.add(h);
        for (const h of change.removals) this.owned.delete(h);
      },
      containers: async (): Promise<AppContainer[]> => (await live()).map((tm) => {
        const id = this.containerOf(tm);
        const host = this.hostOf.get(id)!;
        return { containerId: id, nodeId: `${host}:8041`, host, state: 'RUNNING' };
      }),
      release: async (ids) => {
        this.releasedAt ??= performance.now();
        this.releases.push([...ids]);
        const released: string[] = [];
        for (const id of ids) {
          const tm = this.byContainer.get(id);
          if (tm && (await this.flink.send(`release ${tm}`, 'released', 20_000)).released === tm) released.push(id);
        }
        return { released, unknown: ids.filter((i) => !released.includes(i)) };
      },
      completedContainers: async () => ({ containers: [], next: 0 }),
    };
  }

  /** The engine's JobManager client: the real one, its task manager ids read as the container ids they stand for. */
  flinkClient(real: FlinkJobManager): FlinkJobManager {
    const map = (t: FlinkTaskManager): FlinkTaskManager => ({ ...t, id: this.containerOf(t.id) });
    return {
      baseUrl: real.baseUrl,
      canPost: real.canPost,
      version: () => real.version(),
      taskManagers: async () => (await real.taskManagers()).map(map),
      jobs: () => real.jobs(),
      job: (j) => real.job(j),
      checkpointConfig: (j) => real.checkpointConfig(j),
      latestCheckpoint: (j) => real.latestCheckpoint(j),
      restarts: (j) => real.restarts(j),
      triggerCheckpoint: (j) => real.triggerCheckpoint(j),
      triggeredCheckpoint: (j, t) => real.triggeredCheckpoint(j, t),
      vertexTaskManagers: async (j, v) => (await real.vertexTaskManagers(j, v)).map((t) => ({ ...t, taskManagerId: this.containerOf(t.taskManagerId) })),
    };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The whole replay: the restored job re-reads from its checkpoint at the rate it read the first
 * time, so the replayed count grows for as long as the checkpoint was old; it is read once it has
 * stopped growing (unchanged over 1.5 s, at most `boundMs`).
 */
async function replayed(f: EvacuationFlink, boundMs: number): Promise<number> {
  const t0 = performance.now();
  let last = -1;
  let stableSince = performance.now();
  for (;;) {
    const n = Number((await f.send('stats', 'replayed')).replayed);
    if (n !== last) {
      last = n;
      stableSince = performance.now();
    } else if (performance.now() - stableSince >= 1500) return n;
    if (performance.now() - t0 > boundMs) return n;
    await sleep(250);
  }
}

async function until(what: string, cond: () => Promise<boolean>, timeoutMs: number, pollMs = 50): Promise<number> {
  const t0 = performance.now();
  while (!(await cond())) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`evacuation-flink bench: no ${what} within ${timeoutMs} ms`);
    await sleep(pollMs);
  }
  return performance.now() - t0;
}

interface Rig {
  f: EvacuationFlink;
  jm: FlinkRestClient;
  yarn: FakeYarn;
  engine: SyncEngine;
  store: FlakyStore;
}

async function startRig(f: EvacuationFlink, jm: FlinkRestClient, settings: Partial<SyncSettings>): Promise<Rig> {
  const yarn = new FakeYarn(f);
  const store = new FlakyStore();
  const live = async () => (await jm.taskManagers()).map((t) => t.id);
  const base: SyncSettings = { pollIntervalMs: 1000, maxBlockedFraction: 0.5, evacuationTimeoutMs: 0, releaseBatchSize: 500, refreshIntervalMs: 1000, statusLogIntervalMs: 60_000, fullResyncIntervalMs: 300_000, initialBackoffMs: 200, maxBackoffMs: 2000, backoffJitter: 0, flinkReadIntervalMs: 1000 };
  const engine = new SyncEngine({ store, rm: yarn.rm(), proxy: yarn.proxy(live), clock: systemClock, logger: silentLogger, settings: { ...base, ...settings }, applicationId: 'application_1652313600000_0001', flink: () => yarn.flinkClient(jm) });
  await engine.start();
  return { f, jm, yarn, engine, store };
}

/** The stream job runs every task on `n` registered task managers, and has a completed checkpoint. */
async function settled(jm: FlinkRestClient, stream: string, n: number): Promise<boolean> {
  const [jobs, tms] = await Promise.all([jm.jobs(), jm.taskManagers()]);
  const j = jobs.find((x) => x.jid === stream);
  return j?.state === 'RUNNING' && j.tasks.running === j.tasks.total && tms.length === n;
}

/** One EVACUATE of `host` (timeout 0): released, the job back to running every task; the replayed records and the time. */
async function evacuateOnce(r: Rig, host: string, tms: number): Promise<{ replayed: number; recoveryMs: number }> {
  await r.f.send('reset', 'reset');
  r.yarn.releasedAt = undefined;
  const t0 = performance.now();
  await block(r, host);
  await until('release', async () => r.yarn.releasedAt !== undefined, 60_000, 10);
  // Running every task again: after Flink noticed the loss (the job left RUNNING or the count dropped).
  await until('failover', async () => !(await settled(r.jm, r.f.stream, tms)), 20_000, 10);
  await until('recovery', () => settled(r.jm, r.f.stream, tms), 60_000, 20);
  const recoveryMs = performance.now() - t0;
  const n = await replayed(r.f, 30_000);
  await r.store.remove(host);
  r.engine.kick('bench unblock');
  return { replayed: n, recoveryMs };
}

async function block(r: Rig, host: string): Promise<void> {
  const at = Date.now();
  const item = nodeItem(host, { action: EVACUATE, evacuationTimeout: 0, start: at });
  await r.store.put({ ...item, created: { ...item.created, at }, updated: { ...item.updated, at } });
  r.engine.kick('bench block');
}

/** Waits for `phase` × the checkpoint interval after the latest completed checkpoint. */
async function atPhase(jm: FlinkRestClient, stream: string, intervalMs: number, phase: number): Promise<void> {
  const first = (await jm.latestCheckpoint(stream))?.id ?? 0;
  await until('a fresh periodic checkpoint', async () => ((await jm.latestCheckpoint(stream))?.id ?? 0) > first, intervalMs * 3, 20);
  await sleep(phase * intervalMs);
}

export async function benchEvacuationFlink(s: EvacuationFlinkSizes): Promise<SectionResult> {
  const out = emptyResult();
  const why = realFlinkUnavailableReason('2.x');
  if (why) {
    out.skipped.push({ section: SECTION, figure: 'records replayed, failovers, recovery time with real Flink', reason: why });
    return out;
  }
  const replay = await replayFigures(s);
  out.rows.push(...replay.rows);
  out.notes.push(...replay.notes);
  const failovers = await failoverFigures(s);
  out.rows.push(...failovers.rows);
  out.notes.push(...failovers.notes);
  return out;
}

async function replayFigures(s: EvacuationFlinkSizes): Promise<SectionResult> {
  const out = emptyResult();
  // 4 task managers of 1 slot: the job holds 3, the 4th is a spare it restarts on at once.
  const f = await startEvacuationFlink('2.x', { tms: 4, slots: 1, parallelism: 3, intervalMs: s.intervalMs, sleepMs: 1, replaceMs: s.replaceMs });
  const jm = new FlinkRestClient({ baseUrl: f.rest, canPost: true });
  try {
    await until('the job settled', () => settled(jm, f.stream, 4), 60_000);
    const results: Record<'aligned' | 'plain' | 'killed', { replayed: number; recoveryMs: number }[]> = { aligned: [], plain: [], killed: [] };
    const rigs = { aligned: await startRig(f, jm, {}), plain: await startRig(f, jm, { checkpointTimeoutMs: 0 }) };
    for (let i = 0; i < s.trials; i++) {
      const phase = (i + 0.5) / s.trials;
      for (const mode of ['plain', 'aligned'] as const) {
        const r = rigs[mode];
        const busy = await busyTaskManager(jm);
        const host = r.yarn.hosts[0];
        r.yarn.place(busy, host);
        await atPhase(jm, f.stream, s.intervalMs, phase);
        results[mode].push(await evacuateOnce(r, host, 4));
        await until('the job settled', () => settled(jm, f.stream, 4), 60_000);
      }
      results.killed.push(await killOnce(f, jm, phase, s.intervalMs));
    }
    await rigs.aligned.engine.stop();
    await rigs.plain.engine.stop();
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const aligned = mean(results.aligned.map((x) => x.replayed));
    const plain = mean(results.plain.map((x) => x.replayed));
    out.rows.push({ section: SECTION, figure: `records replayed after an EVACUATE, checkpoint-aligned release (mean of ${s.trials}; checkpoint interval ${s.intervalMs / 1000} s)`, value: aligned, unit: 'records', limit: plain, limitUnit: 'records', limitWhat: `plain release, same job and interval, same phases`, ratio: aligned / plain, goal: '≤ 10 % of the plain release (≤ 0.10×)', met: aligned <= 0.1 * plain });
    const recovery = mean(results.aligned.map((x) => x.recoveryMs));
    const killed = mean(results.killed.map((x) => x.recoveryMs));
    out.rows.push({ section: SECTION, figure: 'deadline → the job running every task again, checkpoint-aligned release (mean)', value: recovery, unit: 'ms', limit: killed, limitUnit: 'ms', limitWhat: "Flink's own recovery from the task manager killed, same run", ratio: recovery / killed, goal: '≤ 1.2× (design §11)', met: recovery <= 1.2 * killed });
    out.notes.push(`Evacuation with real Flink ${f.flinkVersion}: replayed records per trial, plain [${results.plain.map((x) => x.replayed).join(', ')}], aligned [${results.aligned.map((x) => x.replayed).join(', ')}], killed without the sidecar [${results.killed.map((x) => x.replayed).join(', ')}]; recovery ms plain [${results.plain.map((x) => x.recoveryMs.toFixed(0)).join(', ')}], aligned [${results.aligned.map((x) => x.recoveryMs.toFixed(0)).join(', ')}], killed [${results.killed.map((x) => x.recoveryMs.toFixed(0)).join(', ')}]; replacement after ${s.replaceMs} ms, restart delay 500 ms.`);
  } finally {
    await f.stop();
  }
  return out;
}

/** A busy task manager of the stream job (its one slot taken). */
async function busyTaskManager(jm: FlinkRestClient): Promise<string> {
  const tm = (await jm.taskManagers()).find((t) => t.freeSlots < t.slots);
  if (!tm) throw new Error('evacuation-flink bench: no busy task manager');
  return tm.id;
}

/** The baseline: the same task manager killed without the sidecar, at the same phase. */
async function killOnce(f: EvacuationFlink, jm: FlinkRestClient, phase: number, intervalMs: number): Promise<{ replayed: number; recoveryMs: number }> {
  await atPhase(jm, f.stream, intervalMs, phase);
  await f.send('reset', 'reset');
  const t0 = performance.now();
  await f.send(`release ${await busyTaskManager(jm)}`, 'released');
  await until('failover', async () => !(await settled(jm, f.stream, 4)), 20_000, 10);
  await until('recovery', () => settled(jm, f.stream, 4), 60_000, 20);
  const recoveryMs = performance.now() - t0;
  const n = await replayed(f, 30_000);
  await until('the job settled', () => settled(jm, f.stream, 4), 60_000);
  return { replayed: n, recoveryMs };
}

async function failoverFigures(s: EvacuationFlinkSizes): Promise<SectionResult> {
  const out = emptyResult();
  // 4 task managers of 1 slot, 3 of them busy and on one host: its EVACUATE takes all 3.
  const f = await startEvacuationFlink('2.x', { tms: 4, slots: 1, parallelism: 3, intervalMs: s.intervalMs, sleepMs: 1, replaceMs: s.replaceMs });
  const jm = new FlinkRestClient({ baseUrl: f.rest, canPost: true });
  try {
    const runs: { maxParallel: number; failovers: number; calls: number; ms: number }[] = [];
    for (const maxParallel of [0, 1]) {
      await until('the job settled', () => settled(jm, f.stream, 4), 60_000);
      const r = await startRig(f, jm, { maxParallel });
      const host = r.yarn.hosts[7];
      for (const t of await jm.taskManagers()) if (t.freeSlots < t.slots) r.yarn.place(t.id, host);
      const before = (await jm.restarts(f.stream)) ?? 0;
      const t0 = performance.now();
      await block(r, host);
      await until('every step', async () => r.yarn.releases.flat().length >= 3 && (await settled(jm, f.stream, 4)), 180_000, 100);
      const ms = performance.now() - t0;
      // The count lags by the JobManager's metric fetcher (metrics.fetcher.update-interval, 10 s).
      await sleep(12_000);
      runs.push({ maxParallel, failovers: ((await jm.restarts(f.stream)) ?? 0) - before, calls: r.yarn.releases.length, ms });
      await r.store.remove(host);
      r.engine.kick('bench unblock');
      await r.engine.stop();
    }
    const d = runs[0];
    out.rows.push({ section: SECTION, figure: 'failovers (numRestarts) per evacuation of 3 busy task managers, budget at its default (max-parallel 0: one step)', value: d.failovers, unit: 'failovers', limit: 1, limitUnit: 'failovers', limitWhat: 'one failover', ratio: d.failovers, goal: '1 (≤ 1×)', met: d.failovers <= 1 });
    out.notes.push(`Evacuation of 3 task managers: ${runs.map((x) => `max-parallel ${x.maxParallel} → ${x.failovers} failover(s), ${x.calls} release call(s), ${(x.ms / 1000).toFixed(1)} s until the job ran every task again`).join('; ')}.`);
  } finally {
    await f.stop();
  }
  return out;
}
