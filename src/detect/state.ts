/**
 * What the detector remembers between passes and across restarts (kept in the store, so a sidecar
 * restart or a JobManager failover — which empties Flink's exception history — forgets nothing).
 * Plain JSON; `decodeState` accepts only what `encodeState` writes and starts afresh otherwise.
 */
import { HealthObservation, Incident } from './types';

export type DetectorMode = 'off' | 'shadow' | 'enforce';

/** One automatic block the detector made (or, in shadow mode, would have made). */
export interface AutoBlock {
  itemId: string;
  start: number;
  /** The item's end as last seen (an operator or another job's detector may have moved it). */
  end: number;
  /** The end the detector itself gave the block (absent in records written before it was kept: `end`). */
  ownEnd?: number;
  /** Backoff level: the block lasted block-duration × 2^level (capped). */
  level: number;
  mode: 'enforce' | 'shadow';
  /** Set once the block is over: when, and whether it expired or an operator lifted it. */
  endedAt?: number;
  endedBy?: 'expiry' | 'operator';
  /**
   * When someone other than the detector (an operator through the REST API or the CLI) first
   * changed the item — extended it, merged a cause into it, re-created it — and who: from then on
   * it is their block, not an automatic one (auto-blocks.ts#holdsCap).
   */
  takenOverAt?: number;
  takenOverBy?: string;
  /**
   * Reserved, its item perhaps not in the store yet: the detector writes the block into the record
   * (compare-and-set) before it adds the item, so another sidecar of the job counts it against the
   * cap at once (reservation.ts). Cleared once the item is seen; abandoned if it never comes.
   */
  pending?: true;
  /** A reservation that came to nothing (refused, failed, or its sidecar stopped first): no block. */
  abandoned?: true;
  /** The host's block before this reservation: the backoff's memory if the reservation is abandoned. */
  before?: AutoBlock;
  /**
   * The sidecar that made the reservation (its name in the lease): it knows a reservation of its
   * own that an earlier pass never added, and gives it up at once (reservation.ts).
   */
  by?: string;
}

export interface HostState {
  /** The latest automatic block of this host (active or ended). */
  lastBlock?: AutoBlock;
  /** Incidents at or before this instant no longer count (consumed by a block, or forgiven). */
  countAfter?: number;
  /** Set when an operator lifted our block: the incidents before it are forgiven, not re-counted. */
  operatorUnblockedAt?: number;
  /** When a DECOMMISSIONING node was evacuated early (not again while it stays so). */
  evacuatedAt?: number;
  /**
   * The store refused joining the other jobs' item of this host: the item as it was then (its
   * last change, end and scope) and the store's words. Tried again once the item changes.
   */
  refusedJoin?: { item: string; reason: string; at: number };
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [k: string]: JsonValue };

export interface DetectorState {
  version: 1;
  incidents: Incident[];
  /** Failure keys already counted, with the failure's time (pruned once out of the window). */
  seen: Record<string, number>;
  hosts: Record<string, HostState>;
  health: Record<string, HealthObservation>;
  /** Each source's own cursor (e.g. the proxy's completed-containers seq). */
  cursors: Record<string, JsonValue>;
  /** The last decision per host, so metrics count a suppression once, not once per pass. */
  lastDecisions: Record<string, string>;
  /**
   * When a detector last wrote the record: at least daily while its job runs, so a record nobody
   * wrote for a week belongs to a job that is gone, and any detector may remove it.
   */
  touchedAt?: number;
  /**
   * Which sidecar of the job runs the detector, and until when its lease lasts (leadership.ts):
   * the others only read the record until it lapses.
   */
  runner?: DetectorRunner;
}

/** The sidecar that holds the job's detector lease. */
export interface DetectorRunner {
  member: string;
  /** The lease's end, on the clock of the sidecar that wrote it. */
  until: number;
}

export function emptyState(): DetectorState {
  return { version: 1, incidents: [], seen: {}, hosts: {}, health: {}, cursors: {}, lastDecisions: {} };
}

export function encodeState(s: DetectorState): string {
  return JSON.stringify(s);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored text back to a state; anything unreadable is reported, and the detector starts empty. */
export function decodeState(text: string | undefined): { state: DetectorState; problem?: string } {
  if (text === undefined) return { state: emptyState() };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return { state: emptyState(), problem: `stored detector state is not JSON (${(e as Error).message}); starting afresh` };
  }
  if (!isObj(raw) || raw.version !== 1 || !Array.isArray(raw.incidents) || !isObj(raw.seen) || !isObj(raw.hosts)) {
    return { state: emptyState(), problem: 'stored detector state has an unknown shape; starting afresh' };
  }
  const s = emptyState();
  for (const i of raw.incidents) {
    if (isObj(i) && typeof i.host === 'string' && typeof i.at === 'number' && Array.isArray(i.failures)) s.incidents.push(i as unknown as Incident);
  }
  for (const [k, v] of Object.entries(raw.seen)) if (typeof v === 'number') s.seen[k] = v;
  for (const [h, v] of Object.entries(raw.hosts)) {
    if (!isObj(v)) continue;
    // Records written before permanent ends were kept finite hold null (JSON's Infinity): permanent.
    if (isObj(v.lastBlock) && v.lastBlock.end === null) v.lastBlock.end = Number.MAX_SAFE_INTEGER;
    s.hosts[h] = v as HostState;
  }
  if (isObj(raw.health)) for (const [h, v] of Object.entries(raw.health)) if (isObj(v) && typeof v.state === 'string') s.health[h] = v as unknown as HealthObservation;
  if (isObj(raw.cursors)) s.cursors = raw.cursors as Record<string, JsonValue>;
  if (typeof raw.touchedAt === 'number') s.touchedAt = raw.touchedAt;
  if (isObj(raw.runner) && typeof raw.runner.member === 'string' && typeof raw.runner.until === 'number') s.runner = { member: raw.runner.member, until: raw.runner.until };
  if (isObj(raw.lastDecisions)) for (const [h, v] of Object.entries(raw.lastDecisions)) if (typeof v === 'string') s.lastDecisions[h] = v;
  return { state: s };
}
