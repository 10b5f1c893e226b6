/**
 * The sync engine: decides *when* a reconcile pass runs (controller.ts) and wires the edges (in the shape of
 * Nomad's drainer: an orchestrator, a deadline heap, watchers, small injected interfaces).
 *
 * Triggers of a pass:
 *  - kick(): a mutation through this sidecar's API (runs at once);
 *  - the poll tick (poll-interval): the store's version moved, the store came back, the attempt
 *    changed, an evacuation is waiting for containers to go, or the node/container lists are stale;
 *  - store.watch(), when the store has one (ZooKeeper);
 *  - the deadline timer: the next endTimestamp, an evacuation deadline (never the cron tick);
 *  - the full-resync timer (re-read YARN's blacklist and nodes even when nothing seems changed);
 *  - the retry timer after a failed pass (capped exponential backoff; nothing is dropped, since
 *    the next pass recomputes the whole difference from fresh reads).
 *
 * Passes never overlap; kicks during a pass coalesce into one more pass, and a stream of passes in
 * a row is paced (paceDelay()). All timers of the blocklist's meaning come from the injected Clock, so
 * tests drive the engine with a FakeClock.
 */
import { performance } from 'node:perf_hooks';
import { Clock, every } from '../core/clock';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AmrmProxy, ResourceManagerReader } from '../yarn/types';
import { Metrics, createMetrics } from '../metrics/metrics';
import { ConfigValues } from '../config/keys';
import { Backoff } from './backoff';
import { DeadlineTimer } from './deadline-timer';
import { Controller } from './controller';
import { ControllerSettings, PassOutcome } from './controller-parts';
import { ContainersKnown, SyncFacade } from './sync-port';
import { SyncProgress, SyncView } from './view';
import { statusLines } from './event-lines';
import { AuditSink } from '../model/audit';
import { FlinkJobManager } from '../flink/types';
import { FlinkLocation } from '../flink/locate';

export interface SyncSettings extends ControllerSettings {
  pollIntervalMs: number;
  statusLogIntervalMs: number;
  fullResyncIntervalMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  /** 0..1 random shortening of each retry delay (0 in tests for exact timing). */
  backoffJitter?: number;
}

export function syncSettingsFromConfig(v: ConfigValues): SyncSettings {
  return {
    pollIntervalMs: v['cluster.resource-blocklist.poll-interval'],
    maxBlockedFraction: v['cluster.resource-blocklist.max-blocked-fraction'],
    evacuationTimeoutMs: v['cluster.resource-blocklist.evacuation.timeout'],
    releaseBatchSize: v['cluster.resource-blocklist.evacuation.release-batch-size'],
    refreshIntervalMs: v['cluster.resource-blocklist.yarn.refresh-interval'],
    nodesRefreshIntervalMs: v['cluster.resource-blocklist.yarn.nodes.refresh-interval'],
    statusLogIntervalMs: v['cluster.resource-blocklist.evacuation.status-log-interval'],
    fullResyncIntervalMs: v['cluster.resource-blocklist.full-resync-interval'],
    initialBackoffMs: v['cluster.resource-blocklist.retry.initial-backoff'],
    maxBackoffMs: Math.max(v['cluster.resource-blocklist.retry.max-backoff'], v['cluster.resource-blocklist.retry.initial-backoff']),
    proxyOwner: v['cluster.resource-blocklist.amrm-proxy.owner'],
    maxParallel: v['cluster.resource-blocklist.evacuation.max-parallel'],
    checkpointTimeoutMs: v['cluster.resource-blocklist.evacuation.checkpoint.timeout'],
    stepTimeoutMs: v['cluster.resource-blocklist.evacuation.step-timeout'],
    flinkEnabled: v['cluster.resource-blocklist.flink.enabled'],
    flinkAddress: v['cluster.resource-blocklist.flink.rest-address'],
    flinkReadIntervalMs: v['cluster.resource-blocklist.poll-interval'],
    backoffJitter: 0.2,
  };
}

/** How often a triggered checkpoint is asked about while a release waits on it: its replay grows by the wait. */
export const CHECKPOINT_POLL_MS = 50;

export interface SyncEngineDeps {
  store: BlocklistStore;
  rm: ResourceManagerReader;
  proxy: AmrmProxy;
  clock: Clock;
  logger: Logger;
  settings: SyncSettings;
  /** A registry of its own when absent. */
  metrics?: Metrics;
  /** From config or CONTAINER_ID; otherwise taken from the proxy's attempt. */
  applicationId?: string;
  /** Whether this sidecar is the cluster's elected sweeper of gone jobs' records (absent: every sidecar sweeps). */
  sweepsRecords?: () => boolean;
  /** Other record families' clean-up of gone jobs' records, run beside the evacuation starts'. */
  sweepAlso?: (applicationId: string, now: number) => Promise<unknown>;
  /** A client of Flink's JobManager at a location (absent: Flink's REST API is not used). */
  flink?: (location: FlinkLocation) => FlinkJobManager;
  /** Releases and checkpoints of evacuations get an audit line each. */
  audit?: AuditSink;
}

/** Kicks named in a failed pass's log line; the rest are counted. */
const MAX_REASONS = 8;

/** Passes in a row (each queued behind the previous one) before the engine paces them (see paceDelay()). */
export const PACE_AFTER = 2;
/** A paced pass waits this many times as long as the previous pass took. */
export const PACE_FACTOR = 20;
/** The longest pause between paced passes: a slow pass must not hold back the next one for long. */
export const MAX_PACE_MS = 200;

/**
 * How long the next pass waits (ms; 0 = at once), given how many passes in a row have each had
 * several writes land while they ran, and how long the last one took.
 *
 * Under a stream of writes every pass finds kicks waiting, so passes would run back to back and
 * take the event loop from the writes themselves. Once a stream is seen, the next pass waits
 * PACE_FACTOR times as long as the previous one took (at most MAX_PACE_MS): passes then hold the
 * loop at most about a twentieth of the time, each push carries every write of the wait, and a block
 * still reaches the proxy well within the AM's own allocate heartbeat. How the factor was chosen:
 * docs/sync-engine.md ("Pacing a stream"), with its figures in docs/benchmarks.md.
 * A lone write never waits, nor does a client that sends its next block as soon as the previous one
 * reached YARN (one write per pass: no stream).
 */
export function paceDelay(passesInARow: number, lastPassMs: number): number {
  if (passesInARow < PACE_AFTER) return 0;
  const wait = Math.min(PACE_FACTOR * lastPassMs, MAX_PACE_MS);
  return wait < 1 ? 0 : wait;
}

export class SyncEngine implements SyncFacade {
  readonly metrics: Metrics;
  private readonly controller: Controller;
  private readonly deadlines: DeadlineTimer;
  private readonly backoff: Backoff;
  private running: Promise<void> | undefined;
  private dirty = false;
  /**
   * Why the next pass runs, for the log line of a failed pass: the first MAX_REASONS kicks and a
   * count of the rest (a stream of writes kicks once per write: thousands per pass).
   */
  private readonly reasons = new Set<string>();
  private moreReasons = 0;
  private stopped = false;
  private started = false;
  private pollInFlight: Promise<void> | undefined;
  private cancelRetry: (() => void) | undefined;
  private readonly stoppers: (() => void)[] = [];
  private lastFailure: string | undefined;
  /** Kicks since the current pass started (several per pass: a stream of writes). */
  private kicksDuringPass = 0;
  /** Ends a pacing wait early (stop()). */
  private cancelPace: (() => void) | undefined;
  /** The running pass's start, and the first failed pass's since the last good one (progress()). */
  private passStartedAt: number | undefined;
  private failingSince: number | undefined;
  /** The timer that asks about a triggered checkpoint between passes, and the question in flight. */
  private cancelCheckpointWatch: (() => void) | undefined;
  private checkpointInFlight: Promise<void> | undefined;

  constructor(private readonly deps: SyncEngineDeps) {
    this.metrics = deps.metrics ?? createMetrics();
    const s = deps.settings;
    this.controller = new Controller({
      store: deps.store,
      rm: deps.rm,
      proxy: deps.proxy,
      clock: deps.clock,
      logger: deps.logger,
      metrics: this.metrics,
      settings: s,
      ...(deps.applicationId !== undefined ? { applicationId: deps.applicationId } : {}),
      ...(deps.sweepsRecords ? { sweepsRecords: deps.sweepsRecords } : {}),
      ...(deps.sweepAlso ? { sweepAlso: deps.sweepAlso } : {}),
      ...(deps.flink ? { flink: deps.flink } : {}),
      ...(deps.audit ? { audit: deps.audit } : {}),
    });
    this.deadlines = new DeadlineTimer(deps.clock, (keys) => this.kick(`deadline ${keys.join(',')}`));
    this.backoff = new Backoff({ initialMs: s.initialBackoffMs, maxMs: s.maxBackoffMs, jitter: s.backoffJitter ?? 0 });
  }

  /** Runs the first pass (its failure is retried, not thrown) and starts every trigger. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { clock, settings, store } = this.deps;
    this.stoppers.push(
      every(clock, settings.pollIntervalMs, () => {
        this.pollInFlight ??= this.pollTick().finally(() => {
          this.pollInFlight = undefined;
        });
      }),
    );
    this.stoppers.push(
      every(clock, settings.fullResyncIntervalMs, () => {
        this.controller.requestFullResync();
        this.kick('full resync');
      }),
    );
    this.stoppers.push(every(clock, settings.statusLogIntervalMs, () => this.logEvacuations()));
    if (store.watch) this.stoppers.push(store.watch(() => this.kick('store watch')));
    this.kick('start');
    await this.idle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.stoppers.splice(0)) s();
    this.cancelRetry?.();
    this.cancelPace?.();
    this.cancelCheckpointWatch?.();
    this.deadlines.stop();
    await this.idle();
  }

  /** Reconcile as soon as possible (a local mutation, a deadline, a poll that saw a change). */
  kick(reason: string): void {
    if (this.stopped) return;
    if (this.reasons.size < MAX_REASONS || this.reasons.has(reason)) this.reasons.add(reason);
    else this.moreReasons++;
    this.dirty = true;
    this.kicksDuringPass++;
    // After a failed pass the retry is armed with backoff: a kick joins it instead of starting a
    // pass at once. Otherwise every API write during an outage ran a pass straight into the peer
    // that is down (a restarting RM, the proxy), as fast as it failed; the poll already waits for
    // the retry the same way. A write made meanwhile is stored and shows pending; the retry's pass
    // (re-reading everything) takes it, at most retry.max-backoff after the peer is back.
    if (this.cancelRetry) return;
    this.pump();
  }

  /** Resolves when no pass is running or queued (timers may still be armed). For tests and shutdown. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.pollInFlight) await this.pollInFlight;
      else if (this.checkpointInFlight) await this.checkpointInFlight;
      else if (this.running) await this.running;
      else if (this.controller.gone.running) await this.controller.gone.running;
      else return;
    }
  }

  taskManagersOn(node: string): string[] {
    return this.controller.taskManagersOn(node);
  }

  containerHost(containerId: string): string | undefined {
    return this.controller.containerHost(containerId);
  }

  containersKnown(): Promise<ContainersKnown> {
    return this.controller.containersKnown();
  }

  view(): SyncView {
    return this.controller.view();
  }

  synced(): boolean {
    return this.controller.synced();
  }

  progress(): SyncProgress {
    return {
      ...(this.passStartedAt !== undefined ? { passRunningSince: this.passStartedAt } : {}),
      ...(this.failingSince !== undefined ? { failingSince: this.failingSince } : {}),
    };
  }

  /** Waits for the store's writes due an answer; whether there were any (their answers then go out next turn). */
  private async durableFirst(): Promise<boolean> {
    const waiting = this.deps.store.durable?.();
    if (!waiting) return false;
    await waiting;
    return true;
  }

  private pump(): void {
    if (this.running || this.stopped) return;
    this.running = this.loop().then((exit) => {
      this.running = undefined;
      // A kick that landed after the loop's last check but before this callback.
      if (exit === 'idle' && this.dirty) this.pump();
    });
  }

  private async loop(): Promise<'idle' | 'failed'> {
    // Let the current event-loop turn finish first: the API writes committed together (the store's
    // group commit resolves them in one turn) each kick, and all those kicks then make one pass and
    // one push instead of two. A lone write waits one turn (microseconds).
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Passes in a row, each started because several writes arrived during the one before (a
    // stream). One write per pass is someone waiting for each block to land before the next: never paced.
    let inARow = 0;
    let lastPassMs = 0;
    while (this.dirty && !this.stopped) {
      const delay = paceDelay(inARow, lastPassMs);
      if (delay > 0) await this.pace(delay);
      if (this.stopped) break;
      this.dirty = false;
      this.kicksDuringPass = 0;
      const why = [...this.reasons].join('; ') + (this.moreReasons > 0 ? ` and ${this.moreReasons} more` : '');
      this.reasons.clear();
      this.moreReasons = 0;
      let out: PassOutcome;
      // Writes committed and waiting for the disk (SQLite syncs them off the loop) are answered
      // first: a pass holds the loop for milliseconds at 10,000 items, and an answer that came due
      // meanwhile would wait for all of it.
      if (await this.durableFirst()) await new Promise<void>((resolve) => setImmediate(resolve));
      const started = performance.now();
      const startedAt = (this.passStartedAt = this.deps.clock.now());
      try {
        out = await this.controller.pass();
      } catch (e) {
        // The controller reports failures as outcomes; this is a bug, but never stop syncing.
        out = { result: 'failed', stage: 'store', error: `unexpected: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` };
      }
      this.passStartedAt = undefined;
      this.deadlines.replaceAll(this.controller.deadlines());
      this.watchCheckpoints();
      if (out.result === 'failed') {
        this.failingSince ??= startedAt;
        this.scheduleRetry(out, why);
        return 'failed';
      }
      this.failingSince = undefined;
      if (this.lastFailure !== undefined) this.deps.logger.info(`reconcile recovered after ${this.backoff.attempts} failed attempt(s) (last: ${this.lastFailure})`);
      this.lastFailure = undefined;
      this.backoff.reset();
      this.cancelRetry?.();
      this.cancelRetry = undefined;
      if (out.more) {
        this.dirty = true;
        this.reasons.add('more containers to release');
      }
      lastPassMs = performance.now() - started;
      inARow = this.dirty && this.kicksDuringPass >= 2 ? inARow + 1 : 0;
    }
    return 'idle';
  }

  /** Waits `ms` of real time, cut short by stop(): this shares the process's CPU, it is not a deadline of the blocklist (paceDelay()). */
  private pace(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.cancelPace = undefined;
        resolve();
      }, ms);
      this.cancelPace = () => {
        clearTimeout(t);
        this.cancelPace = undefined;
        resolve();
      };
    });
  }

  private scheduleRetry(out: Extract<PassOutcome, { result: 'failed' }>, why: string): void {
    const delay = this.backoff.next();
    const failure = `${out.stage}: ${out.error}`;
    // Log each distinct failure once at WARN and repeats at DEBUG, so an outage does not flood the log.
    const level = failure === this.lastFailure ? 'debug' : 'warn';
    this.deps.logger.log(level, `reconcile failed at ${out.stage} (${why}): ${out.error}; retrying in ${delay} ms (attempt ${this.backoff.attempts})`);
    this.lastFailure = failure;
    this.dirty = true;
    this.cancelRetry?.();
    this.cancelRetry = this.deps.clock.setTimer(delay, () => {
      this.cancelRetry = undefined;
      this.kick('retry');
    });
  }

  /** While a release waits on a triggered checkpoint, its answer is asked every CHECKPOINT_POLL_MS and a pass kicked once it is in. */
  private watchCheckpoints(): void {
    if (this.cancelCheckpointWatch || this.stopped || !this.controller.awaitsCheckpoint()) return;
    this.cancelCheckpointWatch = this.deps.clock.setTimer(CHECKPOINT_POLL_MS, () => {
      this.cancelCheckpointWatch = undefined;
      if (this.stopped) return;
      this.checkpointInFlight = this.controller.checkpointAnswered().then((over) => {
        this.checkpointInFlight = undefined;
        if (over) this.kick('checkpoint answered');
        else this.watchCheckpoints();
      });
    });
  }

  private async pollTick(): Promise<void> {
    if (this.stopped) return;
    const reason = await this.controller.checkForChanges();
    // While a retry is armed it will re-read everything anyway; polling must not defeat the backoff.
    if (reason && !this.cancelRetry) this.kick(reason);
  }

  /** One line per evacuating item, like YARN's DecommissioningNodesWatcher (event-lines.ts statusLines bounds them). */
  private logEvacuations(): void {
    if (this.deps.logger.isLevelEnabled?.('info') === false) return;
    for (const line of statusLines(this.controller.activeEvacuations(), this.deps.clock.now())) this.deps.logger.info(line);
  }
}
