/**
 * The detector's rules, pure: no I/O, time passed in. The runner (detector.ts) reads the sources,
 * the store and YARN, and hands the results to these functions.
 *
 *  - ingest: new failures become incidents (one per host per group — a job restart, a container),
 *    each failure key counted once however often a source re-reads it;
 *  - observeBlocks: notices that an automatic block expired, or that an operator lifted it (its
 *    incidents are then forgiven: the host is not blocked again for them);
 *  - decide: per host, incidents within the window minus job faults (the same failure on
 *    `jobFaultHosts` distinct hosts blames none of them), against `failuresPerHost`; blocks for
 *    `blockDuration`, doubled for a host blocked again soon after its last block ended, up to
 *    `maxBlockDuration`; at most `maxBlockedFraction` of RUNNING nodes blocked automatically.
 */
import { BlockAction, EVACUATE } from '../model/item';
import { AutoBlock, DetectorMode, DetectorState, HostState } from './state';
import { Failure, HealthObservation, Incident, IncidentFailure } from './types';

export interface DecideSettings {
  mode: DetectorMode;
  failuresPerHost: number;
  windowMs: number;
  jobFaultHosts: number;
  blockDurationMs: number;
  maxBlockDurationMs: number;
  maxBlockedFraction: number;
  action: BlockAction;
  /** Evacuate a node YARN is decommissioning ahead of YARN's own timeout. */
  evacuateDecommissioning: boolean;
}

export const DEFAULT_DECIDE_SETTINGS: DecideSettings = {
  mode: 'off',
  failuresPerHost: 3,
  windowMs: 10 * 60_000,
  jobFaultHosts: 3,
  blockDurationMs: 3_600_000,
  maxBlockDurationMs: 24 * 3_600_000,
  maxBlockedFraction: 0.1,
  action: 'MARK_BLOCKED',
  evacuateDecommissioning: false,
};

/** Failures kept per incident (evidence); the count of incidents does not depend on it. */
const FAILURES_PER_INCIDENT = 8;
/** A failure stamped further ahead than this is taken as now (a JobManager clock ahead of ours). */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

// ---- ingest ---------------------------------------------------------------------------------------

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

const latest = (i: Incident): number => Math.max(i.at, ...i.failures.map((f) => f.at));

/**
 * From when a host's incidents count again after a block (or an operator's unblock): every incident
 * known now is spent, including one stamped a little ahead of the detector's clock (Flink's and
 * YARN's clocks are not ours), so a block's own evidence never counts toward the next one.
 */
function spentUntil(state: DetectorState, host: string, now: number): number {
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

// ---- blocks ---------------------------------------------------------------------------------------

/** An item in effect now, as the store has it. */
export interface EffectiveBlock {
  itemId: string;
  by: string;
  end: number;
  action: BlockAction;
}

/**
 * Brings each host's last automatic block up to date with the store: gone after its end = expired;
 * gone before its end = an operator lifted it, and the incidents so far are forgiven. Shadow blocks
 * live only in the detector's state and just expire.
 */
export function observeBlocks(state: DetectorState, itemEnd: (itemId: string) => number | undefined, now: number): { unblockedByOperator: string[] } {
  const unblockedByOperator: string[] = [];
  for (const [host, hs] of Object.entries(state.hosts)) {
    const b = hs.lastBlock;
    if (!b || b.endedAt !== undefined) continue;
    if (b.mode === 'shadow') {
      if (now >= b.end) {
        b.endedAt = b.end;
        b.endedBy = 'expiry';
      }
      continue;
    }
    const end = itemEnd(b.itemId);
    if (end !== undefined && end > now) {
      b.end = end; // an operator may have extended it
      continue;
    }
    if (end === undefined && now < b.end) {
      b.endedAt = now;
      b.endedBy = 'operator';
      hs.countAfter = spentUntil(state, host, now);
      hs.operatorUnblockedAt = now;
      unblockedByOperator.push(host);
    } else {
      b.endedAt = Math.min(b.end, now);
      b.endedBy = 'expiry';
    }
  }
  return { unblockedByOperator };
}

/** Records a block the runner made (enforce) or would have made (shadow). */
export function recordBlock(state: DetectorState, planned: PlannedBlock, mode: 'enforce' | 'shadow', now: number): void {
  const hs: HostState = state.hosts[planned.host] ?? (state.hosts[planned.host] = {});
  hs.lastBlock = { itemId: planned.itemId, start: now, end: planned.end, level: planned.level, mode };
  hs.countAfter = spentUntil(state, planned.host, now);
}

/** Backoff: a host blocked again within as long as its last block lasted gets twice as long, up to the maximum. */
export function nextBlock(last: AutoBlock | undefined, now: number, s: Pick<DecideSettings, 'blockDurationMs' | 'maxBlockDurationMs'>): { level: number; durationMs: number } {
  let level = 0;
  if (last && last.endedAt !== undefined && now - last.endedAt <= Math.max(0, last.end - last.start)) level = last.level + 1;
  const durationMs = Math.min(s.maxBlockDurationMs, s.blockDurationMs * 2 ** Math.min(level, 30));
  // Once at the maximum, the level stops growing (it only says "how many doublings").
  while (level > 0 && s.blockDurationMs * 2 ** (level - 1) >= s.maxBlockDurationMs) level--;
  return { level, durationMs };
}

// ---- decide ---------------------------------------------------------------------------------------

export type Decision =
  | 'block' // enforce: an item is added now
  | 'would-block' // shadow: what enforce would do now
  | 'blocked' // an item (ours or anyone's) is in effect
  | 'shadow-blocked' // shadow: our would-be block is still running
  | 'watching' // below the threshold
  | 'job-fault' // enough incidents, but they are the job's fault
  | 'cap' // enough incidents, refused: the automatic-block cap is reached
  | 'operator-unblock' // enough incidents, but an operator lifted our block for them
  | 'evacuate'; // YARN is decommissioning the node: evacuated ahead of YARN's timeout

export type SuppressReason = 'job-fault' | 'cap' | 'operator-unblock';

export interface IncidentView {
  at: number;
  status: 'counted' | 'job-fault' | 'forgiven' | 'consumed';
  sources: string[];
  containerIds: string[];
  summaries: string[];
}

export interface PlannedBlock {
  host: string;
  itemId: string;
  action: BlockAction;
  durationMs: number;
  end: number;
  level: number;
  cause: string;
  /** Counts against the automatic-block cap (a decommissioning evacuation does not). */
  capped: boolean;
}

export interface HostReport {
  host: string;
  /** Incidents that count now (the score), against the threshold. */
  score: number;
  threshold: number;
  decision: Decision;
  why: string;
  incidents: IncidentView[];
  block?: PlannedBlock;
  lastBlock?: AutoBlock;
  health?: HealthObservation;
}

export interface DetectorReport {
  at: number;
  mode: DetectorMode;
  hosts: HostReport[];
  /** Blocks to make now (enforce) or that would be made (shadow). */
  blocks: PlannedBlock[];
  suppressed: { host: string; reason: SuppressReason }[];
  /** Signatures seen on at least job-fault-hosts distinct hosts within the window. */
  jobFaults: { signature: string; hosts: string[] }[];
  cap: { max: number; inUse: number; runningNodes: number | null };
}

export interface DecideInput {
  now: number;
  settings: DecideSettings;
  state: DetectorState;
  /** RUNNING nodes in the cluster now; null when the RM's node list could not be read. */
  runningNodes: number | null;
  /** Hosts with an item in effect (any author). */
  blocked: ReadonlyMap<string, EffectiveBlock>;
  /** Ids of this application (the scope of automatic blocks) — for the item id and cause only. */
  applicationId: string;
}

export const DETECTOR_PRINCIPAL = 'detector';

export function decide(input: DecideInput): DetectorReport {
  const { now, settings: s, state, blocked } = input;
  const from = now - s.windowMs;
  const live = state.incidents.filter((i) => latest(i) > from);

  // Job-fault contrast: one signature on many distinct hosts is the job, not the hosts.
  const hostsBySignature = new Map<string, Set<string>>();
  for (const inc of live) {
    for (const f of inc.failures) {
      if (f.at <= from) continue;
      let set = hostsBySignature.get(f.signature);
      if (!set) hostsBySignature.set(f.signature, (set = new Set()));
      set.add(inc.host);
    }
  }
  const jobFaultSignatures = new Set<string>();
  const jobFaults: { signature: string; hosts: string[] }[] = [];
  for (const [sig, hosts] of hostsBySignature) {
    if (hosts.size >= s.jobFaultHosts) {
      jobFaultSignatures.add(sig);
      jobFaults.push({ signature: sig, hosts: [...hosts].sort() });
    }
  }
  jobFaults.sort((a, b) => b.hosts.length - a.hosts.length || a.signature.localeCompare(b.signature));

  const byHost = new Map<string, Incident[]>();
  for (const inc of live) {
    const list = byHost.get(inc.host);
    if (list) list.push(inc);
    else byHost.set(inc.host, [inc]);
  }
  const hostNames = new Set<string>([...byHost.keys(), ...Object.keys(state.health)]);
  for (const [h, hs] of Object.entries(state.hosts)) if (hs.lastBlock && hs.lastBlock.endedAt === undefined) hostNames.add(h);

  // Cap: automatic blocks in effect now (enforced ones in the store; shadow ones in our state).
  const mode = s.mode;
  let inUse = 0;
  for (const [h, hs] of Object.entries(state.hosts)) {
    const b = hs.lastBlock;
    if (!b || b.endedAt !== undefined || b.end <= now) continue;
    if (b.mode === 'enforce' ? blocked.has(h) : mode === 'shadow') inUse++;
  }
  const running = input.runningNodes;
  const max = running === null ? 0 : Math.floor(s.maxBlockedFraction * running);

  const reports: HostReport[] = [];
  const candidates: { report: HostReport; incidents: Incident[]; counted: Incident[] }[] = [];
  for (const host of [...hostNames].sort()) {
    const hs = state.hosts[host] ?? {};
    const incidents = (byHost.get(host) ?? []).slice().sort((a, b) => a.at - b.at);
    const countAfter = hs.countAfter ?? -Infinity;
    // The last thing that spent the incidents was an operator's unblock (no block of ours since).
    const spentByOperator = hs.operatorUnblockedAt !== undefined && (hs.lastBlock?.start ?? -Infinity) <= hs.operatorUnblockedAt;
    const views: IncidentView[] = [];
    const counted: Incident[] = [];
    let jobFault = 0;
    let forgiven = 0;
    for (const inc of incidents) {
      const isJobFault = inc.failures.every((f) => jobFaultSignatures.has(f.signature));
      let status: IncidentView['status'];
      if (latest(inc) <= countAfter) {
        status = spentByOperator ? 'forgiven' : 'consumed';
        if (status === 'forgiven' && !isJobFault) forgiven++;
      } else if (isJobFault) {
        status = 'job-fault';
        jobFault++;
      } else {
        status = 'counted';
        counted.push(inc);
      }
      views.push({ at: inc.at, status, sources: [...inc.sources], containerIds: [...inc.containerIds], summaries: [...new Set(inc.failures.map((f) => f.summary))] });
    }
    const report: HostReport = { host, score: counted.length, threshold: s.failuresPerHost, decision: 'watching', why: '', incidents: views };
    if (hs.lastBlock) report.lastBlock = { ...hs.lastBlock };
    const health = state.health[host];
    if (health) report.health = { ...health };
    reports.push(report);

    const win = shortDuration(s.windowMs);
    const b = blocked.get(host);
    const shadowActive = mode === 'shadow' && hs.lastBlock?.mode === 'shadow' && hs.lastBlock.endedAt === undefined && hs.lastBlock.end > now;
    if (b) {
      report.decision = 'blocked';
      report.why = `blocked by ${b.by} until ${isoOrNever(b.end)}; failures on a blocked host are not counted against it again`;
      continue;
    }
    if (shadowActive) {
      report.decision = 'shadow-blocked';
      report.why = `shadow mode: would be blocked until ${isoOrNever(hs.lastBlock!.end)}`;
      continue;
    }
    if (s.evacuateDecommissioning && health?.state === 'DECOMMISSIONING' && hs.evacuatedAt === undefined) {
      const planned: PlannedBlock = {
        host,
        itemId: host,
        action: EVACUATE,
        durationMs: s.blockDurationMs,
        end: now + s.blockDurationMs,
        level: 0,
        capped: false,
        cause: clean(`auto: ${host} is DECOMMISSIONING in YARN${health.healthReport ? ` (${health.healthReport.slice(0, 200)})` : ''}; evacuated ahead of YARN's decommissioning timeout for ${shortDuration(s.blockDurationMs)}`),
      };
      report.decision = mode === 'enforce' ? 'evacuate' : 'would-block';
      report.why = 'YARN is decommissioning this node: its task managers move ahead of YARN\'s timeout';
      report.block = planned;
      continue;
    }
    if (counted.length >= s.failuresPerHost) {
      candidates.push({ report, incidents, counted });
      continue;
    }
    if (forgiven > 0 && counted.length + forgiven >= s.failuresPerHost) {
      report.decision = 'operator-unblock';
      report.why = `${counted.length + forgiven} failures in ${win}, but an operator lifted the automatic block at ${isoOrNever(hs.operatorUnblockedAt!)}; those incidents are not counted again`;
      continue;
    }
    if (jobFault > 0 && counted.length + jobFault >= s.failuresPerHost) {
      report.decision = 'job-fault';
      report.why = `${counted.length + jobFault} failures in ${win}, but ${jobFault} of them are failures seen on ≥ ${s.jobFaultHosts} hosts (the job's fault, not this host's)`;
      continue;
    }
    report.why = `${counted.length} of ${s.failuresPerHost} failures in ${win}${jobFault ? ` (+${jobFault} job-wide, not counted)` : ''}`;
  }

  // Most-failing first; the cap refuses the rest.
  candidates.sort((a, b) => b.counted.length - a.counted.length || a.counted[0].at - b.counted[0].at || a.report.host.localeCompare(b.report.host));
  const blocks: PlannedBlock[] = [];
  const suppressed: { host: string; reason: SuppressReason }[] = [];
  for (const c of candidates) {
    const host = c.report.host;
    const win = shortDuration(s.windowMs);
    if (inUse >= max) {
      c.report.decision = 'cap';
      c.report.why =
        running === null
          ? `${c.counted.length} failures in ${win}, but the RM's node list could not be read: no automatic block without knowing the cluster's size`
          : `${c.counted.length} failures in ${win}, but ${inUse} of at most ${max} automatic blocks (${s.maxBlockedFraction} of ${running} RUNNING nodes) are in use: refused`;
      suppressed.push({ host, reason: 'cap' });
      continue;
    }
    const { level, durationMs } = nextBlock(state.hosts[host]?.lastBlock, now, s);
    const planned: PlannedBlock = { host, itemId: host, action: s.action, durationMs, end: now + durationMs, level, capped: true, cause: explain(host, c.counted, s, durationMs, level) };
    c.report.block = planned;
    c.report.decision = mode === 'enforce' ? 'block' : 'would-block';
    c.report.why = `${c.counted.length} failures in ${win} ≥ ${s.failuresPerHost}: block for ${shortDuration(durationMs)}${level > 0 ? ` (blocked again soon after the last block: ×${2 ** level})` : ''}`;
    blocks.push(planned);
    inUse++;
  }
  for (const r of reports) {
    if (r.decision === 'job-fault') suppressed.push({ host: r.host, reason: 'job-fault' });
    if (r.decision === 'operator-unblock') suppressed.push({ host: r.host, reason: 'operator-unblock' });
    if (r.decision === 'evacuate' || (r.decision === 'would-block' && r.block && !r.block.capped)) blocks.push(r.block!);
  }
  return { at: now, mode, hosts: reports, blocks, suppressed, jobFaults, cap: { max, inUse, runningNodes: running } };
}

/**
 * The cause of an automatic block: rule, count over window, what failed how often, the block's
 * length, and up to five pieces of evidence (time, source, failure, container). One line, no
 * control characters, within the item's cause limit.
 */
export function explain(host: string, counted: readonly Incident[], s: Pick<DecideSettings, 'windowMs'>, durationMs: number, level: number): string {
  const tally = new Map<string, number>();
  for (const inc of counted) for (const sum of new Set(inc.failures.map((f) => f.summary))) tally.set(sum, (tally.get(sum) ?? 0) + 1);
  const what = [...tally.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${trim(k, 100)} ×${n}`)
    .join(', ');
  const head = `auto: ${counted.length} failures in ${shortDuration(s.windowMs)} on ${host} (${what}); blocked for ${shortDuration(durationMs)}${level > 0 ? ` (repeat offender ×${2 ** level})` : ''}`;
  const evidence = counted
    .flatMap((inc) => inc.failures.slice(0, 1))
    .slice(-5)
    .map((f) => `${new Date(f.at).toISOString().replace(/\.\d{3}Z$/, 'Z')} ${f.source}${f.job ? ` job ${f.job.slice(0, 8)}` : ''} ${trim(f.summary, 80)}${f.containerId ? ` ${f.containerId}` : ''}`);
  let text = clean(`${head}; evidence: ${evidence.join(' | ')}`);
  while (text.length > 1000 && evidence.length > 1) {
    evidence.shift();
    text = clean(`${head}; evidence: ${evidence.join(' | ')}`);
  }
  return text.length > 1000 ? `${text.slice(0, 999)}…` : text;
}

const trim = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/* eslint-disable-next-line no-control-regex */
const clean = (s: string): string => s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
const isoOrNever = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : 'never');

/** "10m", "1h", "90s", "1h30m". */
export function shortDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms >= 86_400_000) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms >= 3_600_000) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms >= 60_000) return ms >= 3_600_000 ? `${Math.floor(ms / 3_600_000)}h${(ms % 3_600_000) / 60_000}m` : `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
