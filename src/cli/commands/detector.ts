/**
 * `blocklist detector`: the failure detector's view (GET /detector) as a table — per host the
 * incidents that count, the decision and why — with the mode, the automatic-block cap, job-wide
 * failures and each source's health above it.
 */
import { Command } from 'commander';
import type { DetectorView } from '../../detect/detector';
import type { HostReport } from '../../detect/decide';
import { CliError, runAction } from '../errors';
import { EXIT } from '../exit-codes';
import { Paint, clip, isoTime, relative, table, toJson, toYaml } from '../format';
import { CommonFlags, addCommonOptions, painter, withClient, write } from './common';

interface DetectorFlags extends CommonFlags {
  all?: boolean;
}

const minutes = (ms: number): string => (ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1000}s`);

function decisionCell(h: HostReport, p: Paint): string {
  switch (h.decision) {
    case 'block':
    case 'evacuate':
      return p.red(h.decision.toUpperCase());
    case 'would-block':
      return p.yellow('WOULD BLOCK');
    case 'blocked':
    case 'shadow-blocked':
      return p.red(h.decision);
    case 'job-fault':
    case 'cap':
    case 'operator-unblock':
      return p.cyan(`not blocked: ${h.decision}`);
    default:
      return p.dim(h.decision);
  }
}

const STATUS_WORDS: Record<HostReport['incidents'][number]['status'], string> = { counted: 'counting', consumed: 'spent by a block', forgiven: 'forgiven by an unblock', 'job-fault': "the job's fault" };

/**
 * The incidents of a host, said by what they count for: a block spends the incidents that made
 * it, so a host just blocked counts 0 towards the next block while its 3 incidents are still shown.
 */
export function incidentsCell(h: Pick<HostReport, 'incidents'>): string {
  const by = new Map<string, number>();
  for (const i of h.incidents) by.set(i.status, (by.get(i.status) ?? 0) + 1);
  const parts = (Object.keys(STATUS_WORDS) as (keyof typeof STATUS_WORDS)[]).filter((s) => by.has(s)).map((s) => `${by.get(s)} ${STATUS_WORDS[s]}`);
  return parts.length ? `${h.incidents.length}: ${parts.join(', ')}` : '0';
}

export function detectorText(v: DetectorView, now: number, p: Paint, all: boolean): string {
  const s = v.settings;
  const lines: string[] = [];
  lines.push(`${p.bold('mode')} ${v.mode === 'enforce' ? p.red(v.mode) : p.yellow(v.mode)}   application ${v.applicationId ?? '(not resolved yet)'}   last pass ${v.lastPassAt ? relative(v.lastPassAt, now) : 'never'}${v.persistent ? '' : p.yellow('   state NOT persisted (the store keeps no records)')}`);
  lines.push(`rule: ${s.failuresPerHost} incidents in ${minutes(s.windowMs)} block a host for ${minutes(s.blockDurationMs)} (doubling to ${minutes(s.maxBlockDurationMs)}); the same failure on ≥ ${s.jobFaultHosts} hosts blames none; at most ${s.maxBlockedFraction} of RUNNING nodes`);
  // Which sidecar of the job runs the detector (an older sidecar's answer has no runner).
  const run = v.runner as DetectorView['runner'] | undefined;
  if (run?.role === 'standby') lines.push(p.yellow(`standing by: ${run.holder?.member ?? 'another sidecar'} runs this job's detector${run.holder ? ` (lease until ${new Date(run.holder.until).toISOString()})` : ''}`));
  else if (run?.role === 'runner') lines.push(`runs this job's detector as ${run.member}${run.holder ? ` (lease until ${new Date(run.holder.until).toISOString()})` : ''}`);
  if (v.lastError) lines.push(p.red(`last pass failed: ${v.lastError}`));
  for (const src of v.sources) {
    const state = src.lastError ? p.red(`failing: ${src.lastError}`) : src.lastPollAt ? `read ${relative(src.lastPollAt, now)}` : 'not read yet';
    lines.push(`source ${src.name}: ${state}; failures ${src.failures}, unattributed ${src.unattributed}${src.missed ? p.yellow(`, missed ${src.missed}`) : ''}`);
  }
  const r = v.report;
  if (!r) return lines.join('\n') + '\n';
  lines.push(`cap: ${r.cap.inUse} of ${r.cap.max} automatic blocks in use (${r.cap.runningNodes ?? '?'} RUNNING nodes)`);
  for (const j of r.jobFaults) lines.push(p.cyan(`job-wide: "${clip(j.signature, 80)}" on ${j.hosts.length} hosts — nobody blamed`));
  const hosts = all ? r.hosts : r.hosts.filter((h) => h.decision !== 'watching' || h.score > 0 || h.incidents.length > 0 || h.health);
  lines.push('');
  if (!hosts.length) {
    lines.push('no host has failed within the window');
    return lines.join('\n') + '\n';
  }
  const rows = hosts.map((h) => [
    h.host,
    `${h.score} of ${h.threshold}`,
    incidentsCell(h),
    decisionCell(h, p),
    h.health ? h.health.state : '',
    h.lastBlock ? `${h.lastBlock.mode} until ${isoTime(h.lastBlock.endedAt ?? h.lastBlock.end)}${h.lastBlock.endedBy ? ` (${h.lastBlock.endedBy})` : ''}` : '',
    clip(h.block ? h.block.cause : h.why, 140),
  ]);
  return lines.join('\n') + '\n' + table(['HOST', 'TOWARD A BLOCK', 'INCIDENTS', 'DECISION', 'YARN', 'LAST AUTO BLOCK', 'WHY'], rows, p);
}

export function register(program: Command): void {
  const cmd = program
    .command('detector')
    .description("the failure detector: each host's incidents, score, decision and why (shadow mode too)")
    .option('--all', 'list every host the detector knows, not only those with incidents or a decision');
  addCommonOptions(cmd).action(
    runAction(async (flags: DetectorFlags) => {
      await withClient(flags, async (client) => {
        if (client.transport.direct) throw new CliError('the detector runs inside the sidecar; point the CLI at one (--server URL or BLOCKLIST_SERVER)', EXIT.USAGE);
        const v = await client.detector();
        if (flags.output === 'json') return write(toJson(v));
        if (flags.output === 'yaml') return write(toYaml(v));
        if (v.mode === 'off') return write(`the detector is off${'why' in v && v.why ? `: ${v.why}` : ''}\n`);
        write(detectorText(v as DetectorView, Date.now(), painter(flags), !!flags.all));
      });
    }),
  );
}
