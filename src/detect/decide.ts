/**
 * The detector's decision, pure: no I/O, time passed in. The runner (detector.ts) reads the
 * sources, the store and YARN, keeps the incidents (incidents.ts) and its own blocks
 * (auto-blocks.ts) up to date, and hands the result to `decide`: per host, incidents within the
 * window minus job faults (the same failure on `jobFaultHosts` distinct hosts blames none of
 * them), against `failuresPerHost`; blocks for `blockDuration`, doubled for a host blocked again
 * soon after its last block ended, up to `maxBlockDuration`; at most `maxBlockedFraction` of
 * RUNNING nodes blocked automatically. The words of each decision are explain.ts.
 */
import { BlockAction, EVACUATE } from '../model/item';
import { AutoBlock, DetectorMode, DetectorState } from './state';
import { HealthObservation, Incident } from './types';
import { latest } from './incidents';
import { DETECTOR_PRINCIPAL, EffectiveBlock, holdsCap, nextBlock } from './auto-blocks';
import { clean, explain, isoOrNever, shortDuration } from './explain';
import { reservationLive } from './reservation';

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

export const DEFAULT_DECIDE_SETTINGS: Readonly<DecideSettings> = {
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

export type Decision =
  | 'block' // enforce: an item is added now
  | 'would-block' // shadow: what enforce would do now
  | 'blocked' // an item (ours or anyone's) is in effect
  | 'shadow-blocked' // shadow: our would-be block is still running
  | 'watching' // below the threshold
  | 'job-fault' // enough incidents, but they are the job's fault
  | 'cap' // enough incidents, refused: the automatic-block cap is reached
  | 'operator-unblock' // enough incidents, but an operator lifted our block for them
  | 'evacuate' // YARN is decommissioning the node: evacuated ahead of YARN's timeout
  | 'refused'; // enough incidents, but the store refused joining the other jobs' item as it is now

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
  /**
   * Another job's block holds this host's item (ids are host names: one item per host): the block
   * joins it with FLIP-224's merge (its scope gains this job, the later end and EVACUATE win)
   * instead of being refused as "already blocked", which would leave this job on the host.
   */
  join: boolean;
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
  /** Hosts whose item is in effect for other jobs only (its scope does not name this one). */
  heldByOtherJobs?: ReadonlySet<string>;
  /**
   * Hosts whose join the store refused for their item as it is now (e.g. it already names the most
   * applications a scope holds), with the store's words: not tried again — every pass of every
   * such job was a refused write and an audit record — until the item changes.
   */
  refusedJoins?: ReadonlyMap<string, string>;
  /** Ids of this application (the scope of automatic blocks) — for the item id and cause only. */
  applicationId: string;
}

export { DETECTOR_PRINCIPAL };

export function decide(input: DecideInput): DetectorReport {
  const { now, settings: s, state, blocked } = input;
  const from = now - s.windowMs;
  const live = state.incidents.filter((i) => latest(i) > from);
  const faults = jobFaultsIn(live, from, s.jobFaultHosts);
  const byHost = new Map<string, Incident[]>();
  for (const inc of live) {
    const list = byHost.get(inc.host);
    if (list) list.push(inc);
    else byHost.set(inc.host, [inc]);
  }
  const hostNames = new Set<string>([...byHost.keys(), ...Object.keys(state.health)]);
  for (const [h, hs] of Object.entries(state.hosts)) if (hs.lastBlock && hs.lastBlock.endedAt === undefined) hostNames.add(h);
  // Cap: automatic blocks in effect now (enforced ones in the store; shadow ones in our state).
  let inUse = 0;
  for (const [h, hs] of Object.entries(state.hosts)) if (holdsCap(hs.lastBlock, blocked.get(h), s.mode, now)) inUse++;
  const cap = { max: input.runningNodes === null ? 0 : Math.floor(s.maxBlockedFraction * input.runningNodes), inUse, runningNodes: input.runningNodes };
  const reports: HostReport[] = [];
  const candidates: Candidate[] = [];
  for (const host of [...hostNames].sort()) {
    const tally = tallyIncidents(host, byHost.get(host) ?? [], state, faults.signatures);
    const report: HostReport = { host, score: tally.counted.length, threshold: s.failuresPerHost, decision: 'watching', why: '', incidents: tally.views };
    const hs = state.hosts[host] ?? {};
    if (hs.lastBlock) report.lastBlock = { ...hs.lastBlock };
    const health = state.health[host];
    if (health) report.health = { ...health };
    reports.push(report);
    if (judgeHost(report, tally, input) === 'candidate') candidates.push({ report, counted: tally.counted });
  }
  const blocks = blocksWithinCap(candidates, cap, input);
  const suppressed: DetectorReport['suppressed'] = candidates.filter((c) => c.report.decision === 'cap').map((c) => ({ host: c.report.host, reason: 'cap' }));
  for (const r of reports) {
    if (r.decision === 'job-fault') suppressed.push({ host: r.host, reason: 'job-fault' });
    if (r.decision === 'operator-unblock') suppressed.push({ host: r.host, reason: 'operator-unblock' });
    if (r.decision === 'evacuate' || (r.decision === 'would-block' && r.block && !r.block.capped)) blocks.push(r.block!);
  }
  return { at: now, mode: s.mode, hosts: reports, blocks, suppressed, jobFaults: faults.jobFaults, cap };
}

/** A host with enough counted incidents: blocked unless the cap or a refused join says no. */
interface Candidate {
  report: HostReport;
  counted: Incident[];
}

/** Job-fault contrast: one signature on many distinct hosts is the job, not the hosts. */
function jobFaultsIn(live: readonly Incident[], from: number, jobFaultHosts: number): { signatures: Set<string>; jobFaults: { signature: string; hosts: string[] }[] } {
  const hostsBySignature = new Map<string, Set<string>>();
  for (const inc of live) {
    for (const f of inc.failures) {
      if (f.at <= from) continue;
      let set = hostsBySignature.get(f.signature);
      if (!set) hostsBySignature.set(f.signature, (set = new Set()));
      set.add(inc.host);
    }
  }
  const signatures = new Set<string>();
  const jobFaults: { signature: string; hosts: string[] }[] = [];
  for (const [sig, hosts] of hostsBySignature) {
    if (hosts.size >= jobFaultHosts) {
      signatures.add(sig);
      jobFaults.push({ signature: sig, hosts: [...hosts].sort() });
    }
  }
  jobFaults.sort((a, b) => b.hosts.length - a.hosts.length || a.signature.localeCompare(b.signature));
  return { signatures, jobFaults };
}

/** One host's incidents in the window, each with its status: counted, the job's fault, or spent by a block (forgiven when an operator lifted it). */
interface Tally {
  views: IncidentView[];
  counted: Incident[];
  jobFault: number;
  forgiven: number;
}

function tallyIncidents(host: string, inWindow: readonly Incident[], state: DetectorState, jobFaultSignatures: ReadonlySet<string>): Tally {
  const hs = state.hosts[host] ?? {};
  const countAfter = hs.countAfter ?? -Infinity;
  // The last thing that spent the incidents was an operator's unblock (no block of ours since).
  const spentByOperator = hs.operatorUnblockedAt !== undefined && (hs.lastBlock?.start ?? -Infinity) <= hs.operatorUnblockedAt;
  const t: Tally = { views: [], counted: [], jobFault: 0, forgiven: 0 };
  for (const inc of inWindow.slice().sort((a, b) => a.at - b.at)) {
    const isJobFault = inc.failures.every((f) => jobFaultSignatures.has(f.signature));
    let status: IncidentView['status'];
    if (latest(inc) <= countAfter) {
      status = spentByOperator ? 'forgiven' : 'consumed';
      if (status === 'forgiven' && !isJobFault) t.forgiven++;
    } else if (isJobFault) {
      status = 'job-fault';
      t.jobFault++;
    } else {
      status = 'counted';
      t.counted.push(inc);
    }
    t.views.push({ at: inc.at, status, sources: [...inc.sources], containerIds: [...inc.containerIds], summaries: [...new Set(inc.failures.map((f) => f.summary))] });
  }
  return t;
}

/** Sets the host's decision and why, unless it is a candidate for a block (then the cap decides). */
function judgeHost(report: HostReport, tally: Tally, input: DecideInput): 'decided' | 'candidate' {
  const { now, settings: s, state } = input;
  const host = report.host;
  const hs = state.hosts[host] ?? {};
  const health = state.health[host];
  const win = shortDuration(s.windowMs);
  const counted = tally.counted.length;
  const b = input.blocked.get(host);
  const decided = (decision: Decision, why: string): 'decided' => {
    report.decision = decision;
    report.why = why;
    return 'decided';
  };
  if (b) return decided('blocked', `blocked by ${b.by} until ${isoOrNever(b.end)}; failures on a blocked host are not counted against it again`);
  // Reserved by a sidecar of this job whose item is not in the store yet: it is being blocked.
  if (hs.lastBlock && reservationLive(hs.lastBlock, now)) return decided('blocked', `being blocked by a sidecar of this job (reserved at ${isoOrNever(hs.lastBlock.start)}, until ${isoOrNever(hs.lastBlock.end)})`);
  if (s.mode === 'shadow' && hs.lastBlock?.mode === 'shadow' && hs.lastBlock.endedAt === undefined && hs.lastBlock.end > now) return decided('shadow-blocked', `shadow mode: would be blocked until ${isoOrNever(hs.lastBlock.end)}`);
  if (s.evacuateDecommissioning && health?.state === 'DECOMMISSIONING' && hs.evacuatedAt === undefined) {
    report.block = decommissionEvacuation(host, health, input);
    return decided(s.mode === 'enforce' ? 'evacuate' : 'would-block', "YARN is decommissioning this node: its task managers move ahead of YARN's timeout");
  }
  if (counted >= s.failuresPerHost) return 'candidate';
  if (tally.forgiven > 0 && counted + tally.forgiven >= s.failuresPerHost) return decided('operator-unblock', `${counted + tally.forgiven} failures in ${win}, but an operator lifted the automatic block at ${isoOrNever(hs.operatorUnblockedAt!)}; those incidents are not counted again`);
  if (tally.jobFault > 0 && counted + tally.jobFault >= s.failuresPerHost) return decided('job-fault', `${counted + tally.jobFault} failures in ${win}, but ${tally.jobFault} of them are failures seen on ≥ ${s.jobFaultHosts} hosts (the job's fault, not this host's)`);
  return decided('watching', `${counted} of ${s.failuresPerHost} failures in ${win}${tally.jobFault ? ` (+${tally.jobFault} job-wide, not counted)` : ''}`);
}

/** A node YARN is decommissioning, evacuated ahead of YARN's own timeout (not counted against the cap). */
function decommissionEvacuation(host: string, health: HealthObservation, input: DecideInput): PlannedBlock {
  const s = input.settings;
  return {
    host,
    itemId: host,
    action: EVACUATE,
    durationMs: s.blockDurationMs,
    end: input.now + s.blockDurationMs,
    level: 0,
    capped: false,
    join: input.heldByOtherJobs?.has(host) ?? false,
    cause: clean(`auto: ${host} is DECOMMISSIONING in YARN${health.healthReport ? ` (${health.healthReport.slice(0, 200)})` : ''}; evacuated ahead of YARN's decommissioning timeout for ${shortDuration(s.blockDurationMs)}`),
  };
}

/** The candidates' blocks, most-failing first, while the cap has room (`cap.inUse` counts them); the rest refused. */
function blocksWithinCap(candidates: Candidate[], cap: DetectorReport['cap'], input: DecideInput): PlannedBlock[] {
  const { now, settings: s, state } = input;
  const win = shortDuration(s.windowMs);
  candidates.sort((a, b) => b.counted.length - a.counted.length || a.counted[0].at - b.counted[0].at || a.report.host.localeCompare(b.report.host));
  const blocks: PlannedBlock[] = [];
  for (const c of candidates) {
    const host = c.report.host;
    const n = c.counted.length;
    const refusal = input.heldByOtherJobs?.has(host) ? input.refusedJoins?.get(host) : undefined;
    if (refusal !== undefined) {
      c.report.decision = 'refused';
      c.report.why = `${n} failures in ${win} ≥ ${s.failuresPerHost}, but joining the block other jobs hold on it was refused (${refusal}); not tried again until that item changes`;
      continue;
    }
    if (cap.inUse >= cap.max) {
      c.report.decision = 'cap';
      c.report.why =
        cap.runningNodes === null
          ? `${n} failures in ${win}, but the RM's node list could not be read: no automatic block without knowing the cluster's size`
          : `${n} failures in ${win}, but ${cap.inUse} of at most ${cap.max} automatic blocks (${s.maxBlockedFraction} of ${cap.runningNodes} RUNNING nodes) are in use: refused`;
      continue;
    }
    const { level, durationMs } = nextBlock(state.hosts[host]?.lastBlock, now, s);
    const join = input.heldByOtherJobs?.has(host) ?? false;
    const planned: PlannedBlock = { host, itemId: host, action: s.action, durationMs, end: now + durationMs, level, capped: true, join, cause: explain(host, c.counted, s, durationMs, level) };
    c.report.block = planned;
    c.report.decision = s.mode === 'enforce' ? 'block' : 'would-block';
    c.report.why = `${n} failures in ${win} ≥ ${s.failuresPerHost}: block for ${shortDuration(durationMs)}${level > 0 ? ` (blocked again soon after the last block: ×${2 ** level})` : ''}${join ? '; joins the block other jobs hold on it' : ''}`;
    blocks.push(planned);
    cap.inUse++;
  }
  return blocks;
}
