/**
 * What a pass publishes: the state the API reads (`SyncView`, built from what the last pass showed
 * and the watchers' caches), the evacuation gauges, and the log and audit lines of its events and
 * releases. Nothing here decides.
 */
import { monotonicNow } from '../core/clock';
import { EvacuationsView, SyncEvent } from './reconcile';
import { BlacklistDiff, DesiredPlan } from './desired';
import { EVACUATION_PHASES, EvacuationStatus } from './evacuation';
import { ReleaseKind, Wait } from './evacuation-steps';
import { Memory } from './memory';
import { eventLines } from './event-lines';
import { ControllerParts } from './controller-parts';
import { amContainer } from './pass-observe';
import { PassStage, SyncView } from './view';

/** What the view shows, as of the last pass. */
export interface Shown {
  plan?: DesiredPlan;
  pending: BlacklistDiff;
  pendingReleases: string[];
  evacuations?: EvacuationsView;
  statuses: Map<string, EvacuationStatus>;
  /** Why each covered task manager not released yet waits (the job-wide decision). */
  waits: ReadonlyMap<string, Wait>;
  deadlines: Map<string, number>;
  lastSuccessfulSync?: number;
  lastFailure?: { stage: PassStage; error: string };
}

export function emptyShown(): Shown {
  return { pending: { additions: [], removals: [] }, pendingReleases: [], statuses: new Map(), waits: new Map(), deadlines: new Map() };
}

/** The evacuations as decided or as their releases came out. */
export function showEvacuations(shown: Shown, e: EvacuationsView, statuses: Map<string, EvacuationStatus>): void {
  shown.evacuations = e;
  shown.statuses = statuses;
  shown.waits = e.steps.waits;
}

/** How each kind of release went, in words (audit, logs). */
const RELEASE_WORDS: Readonly<Record<ReleaseKind, string>> = {
  idle: 'released idle (every slot free): nothing ran there',
  checkpointed: 'released right after a completed checkpoint',
  deadline: 'released at the deadline (no checkpoint to wait for)',
  fallback: 'released at the bound without a fresh checkpoint (it failed or was slow)',
  blind: "released at the deadline without Flink (its REST API could not be read)",
};

/** One audit line and one count per task manager released, saying how it went. */
export function auditReleases(parts: ControllerParts, released: readonly string[], kinds: ReadonlyMap<string, ReleaseKind>, evac: EvacuationsView | undefined): void {
  const item = new Map<string, string>();
  for (const [id, p] of evac?.plans ?? []) for (const c of p.containers) item.set(c, id);
  for (const c of released) {
    const kind = kinds.get(c) ?? 'deadline';
    parts.deps.metrics.taskManagersReleased.inc({ reason: kind });
    parts.deps.audit?.record({ op: 'evacuation-release', id: item.get(c) ?? c, who: 'sync', from: 'sidecar', outcome: 'released', detail: `${c}: ${RELEASE_WORDS[kind]}` });
  }
}

/** The evacuating-nodes gauge: how many evacuations are in each phase. */
export function countPhases(parts: ControllerParts, statuses: ReadonlyMap<string, EvacuationStatus>): void {
  const counts = new Map(EVACUATION_PHASES.map((p) => [p, 0]));
  for (const st of statuses.values()) counts.set(st.phase, (counts.get(st.phase) ?? 0) + 1);
  for (const [phase, n] of counts) parts.deps.metrics.evacuatingNodes.set({ phase }, n);
}

/** A pass's events as log lines: one each for a few, one summary for many of a kind (event-lines.ts). */
export function logEvents(parts: ControllerParts, events: readonly SyncEvent[]): void {
  if (events.length === 0) return;
  for (const line of eventLines(events, parts.rules.maxBlockedFraction)) parts.deps.logger.log(line.level, line.message);
}

/** The state as of the last pass: what it showed, the watchers' caches, the memory's releases. */
export function buildView(parts: ControllerParts, shown: Shown, memory: Memory): SyncView {
  const { watch, flink, rules } = parts;
  const clock = parts.deps.clock;
  const v: SyncView = {
    enabled: true,
    engine: true,
    maxBlockedFraction: rules.maxBlockedFraction,
    pending: shown.pending,
    pendingReleases: shown.pendingReleases,
    evacuations: shown.statuses,
  };
  if (parts.deps.settings.nodeNaming) v.nodeNaming = parts.deps.settings.nodeNaming;
  if (watch.attempt.applicationId !== undefined) v.applicationId = watch.attempt.applicationId;
  if (watch.attempt.attemptId !== undefined) v.appAttemptId = watch.attempt.attemptId;
  if (shown.lastSuccessfulSync !== undefined) v.lastSuccessfulSync = shown.lastSuccessfulSync;
  if (shown.lastFailure) v.lastFailure = shown.lastFailure;
  if (watch.store.error !== undefined) v.storeError = watch.store.error;
  const snapshot = watch.store.cache.value;
  if (snapshot) Object.assign(v, { items: snapshot.items, itemLookups: snapshot.lookups });
  if (shown.plan) v.plan = shown.plan;
  const bl = watch.blacklist.cache.value;
  if (bl) v.actual = bl.actual;
  if (bl?.owners) v.owners = bl.owners;
  const nodes = watch.nodes.cache;
  const known = watch.nodes.known;
  if (nodes.value && nodes.readAt !== undefined) v.nodes = { readAt: nodes.readAt, list: nodes.value, ...(known ? { known } : {}) };
  const containers = watch.containers.cache.value;
  if (containers) v.containers = containers;
  const k = flink.knowledge;
  if (k.kind === 'known') v.flinkReadAt = clock.now() - Math.max(0, monotonicNow(clock) - k.view.readAt);
  Object.assign(v, amContainer(watch), { flink: k, taskManagerWaits: shown.waits, released: memory.released, releaseKinds: memory.steps.kinds });
  return v;
}
