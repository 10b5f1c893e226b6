/**
 * How items, dry-run effects, evacuations and the sidecar status read in a terminal. Pure: takes
 * the wire objects, `now` and a Paint, returns text. The commands only pick what to render.
 */
import { ApiItem, DryRunEffect, SidecarStatus, WireEvacuation, WireSync } from './client';
import { Paint, age, clip, isoTime, relative, shortAction, table, timeoutText, wireMs } from './format';
import { humanizeMs } from '../model/duration';

export function syncText(s: WireSync | undefined, p: Paint): string {
  if (!s) return p.dim('-');
  const st = s.state;
  const col = st === 'applied' || st === 'evacuated' ? p.green : st === 'pending' || st === 'evacuating' ? p.yellow : st === 'deferred' || st === 'unknown-host' ? p.red : p.dim;
  const ev = s.evacuation;
  const extra = ev && st === 'evacuating' ? ` (${ev.containers.length} left)` : '';
  return col(st + extra);
}

/**
 * The evacuation timeout as every view shows it. A BLOCK item can carry one (an exclude file's
 * <timeout>, or -g at import): it is kept, exported, and applies if the item is later merged into
 * an evacuation, so it is shown too — marked, since nothing is evacuated yet.
 */
export function evacuationTimeoutText(it: Pick<ApiItem, 'action' | 'evacuationTimeout'>): string | undefined {
  if (it.action === 'MARK_BLOCKED_AND_EVACUATE_TASKS') return timeoutText(it.evacuationTimeout);
  return it.evacuationTimeout === undefined ? undefined : `${timeoutText(it.evacuationTimeout)} (if evacuated)`;
}

/** A scope in the narrow table: `cluster`, one application id, or the first one and how many more. */
export function scopeText(scope: string): string {
  const apps = scope.split(',');
  return apps.length > 1 ? `${apps[0]},+${apps.length - 1}` : scope;
}

export function listTable(items: ApiItem[], now: number, p: Paint, wide: boolean): string {
  const header = wide
    ? ['ID', 'KIND', 'ACTION', 'SCOPE', 'CAUSE', 'SINCE', 'ENDS', 'EVAC-TIMEOUT', 'TASK MANAGERS', 'SYNC', 'CREATED BY', 'SOURCE', 'DETAIL']
    : ['ID', 'KIND', 'ACTION', 'SCOPE', 'CAUSE', 'SINCE', 'ENDS', 'TMS', 'SYNC'];
  const rows = items.map((it) => {
    const action = it.action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' ? p.yellow(shortAction(it.action)) : shortAction(it.action);
    const since = age(wireMs(it.startTimestamp), now);
    const ends = relative(wireMs(it.endTimestamp), now);
    const tms = it.taskManagers ?? [];
    if (wide) {
      return [
        it.id,
        it.kind,
        action,
        it.scope,
        it.cause,
        since,
        ends,
        evacuationTimeoutText(it) ?? '-',
        tms.length ? tms.join(',') : '-',
        syncText(it.sync, p),
        it.createdBy ? `${it.createdBy}@${it.createdFrom ?? '?'}` : '-',
        it.source ?? '-',
        it.sync?.detail ?? '',
      ];
    }
    return [clip(it.id, 48), it.kind === 'taskmanager' ? 'tm' : it.kind, action, scopeText(it.scope), clip(it.cause, 32), since, ends, String(tms.length), syncText(it.sync, p)];
  });
  return table(header, rows, p);
}

export function evacuationLine(ev: WireEvacuation, now: number, p: Paint): string {
  const left = `${ev.containers.length} container${ev.containers.length === 1 ? '' : 's'} left`;
  let deadline: string;
  if (ev.timeoutSeconds < 0 || ev.deadline === undefined) deadline = 'no deadline (waits forever)';
  else if (ev.phase === 'READY') deadline = 'done';
  else if (ev.deadline > now) deadline = `deadline in ${humanizeMs(ev.deadline - now)} (${isoTime(ev.deadline)})`;
  else deadline = p.red(`deadline passed ${humanizeMs(now - ev.deadline)} ago`);
  const released = ev.released.length ? `, ${ev.released.length} released` : '';
  const phase = ev.phase === 'READY' ? p.green(ev.phase) : ev.phase === 'TIMEOUT' ? p.red(ev.phase) : p.yellow(ev.phase);
  return `${phase}  ${left}${released}, ${deadline}`;
}

export function itemDetails(it: ApiItem, now: number, p: Paint): string {
  const start = wireMs(it.startTimestamp);
  const end = wireMs(it.endTimestamp);
  const rows: [string, string][] = [
    ['ID', p.bold(it.id)],
    ['Kind', it.kind],
    ['Action', it.action],
    ['Cause', it.cause],
    ['Scope', it.scope],
    ['Since', `${isoTime(start)} (${age(start, now)} ago)`],
    ['Ends', Number.isFinite(end) ? `${isoTime(end)} (${relative(end, now)})` : 'never (permanent)'],
  ];
  const evacuationTimeout = evacuationTimeoutText(it);
  if (evacuationTimeout) rows.push(['Evacuation timeout', evacuationTimeout]);
  rows.push(['Task managers', it.taskManagers && it.taskManagers.length ? it.taskManagers.join(', ') : '-']);
  if (it.createdBy) rows.push(['Created', `by ${it.createdBy} from ${it.createdFrom ?? '?'} at ${isoTime(wireMs(it.createdAt))}`]);
  rows.push(['Source', it.source ?? 'by hand']);
  if (it.updatedBy && it.updatedAt !== it.createdAt) rows.push(['Updated', `by ${it.updatedBy} from ${it.updatedFrom ?? '?'} at ${isoTime(wireMs(it.updatedAt))}`]);
  rows.push(['Sync', it.sync ? `${syncText(it.sync, p)}${it.sync.detail ? ` — ${it.sync.detail}` : ''}` : p.dim('unknown (no sync engine reports on it)')]);
  const ev = it.sync?.evacuation;
  if (ev) {
    rows.push(['Evacuation', evacuationLine(ev, now, p)]);
    if (ev.containers.length) rows.push(['  containers', ev.containers.join(', ')]);
    if (ev.released.length) rows.push(['  released', ev.released.join(', ')]);
  }
  const w = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${(k + ':').padEnd(w + 1)}${v}`).join('\n') + '\n';
}

export function effectLines(e: DryRunEffect | undefined, p: Paint): string {
  if (!e) return '';
  const list = (xs: string[]) => (xs.length ? xs.join(', ') : p.dim('none'));
  return (
    `  YARN blacklist additions: ${list(e.blacklistAdditions)}\n` +
    `  YARN blacklist removals:  ${list(e.blacklistRemovals)}\n` +
    `  containers to release:    ${e.containersUnknown ? p.yellow(`unknown (${e.containersUnknown})`) : list(e.containersToRelease)}\n` +
    (e.deferred?.length ? `  deferred by the safety cap (stored, not blacklisted): ${e.deferred.join(', ')}\n` : '')
  );
}

/** One-line summary of an item for block/unblock/import messages. */
export function itemSummary(it: ApiItem, now: number): string {
  const end = wireMs(it.endTimestamp);
  const until = Number.isFinite(end) ? `until ${isoTime(end)} (${relative(end, now)})` : 'permanently';
  const evac = it.action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' ? `, evacuation timeout ${timeoutText(it.evacuationTimeout)}` : '';
  const scope = it.scope && it.scope !== 'cluster' ? `, scope ${it.scope}` : '';
  return `${it.id} ${shortAction(it.action)} ${until}${evac}${scope}, cause "${it.cause}"`;
}

export function statusText(s: SidecarStatus, where: string, now: number, p: Paint): string {
  const out: string[] = [];
  const kv = (k: string, v: string) => out.push(`${(k + ':').padEnd(13)}${v}`);
  kv('Sidecar', where);
  kv('Enforcing', s.enabled ? p.green('yes') : p.red('no (cluster.resource-blocklist.enabled: false)'));
  kv('Application', s.applicationId ? `${s.applicationId}${s.appAttemptId ? ` (attempt ${s.appAttemptId})` : ''}` : p.dim('unknown'));
  kv('Last sync', s.lastSuccessfulSync ? `${isoTime(s.lastSuccessfulSync)} (${age(s.lastSuccessfulSync, now)} ago)` : p.dim('never'));
  if (s.lastError) kv('Last error', p.red(s.lastError));
  kv('Store', s.storeDegraded ? p.red('DEGRADED: unreachable, enforcing the last good snapshot') : p.green('ok'));
  const d = new Set(s.blacklist.desired);
  const a = new Set(s.blacklist.actual);
  const plus = [...d].filter((x) => !a.has(x));
  const minus = [...a].filter((x) => !d.has(x));
  const inSync = plus.length === 0 && minus.length === 0;
  kv('Blacklist', `desired ${d.size}, in YARN ${a.size}${inSync ? p.green(' (in sync)') : p.yellow(` (differs: ${[...plus.map((x) => '+' + x), ...minus.map((x) => '-' + x)].join(' ')})`)}`);
  const pend = s.pending;
  const pendN = pend.additions.length + pend.removals.length + pend.releases.length;
  kv('Pending', pendN ? p.yellow(`${pend.additions.length} additions, ${pend.removals.length} removals, ${pend.releases.length} releases`) : 'nothing');
  kv('Deferred', s.deferred.length ? p.red(`${s.deferred.join(', ')} (over max-blocked-fraction)`) : 'none');
  if (s.evacuations.length) {
    out.push('', p.bold('Evacuations'));
    const rows = s.evacuations.map((ev) => [ev.node, ev.phase, String(ev.containers.length), String(ev.released.length), ev.timeoutSeconds < 0 || ev.deadline === undefined ? 'none' : relative(ev.deadline, now), isoTime(ev.since)]);
    out.push(table(['NODE', 'PHASE', 'LEFT', 'RELEASED', 'DEADLINE', 'SINCE'], rows, p).trimEnd());
  } else {
    kv('Evacuations', 'none');
  }
  return out.join('\n') + '\n';
}
