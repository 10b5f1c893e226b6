/**
 * The log lines of a pass's events (reconcile.ts SyncEvent), pure. A few events of a kind get a
 * line each; many of one kind at once (a batch of 10,000 evacuations turning READY in one pass, a
 * cap deferring thousands) get one line naming the first LISTED_IDS items and counting the rest:
 * ten thousand lines in one turn of the event loop held it for tens of milliseconds and told an
 * operator nothing the count does not. Every item's own state stays in GET /blocklist.
 */
import { LogLevel } from '../core/logger';
import { EVACUATION_PHASES, EvacuationPhase, EvacuationStatus } from './evacuation';
import { SyncEvent } from './reconcile';

/** Up to this many events of one kind (one phase change) in a pass are said one line each. */
export const EACH_LINE_UP_TO = 10;
/** A summary line names this many items, in the order the pass met them, and counts the rest. */
export const LISTED_IDS = 20;

export interface LogLine {
  level: LogLevel;
  message: string;
}

type Phase = Extract<SyncEvent, { kind: 'phase' }>;
type Deferred = Extract<SyncEvent, { kind: 'deferred' }>;

/** The lines for one pass's events, in the order: deferrals, lifted deferrals, phase changes. */
export function eventLines(events: readonly SyncEvent[], maxBlockedFraction: number): LogLine[] {
  const deferred: Deferred[] = [];
  const enforced: string[] = [];
  const phases = new Map<string, Phase[]>();
  for (const e of events) {
    if (e.kind === 'deferred') deferred.push(e);
    else if (e.kind === 'undeferred') {
      if (e.enforced) enforced.push(e.id);
    } else {
      const key = `${e.from ?? 'start'} -> ${e.status.phase}`;
      const group = phases.get(key);
      if (group) group.push(e);
      else phases.set(key, [e]);
    }
  }
  const out: LogLine[] = [];
  const cap = (d: Deferred) => `${d.capacity} of ${d.runningNodes} RUNNING nodes are already blocked (max-blocked-fraction ${maxBlockedFraction})`;
  if (deferred.length > EACH_LINE_UP_TO) out.push({ level: 'warn', message: `safety cap: ${deferred.length} items are deferred (not blacklisted): ${listed(deferred.map((d) => d.id))}; ${cap(deferred[0])}` });
  else for (const d of deferred) out.push({ level: 'warn', message: `safety cap: ${d.id} is deferred (not blacklisted): ${cap(d)}` });
  if (enforced.length > EACH_LINE_UP_TO) out.push({ level: 'info', message: `safety cap: ${enforced.length} items are no longer deferred and go on the blacklist: ${listed(enforced)}` });
  else for (const id of enforced) out.push({ level: 'info', message: `safety cap: ${id} is no longer deferred and goes on the blacklist` });
  for (const [change, group] of phases) {
    if (group.length > EACH_LINE_UP_TO) out.push({ level: 'info', message: `evacuation: ${group.length} evacuations ${change}: ${listed(group.map((e) => e.id))}` });
    else for (const e of group) out.push({ level: 'info', message: phaseLine(e.id, e.from, e.status) });
  }
  return out;
}

function phaseLine(id: string, from: EvacuationPhase | undefined, s: EvacuationStatus): string {
  const timeout = s.timeoutSeconds < 0 ? 'none (waits forever)' : `${s.timeoutSeconds}s`;
  return `evacuation ${id}: ${from ?? 'start'} -> ${s.phase}, ${s.containers.length} container(s) left, timeout ${timeout}, since ${new Date(s.since).toISOString()}`;
}

/** `a, b, c`, or the first LISTED_IDS and `and 9,980 more`. */
export function listed(ids: readonly string[]): string {
  if (ids.length <= LISTED_IDS) return ids.join(', ');
  return `${ids.slice(0, LISTED_IDS).join(', ')} and ${(ids.length - LISTED_IDS).toLocaleString('en')} more`;
}

/** Most evacuations the periodic status log gives a line each; the rest are counted by phase in one more line. */
export const STATUS_LINES_UP_TO = 20;

/**
 * The periodic status log of the evacuations in progress (countdowns as of now), one line each as
 * YARN's DecommissioningNodesWatcher logs its nodes, up to STATUS_LINES_UP_TO.
 */
export function statusLines(active: readonly EvacuationStatus[], now: number): string[] {
  const out: string[] = [];
  for (const e of active.slice(0, STATUS_LINES_UP_TO)) {
    // By the grace period's own (monotonic) measure where it has one: a wall-clock step moves `since` only.
    const elapsed = e.timeoutSeconds >= 0 ? Math.max(0, e.timeoutSeconds - e.remainingSeconds) : Math.floor((now - e.since) / 1000);
    const timeout = e.remainingSeconds < 0 ? 'none' : `${e.remainingSeconds}s left`;
    out.push(`evacuating ${e.itemId.padEnd(34)} ${String(elapsed).padStart(4)}s containers:${String(e.containers.length).padStart(2)} ${e.phase.padStart(14)} timeout:${timeout} released:${e.released.length}`);
  }
  if (active.length <= STATUS_LINES_UP_TO) return out;
  const byPhase = new Map<EvacuationPhase, number>();
  for (const e of active.slice(STATUS_LINES_UP_TO)) byPhase.set(e.phase, (byPhase.get(e.phase) ?? 0) + 1);
  const counts = EVACUATION_PHASES.filter((p) => byPhase.has(p)).map((p) => `${p} ${byPhase.get(p)!.toLocaleString('en')}`).join(', ');
  out.push(`evacuating: ${(active.length - STATUS_LINES_UP_TO).toLocaleString('en')} more in progress (${counts}); each one's state is in GET /blocklist`);
  return out;
}
