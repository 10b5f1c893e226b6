/**
 * Graceful evacuation of one item, pure (Hadoop's DecommissioningNodesWatcher, graceful
 * decommission):
 *
 *   containers left, waitTime < timeout (or timeout < 0)  → WAIT_CONTAINER
 *   containers left, waitTime >= timeout                  → TIMEOUT  (release them)
 *   no containers left                                    → READY
 *
 * waitTime is a duration on the monotonic clock since this job's start of the evacuation (its
 * stored start, evacuation-starts.ts, is wall-clock: the elapsed time it implies is taken once,
 * when this process first meets the start, and counted on the monotonic clock from then on;
 * memory.ts evacuationClock). A wall-clock step therefore moves no deadline. An item held back by
 * the safety cap has not started, and a timeout change, a merge or a sidecar restart does not
 * restart the clock. Timeout priority: the item's evacuationTimeout > the configured default.
 * Negative = forever; 0 = at once.
 */
import { BlockedItem } from '../model/item';
import { AppContainer } from '../yarn/types';
import { parseContainerId } from '../model/ids';

/** Graceful-decommission-style sub-state of an evacuating item (Hadoop's DecommissioningNodesWatcher). */
export type EvacuationPhase = 'WAIT_CONTAINER' | 'TIMEOUT' | 'READY';

/** One evacuation as the engine last evaluated it (data; the API words it). */
export interface EvacuationStatus {
  /** The item evacuating: a node id, or `<node>/<containerId>` for one task manager. */
  itemId: string;
  node: string;
  phase: EvacuationPhase;
  /** Epoch ms this job's evacuation started (never reset by a timeout change or a restart). */
  since: number;
  /** Effective timeout in seconds; -1 = forever. */
  timeoutSeconds: number;
  /** Epoch ms deadline as the wall clock reads now (moved by a wall-clock step), absent when waiting forever. */
  deadline?: number;
  /** Seconds until the deadline: max(0, …); -1 forever; 0 when READY. */
  remainingSeconds: number;
  /** App containers still on the node. */
  containers: string[];
  /** Containers this sidecar asked the proxy to release (kept after they are gone). */
  released: string[];
  /** A task manager item whose container runs on another host than the item names: that host (nothing is released). */
  runsOn?: string;
}

/**
 * States in which a container no longer occupies the node. The proxy reports a container it was
 * asked to release as RELEASING (or drops it); YARN reports finished ones as COMPLETE.
 */
const GONE_STATES = new Set(['COMPLETE', 'COMPLETED', 'RELEASED', 'RELEASING', 'KILLED', 'FAILED', 'DONE', 'EXITED']);

/** Whether a container still occupies its node (YARN counts RUNNING and NEW; we count anything not finished). */
export function isLive(c: AppContainer): boolean {
  return !GONE_STATES.has(c.state.toUpperCase());
}

/**
 * The ApplicationMaster's container, by fact: the attempt's amContainerId (the proxy's, else the
 * RM's attempt report). It is never a target: releasing it would kill the job's AM, and this
 * sidecar with it. Numbers say nothing: after a work-preserving RM restart a worker can be
 * `…_000001` under a new epoch. Only when no one has named the AM container (an old proxy and an
 * RM whose attempts could not be read) is container 1 of its attempt taken for it, so that a
 * proxy that lists every container cannot turn an evacuation of the AM's node into a job failure.
 */
export function isAmContainer(containerId: string, amContainerId: string | undefined): boolean {
  if (amContainerId !== undefined) return containerId === amContainerId;
  const p = parseContainerId(containerId);
  return p.ok && p.value.container === 1;
}

/** A live task manager container (what `taskManagers` lists and evacuations move). */
export function isTaskManager(c: AppContainer, amContainerId: string | undefined): boolean {
  return isLive(c) && !isAmContainer(c.containerId, amContainerId);
}

/** Effective timeout in ms: item's seconds > default; any negative value is -1 (forever). */
export function evacuationTimeoutMs(item: BlockedItem, defaultMs: number): number {
  const ms = item.evacuationTimeout !== undefined ? item.evacuationTimeout * 1000 : defaultMs;
  return ms < 0 ? -1 : ms;
}

/** The phase, by the watcher's rule: WAIT only while waitTime < timeout; equality is TIMEOUT. */
export function evacuationPhase(elapsedMs: number, timeoutMs: number, liveContainers: number): EvacuationPhase {
  if (liveContainers === 0) return 'READY';
  if (timeoutMs < 0) return 'WAIT_CONTAINER';
  if (timeoutMs === 0) return 'TIMEOUT';
  return elapsedMs < timeoutMs ? 'WAIT_CONTAINER' : 'TIMEOUT';
}

/** Remaining seconds as YARN's getTimeoutInSec: -1 forever, 0 when READY, else max(0, floor(left/1000)). */
export function remainingSeconds(phase: EvacuationPhase, deadline: number | undefined, now: number): number {
  if (phase === 'READY') return 0;
  if (deadline === undefined) return -1;
  return Math.max(0, Math.floor((deadline - now) / 1000));
}

export interface EvacuationInput {
  item: BlockedItem;
  /**
   * When this job's evacuation of the item started (wall clock, shown): its stored start, or now
   * for the pass that puts the node on the job's blacklist (reconcile's `starts` records it).
   */
  since: number;
  /** How long it has been going, on the monotonic clock (absent: now − since). */
  elapsedMs?: number;
  /** The app's containers as last read (any state; the gone ones are skipped). */
  containersOnNode: readonly AppContainer[];
  /** Containers this sidecar already asked YARN to release (never asked twice): id → host. */
  released: ReadonlyMap<string, string>;
  defaultTimeoutMs: number;
  now: number;
  /** A rack item's hosts (its evacuation covers each of them). */
  hosts?: ReadonlySet<string>;
  /** The attempt's AM container (isAmContainer). */
  amContainerId?: string;
}

export interface EvacuationDecision {
  status: EvacuationStatus;
  /** Containers to release now (TIMEOUT only, each once). */
  toRelease: string[];
  /** When WAIT_CONTAINER turns into TIMEOUT by itself (for the deadline timer). */
  wakeAt?: number;
}

/**
 * Decides one item's evacuation. A node item targets every live app container on its host; a task
 * manager item only its own container (and never the node).
 */
export function evaluateEvacuation(input: EvacuationInput): EvacuationDecision {
  const { item, now, since } = input;
  const timeoutMs = evacuationTimeoutMs(item, input.defaultTimeoutMs);
  const elapsedMs = Math.max(0, input.elapsedMs ?? now - since);
  const targets = input.containersOnNode
    .filter((c) => isTaskManager(c, input.amContainerId) && (item.kind !== 'taskmanager' || c.containerId === item.containerId))
    .map((c) => c.containerId)
    .sort();
  const phase = evacuationPhase(elapsedMs, timeoutMs, targets.length);
  const deadline = timeoutMs >= 0 ? now + timeoutMs - elapsedMs : undefined;
  const status: EvacuationStatus = {
    itemId: item.id,
    node: item.node,
    phase,
    since,
    timeoutSeconds: timeoutMs < 0 ? -1 : timeoutMs / 1000,
    remainingSeconds: remainingSeconds(phase, deadline, now),
    containers: targets,
    released: releasedFor(item, input.released, input.hosts),
  };
  if (deadline !== undefined) status.deadline = deadline;
  const decision: EvacuationDecision = {
    status,
    toRelease: phase === 'TIMEOUT' ? targets.filter((c) => !input.released.has(c)) : [],
  };
  if (phase === 'WAIT_CONTAINER' && deadline !== undefined) decision.wakeAt = deadline;
  return decision;
}

/** What this sidecar released for an item: all of a node item's host, or a task manager's one container. */
function releasedFor(item: BlockedItem, released: ReadonlyMap<string, string>, hosts?: ReadonlySet<string>): string[] {
  if (item.kind === 'taskmanager') return item.containerId !== undefined && released.has(item.containerId) ? [item.containerId] : [];
  const out: string[] = [];
  for (const [id, host] of released) if (item.kind === 'rack' ? hosts?.has(host) : host === item.node) out.push(id);
  return out.sort();
}

/** A status as of an earlier pass with its countdown as of `now` (the phase changes only in a pass). */
export function withCountdown(s: EvacuationStatus, now: number): EvacuationStatus {
  return { ...s, remainingSeconds: remainingSeconds(s.phase, s.deadline, now) };
}
