/**
 * Watches the job's Flink through its JobManager's REST API, for evacuations: which task managers
 * are idle, whether the jobs run, their checkpoints and restarts. Read only while an evacuation or
 * a MARK_BLOCKED item waits on a task manager, at most once per `minIntervalMs` (the poll interval,
 * about a second). The JobManager is found from the RM's application report (locate.ts) unless an
 * address is configured, and looked for again after a failed read (a new attempt moves it).
 *
 * A read costs GET /taskmanagers and /jobs/overview; per running job once its details and its
 * checkpoint settings; while an evacuation is in progress also its newest checkpoint and restart
 * count; for a running batch job whose idle task manager is covered, the vertices' task managers
 * (which may serve result partitions).
 */
import { Logger } from '../core/logger';
import { FlinkLocation, flinkLocations } from '../flink/locate';
import { FlinkJobDetail, FlinkJobManager, TERMINAL_JOB_STATES, TriggeredCheckpoint } from '../flink/types';
import { ResourceManagerReader } from '../yarn/types';
import { message } from './cache';
import { FlinkJobView, FlinkKnowledge, FlinkView, isIdle } from './flink-view';

export interface FlinkWatcherDeps {
  rm: ResourceManagerReader;
  logger: Logger;
  /** A client for a location (the HTTP one in the sidecar; fakes in tests). */
  connect(location: FlinkLocation): FlinkJobManager;
  /** cluster.resource-blocklist.flink.rest-address ('' = from the RM's application report). */
  address: string;
  enabled: boolean;
  /** Reads at most this often (ms, monotonic). */
  minIntervalMs: number;
}

/** What the pass wants read. */
export interface FlinkNeed {
  /** Checkpoints and restarts too (an evacuation is in progress, not only idle releases). */
  evacuating: boolean;
  /** Containers items cover: an idle one of a running batch job makes its result partitions worth a look. */
  covered: ReadonlySet<string>;
  /** Triggered checkpoints to ask about. */
  triggers: readonly { jid: string; triggerId: string }[];
}

/** The RM's application report is read again for the JobManager's address at most this often (the RM is every job's). */
export const RELOCATE_MS = 60_000;

/** The oldest checkpoint triggers answered with 1.17 (FLINK-27101). */
const TRIGGER_SINCE: readonly [number, number] = [1, 17];

export class FlinkWatcher {
  private state: FlinkKnowledge;
  private client: FlinkJobManager | undefined;
  private location: FlinkLocation | undefined;
  private version: string | undefined;
  private seq = 0;
  private readAt: number | undefined;
  private readonly details = new Map<string, FlinkJobDetail>();
  private readonly intervals = new Map<string, number | undefined>();
  private triggers = new Map<string, { triggerId: string; result: TriggeredCheckpoint }>();
  private lastError: string | undefined;
  /** Where the JobManager may answer, and when the RM's report named it (monotonic). */
  private places: { at: number; list: FlinkLocation[] } | undefined;

  constructor(private readonly deps: FlinkWatcherDeps) {
    this.state = deps.enabled ? { kind: 'unknown', error: 'not read yet' } : { kind: 'off', why: 'cluster.resource-blocklist.flink.enabled is false' };
  }

  get knowledge(): FlinkKnowledge {
    return this.state;
  }

  /** A new attempt: its JobManager is another process, at another address (the RM's report names it). */
  forget(): void {
    this.client = undefined;
    this.places = undefined;
    this.details.clear();
    this.intervals.clear();
    this.triggers.clear();
  }

  get enabled(): boolean {
    return this.deps.enabled;
  }

  /** The interval since the last read has passed (a refresh would read). */
  due(mono: number): boolean {
    return this.readAt === undefined || mono - this.readAt >= this.deps.minIntervalMs;
  }

  /** Read within the last two intervals (a decision may act on it). */
  fresh(mono: number): boolean {
    return this.state.kind === 'known' && this.readAt !== undefined && mono - this.readAt < 2 * this.deps.minIntervalMs;
  }

  /** Reads Flink unless it was read within the interval (`force`: read now whatever the interval); whether it read. */
  async refresh(mono: number, applicationId: string | undefined, need: FlinkNeed, force = false): Promise<boolean> {
    if (!this.deps.enabled) return false;
    if (!force && this.readAt !== undefined && mono - this.readAt < this.deps.minIntervalMs) return false;
    this.readAt = mono;
    try {
      const client = this.client ?? (await this.locate(applicationId, mono));
      this.state = { kind: 'known', view: await this.read(client, mono, need) };
      if (this.lastError !== undefined) this.deps.logger.info(`Flink's REST API at ${client.baseUrl} answers again`);
      this.lastError = undefined;
    } catch (e) {
      const error = message(e);
      if (error !== this.lastError) this.deps.logger.warn(`reading Flink's REST API failed: ${error}; evacuations release at their deadlines and no idle task manager is released until it answers`);
      this.lastError = error;
      this.state = { kind: 'unknown', error };
      this.client = undefined;
    }
    return true;
  }

  /** The answers to triggered checkpoints, between passes (a release waits on them): true when one is over. */
  async checkTriggers(pending: readonly { jid: string; triggerId: string }[]): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    let over = false;
    for (const p of pending) {
      try {
        const result = await client.triggeredCheckpoint(p.jid, p.triggerId);
        this.triggers.set(p.jid, { triggerId: p.triggerId, result });
        if (result.status !== 'IN_PROGRESS') over = true;
      } catch {
        // The next pass reads everything again and says what failed.
      }
    }
    if (over && this.state.kind === 'known') this.state = { kind: 'known', view: { ...this.state.view, triggers: new Map(this.triggers) } };
    return over;
  }

  async trigger(jid: string): Promise<{ ok: true; triggerId: string } | { ok: false; error: string }> {
    if (!this.client) return { ok: false, error: "Flink's REST API is not reachable" };
    try {
      return { ok: true, triggerId: await this.client.triggerCheckpoint(jid) };
    } catch (e) {
      return { ok: false, error: message(e) };
    }
  }

  /** Where the JobManager answers: the configured address, else the AM's REST port, else the RM's proxy. */
  private async locate(applicationId: string | undefined, mono: number): Promise<FlinkJobManager> {
    const places = await this.candidates(applicationId, mono);
    if (places.length === 0) throw new Error(`the RM's report of ${applicationId ?? 'the application'} names no JobManager address (amRPCAddress, trackingUrl); set cluster.resource-blocklist.flink.rest-address`);
    const errors: string[] = [];
    for (const place of places) {
      const client = this.deps.connect(place);
      try {
        this.version = await client.version();
        if (this.location?.baseUrl !== place.baseUrl) this.deps.logger.info(`Flink's JobManager REST API: ${place.baseUrl} (${place.source}${this.version ? `, Flink ${this.version}` : ''})`);
        this.location = place;
        this.client = client;
        return client;
      } catch (e) {
        errors.push(`${place.baseUrl} (${place.source}): ${message(e)}`);
      }
    }
    // A JobManager that moved (a new attempt) is named by a newer report: read again after RELOCATE_MS.
    throw new Error(`no JobManager answers: ${errors.join('; ')}`);
  }

  /** The addresses to try: the RM's report is read once, then at most every RELOCATE_MS. */
  private async candidates(applicationId: string | undefined, mono: number): Promise<FlinkLocation[]> {
    if (this.deps.address.trim() !== '') return flinkLocations(this.deps.address, undefined);
    if (this.places && mono - this.places.at < RELOCATE_MS) return this.places.list;
    const app = applicationId !== undefined ? await this.deps.rm.application(applicationId) : undefined;
    this.places = { at: mono, list: flinkLocations('', app) };
    return this.places.list;
  }

  private async read(client: FlinkJobManager, mono: number, need: FlinkNeed): Promise<FlinkView> {
    const [tms, jobs] = await Promise.all([client.taskManagers(), client.jobs()]);
    const taskManagers = new Map(tms.map((t) => [t.id, t]));
    const views: FlinkJobView[] = [];
    for (const j of jobs.filter((x) => !TERMINAL_JOB_STATES.has(x.state))) {
      const view: FlinkJobView = { jid: j.jid, name: j.name, state: j.state, tasks: j.tasks };
      const detail = this.details.get(j.jid) ?? (await client.job(j.jid));
      this.details.set(j.jid, detail);
      if (detail.type !== undefined) view.type = detail.type;
      if (!this.intervals.has(j.jid)) this.intervals.set(j.jid, (await client.checkpointConfig(j.jid)).intervalMs);
      const interval = this.intervals.get(j.jid);
      if (interval !== undefined) view.checkpointIntervalMs = interval;
      if (need.evacuating) await this.progress(client, view);
      if (view.type === 'BATCH' && j.state === 'RUNNING' && [...need.covered].some((c) => isIdle(taskManagers.get(c)))) view.pinned = await pinned(client, j.jid);
      views.push(view);
    }
    for (const t of need.triggers) this.triggers.set(t.jid, { triggerId: t.triggerId, result: await client.triggeredCheckpoint(t.jid, t.triggerId) });
    const live = new Set(views.map((v) => v.jid));
    for (const jid of [...this.triggers.keys()]) if (!live.has(jid)) this.triggers.delete(jid);
    const view: FlinkView = { seq: ++this.seq, readAt: mono, baseUrl: client.baseUrl, canTrigger: client.canPost && versionAtLeast(this.version, TRIGGER_SINCE), taskManagers, jobs: views, triggers: new Map(this.triggers) };
    if (this.version !== undefined) view.version = this.version;
    return view;
  }

  private async progress(client: FlinkJobManager, view: FlinkJobView): Promise<void> {
    if (view.checkpointIntervalMs !== undefined && view.type !== 'BATCH') {
      const latest = await client.latestCheckpoint(view.jid);
      if (latest !== undefined) view.latestCheckpoint = latest;
    }
    const restarts = await client.restarts(view.jid);
    if (restarts !== undefined) view.restarts = restarts;
  }
}

/**
 * The task managers a running batch job may still read result partitions from: those that ran a
 * vertex one of whose consumers has not finished (a producer's partitions live on its task
 * manager until the consumers have read them, with Flink's default, TaskManager-local shuffle).
 */
async function pinned(client: FlinkJobManager, jid: string): Promise<Set<string>> {
  const detail = await client.job(jid);
  const unfinished = new Set(detail.vertices.filter((v) => v.status !== 'FINISHED').map((v) => v.id));
  const producers = new Set<string>();
  for (const v of detail.vertices) if (unfinished.has(v.id)) for (const input of v.inputs) producers.add(input);
  const out = new Set<string>();
  for (const v of detail.vertices) {
    if (!producers.has(v.id) || v.status === 'CREATED' || v.status === 'SCHEDULED') continue;
    for (const tm of await client.vertexTaskManagers(jid, v.id)) out.add(tm.taskManagerId);
  }
  return out;
}

/** "1.20.5" ≥ [1, 17]; an unknown version is taken to be recent (a failed trigger falls back anyway). */
export function versionAtLeast(version: string | undefined, [major, minor]: readonly [number, number]): boolean {
  const m = version !== undefined ? /^(\d+)\.(\d+)/.exec(version) : null;
  if (!m) return true;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a > major || (a === major && b >= minor);
}
