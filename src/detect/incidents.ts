/**
 * Failures into incidents, pure (no I/O, time passed in): new failures become incidents (one per
 * host per group — a job restart, a container), each failure key counted once however often a
 * source re-reads it; what falls out of the window is forgotten; the RM's node reports are kept
 * as evidence.
 */
import { DetectorState } from './state';
import { Failure, HealthObservation, Incident, IncidentFailure } from './types';

/** Failures kept per incident (evidence); the count of incidents does not depend on it. */
const FAILURES_PER_INCIDENT = 8;
/** A failure stamped further ahead than this is taken as now (a JobManager clock ahead of ours). */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

export interface IngestResult {
  /** Failures counted for the first time (a metric per source). */
  added: Failure[];
  /** New incidents (one per host per group). */
  newIncidents: Incident[];
  duplicates: number;
  /** Older than the window when first seen: remembered, never counted. */
  stale: number;
}

/** Drops incidents and remembered keys that fell out of the window. */
export function prune(state: DetectorState, now: number, windowMs: number): void {
  const from = now - windowMs;
  state.incidents = state.incidents.filter((i) => latest(i) > from);
  for (const [k, at] of Object.entries(state.seen)) if (at <= from) delete state.seen[k];
}

/** An incident's latest failure: it stays in the window (and counts) until that one leaves it. */
export const latest = (i: Incident): number => Math.max(i.at, ...i.failures.map((f) => f.at));

/**
 * From when a host's incidents count again after a block (or an operator's unblock): every incident
 * known now is spent, including one stamped a little ahead of the detector's clock (Flink's and
 * YARN's clocks are not ours), so a block's own evidence never counts toward the next one.
 */
export function spentUntil(state: DetectorState, host: string, now: number): number {
  let until = Math.max(state.hosts[host]?.countAfter ?? 0, now);
  for (const inc of state.incidents) if (inc.host === host) until = Math.max(until, latest(inc));
  return until;
}

export function ingest(state: DetectorState, failures: readonly Failure[], now: number, windowMs: number): IngestResult {
  prune(state, now, windowMs);
  const out: IngestResult = { added: [], newIncidents: [], duplicates: 0, stale: 0 };
  const from = now - windowMs;
  for (const raw of failures) {
    if (state.seen[raw.key] !== undefined) {
      out.duplicates++;
      continue;
    }
    const f: Failure = raw.at > now + FUTURE_TOLERANCE_MS ? { ...raw, at: now } : raw;
    if (f.at <= from) {
      out.stale++;
      continue;
    }
    state.seen[f.key] = f.at;
    out.added.push(f);
    const entry: IncidentFailure = { key: f.key, at: f.at, source: f.source, signature: f.signature, summary: f.summary };
    if (f.containerId !== undefined) entry.containerId = f.containerId;
    if (f.job !== undefined) entry.job = f.job;
    // Same group (one restart) = one incident. Same container seen by another source (Flink's
    // failure and YARN's completion of one container) = one incident, the latest such. The same
    // container failing again in a later restart (a task crashed, the task manager lived) is new.
    const existing =
      state.incidents.find((i) => i.host === f.host && i.groups.includes(f.group)) ??
      [...state.incidents].reverse().find((i) => i.host === f.host && f.containerId !== undefined && i.containerIds.includes(f.containerId) && !i.sources.includes(f.source));
    if (existing) {
      if (!existing.groups.includes(f.group)) existing.groups.push(f.group);
      if (f.containerId !== undefined && !existing.containerIds.includes(f.containerId)) existing.containerIds.push(f.containerId);
      if (!existing.sources.includes(f.source)) existing.sources.push(f.source);
      existing.at = Math.min(existing.at, f.at);
      if (existing.failures.length < FAILURES_PER_INCIDENT) existing.failures.push(entry);
      continue;
    }
    const inc: Incident = { host: f.host, at: f.at, groups: [f.group], containerIds: f.containerId !== undefined ? [f.containerId] : [], sources: [f.source], failures: [entry] };
    state.incidents.push(inc);
    out.newIncidents.push(inc);
  }
  return out;
}

/** The RM's node reports, kept as evidence. Nodes back to RUNNING are forgotten. */
export function recordHealth(state: DetectorState, reports: readonly HealthObservation[], now: number): void {
  const reported = new Set<string>();
  for (const r of reports) {
    reported.add(r.host);
    const prev = state.health[r.host];
    state.health[r.host] = prev && prev.state === r.state ? { ...r, seenAt: prev.seenAt } : { ...r, seenAt: r.seenAt || now };
  }
  for (const h of Object.keys(state.health)) if (!reported.has(h)) delete state.health[h];
  for (const [h, hs] of Object.entries(state.hosts)) if (hs.evacuatedAt !== undefined && state.health[h]?.state !== 'DECOMMISSIONING') delete hs.evacuatedAt;
}
