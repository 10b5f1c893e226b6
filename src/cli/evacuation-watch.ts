/**
 * `block --evacuate --wait`: follows one node's evacuation until it is empty, like `kubectl drain`
 * (blocks until done or --timeout) and `nomad node drain -monitor` (prints progress as it goes).
 * On a terminal one status line is redrawn in place (phase, containers left, deadline countdown,
 * why it waits); in a pipe or log a line is printed only when something other than the countdown
 * changes.
 *
 * Ends:
 *  - READY / evacuated: exit 0, whatever way the task managers went. A release at the deadline —
 *    after a checkpoint (RELEASING) or without one (TIMEOUT) — is Flink's normal path: the job
 *    fails over and runs on elsewhere. The last line says how it went;
 *  - --wait-timeout ran out: exit 6, the evacuation carries on in the sidecar. Without one the
 *    wait is bounded all the same: until the evacuation's deadline and 5 minutes more, or 30
 *    minutes while no deadline is known (waiting forever, still pending) — no wait runs unbounded;
 *  - the safety cap holds the block back (deferred): exit 7, no evacuation starts until it goes on;
 *  - the item disappeared (unblocked or expired): exit 4.
 */
import { BlocklistClient, ApiItem, WireEvacuation } from './client';
import { CliError } from './errors';
import { EXIT, ExitCode } from './exit-codes';
import { Paint } from './format';
import { evacuationLine } from './render';
import { humanizeMs } from '../model/duration';

export interface FollowOptions {
  paint: Paint;
  interactive: boolean;
  intervalMs: number;
  waitTimeoutMs?: number;
  out: { write(s: string): unknown };
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export interface FollowResult {
  code: ExitCode;
  message: string;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** How many polls without any sync report before concluding nobody is evacuating. */
const NO_SYNC_POLLS = 5;

/** The wait's bound without --wait-timeout: past a known deadline by this much, or this long without one. */
export const WAIT_PAST_DEADLINE_MS = 5 * 60_000;
export const WAIT_WITHOUT_DEADLINE_MS = 30 * 60_000;

/** When a wait without --wait-timeout gives up: the evacuation's deadline (as last reported) and 5 min, else 30 min after the start. */
function defaultGiveUp(started: number, deadline: number | undefined): number {
  return deadline !== undefined && Number.isFinite(deadline) ? Math.max(deadline, started) + WAIT_PAST_DEADLINE_MS : started + WAIT_WITHOUT_DEADLINE_MS;
}

/** What one reading of the item says: an end of the wait, or a line to show (`stable`: what matters of it, the countdown aside). */
type Judgement = { end: FollowResult; line?: string; stable?: string } | { end?: undefined; line: string; stable: string };

function judge(id: string, item: ApiItem, t: number, started: number, elapsed: string, o: { paint: Paint; interactive: boolean }, last: WireEvacuation | undefined): Judgement {
  const p = o.paint;
  const sync = item.sync;
  const ev = sync?.evacuation;
  if (!sync) return { line: `${id}  ${p.dim('waiting for the sidecar to report on it')} ${elapsed}`, stable: 'nosync' };
  if (sync.state === 'deferred') return { end: { code: EXIT.DEFERRED, message: `${id} is deferred: stored, but not on YARN's blacklist, so no evacuation starts: ${sync.detail ?? 'held back by the safety cap'}` } };
  if (sync.state === 'disabled' || sync.state === 'not-applicable') return { end: { code: EXIT.ERROR, message: `${id} will not be evacuated: sync state ${sync.state}${sync.detail ? ` (${sync.detail})` : ''}` } };
  if (sync.state === 'evacuated' || ev?.phase === 'READY') {
    const shown = ev ?? { itemId: id, node: id, action: 'MARK_BLOCKED_AND_EVACUATE_TASKS' as const, phase: 'READY' as const, since: t, timeoutSeconds: 0, remainingSeconds: 0, containers: [], released: [] };
    return { line: `${id}  ${evacuationLine(shown, t, p)} ${elapsed}`, stable: 'ready', end: { code: EXIT.OK, message: `${id} evacuated in ${humanizeMs(t - (ev?.since ?? started))}${howItWent(ev, last)}` } };
  }
  if (ev) {
    // A line redrawn in place must fit the terminal: there, only the reason's code (the detail is for logs and `show`).
    const why = ev.waiting ? (o.interactive ? ` (${ev.waiting.code})` : ` — ${ev.waiting.detail}`) : '';
    return { line: `${id}  ${evacuationLine(ev, t, p)}${p.dim(why)} ${elapsed}`, stable: `${ev.phase}:${ev.waiting?.code ?? ''}:${ev.containers.join(',')}:${ev.released.length}` };
  }
  return { line: `${id}  ${p.yellow(sync.state)}${sync.detail ? ` — ${sync.detail}` : ''} ${elapsed}`, stable: `${sync.state}:${sync.detail ?? ''}` };
}

/** How the task managers went, as far as the follower saw: after a checkpoint, at the deadline, or by themselves. */
function howItWent(ev: WireEvacuation | undefined, last: WireEvacuation | undefined): string {
  if (!ev || ev.released.length === 0) return '';
  const n = `${ev.released.length} task manager(s) released`;
  const cp = ev.checkpoint ?? last?.checkpoint;
  if (cp?.status === 'COMPLETED') return `; ${n} right after checkpoint ${cp.id ?? '(id unknown)'} of job ${cp.jobId}`;
  if (cp && cp.status !== 'IN_PROGRESS' && cp.status !== 'PERIODIC') return `; ${n} without a fresh checkpoint (${cp.detail ?? cp.status})`;
  if (last?.phase === 'TIMEOUT' || ev.timeoutSeconds !== 0) return `; ${n} at the deadline`;
  return `; ${n}`;
}

export async function followEvacuation(client: BlocklistClient, id: string, o: FollowOptions): Promise<FollowResult> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const started = now();
  let lastPrinted = '';
  let noSync = 0;
  let drawn = false;
  /** The last evacuation seen before READY (its phase and checkpoint say how the release went). */
  let last: WireEvacuation | undefined;
  const show = (line: string, stable: string) => {
    if (o.interactive) {
      o.out.write(`\r\x1b[2K${line}`);
      drawn = true;
    } else if (stable !== lastPrinted) o.out.write(line + '\n');
    lastPrinted = stable;
  };
  const finish = (r: FollowResult): FollowResult => {
    if (o.interactive && drawn) o.out.write('\n');
    return r;
  };
  for (;;) {
    let item: ApiItem;
    try {
      item = await client.get(id);
    } catch (e) {
      if (e instanceof CliError && e.code === EXIT.NOT_FOUND) return finish({ code: EXIT.NOT_FOUND, message: `${id} is no longer blocked (unblocked or expired); stopped following` });
      throw e;
    }
    const t = now();
    if (!item.sync && ++noSync >= NO_SYNC_POLLS) {
      return finish({ code: EXIT.ERROR, message: `the sidecar reports no sync state for ${id} (is YARN configured?); nothing to follow — check 'blocklist status'` });
    }
    const j = judge(id, item, t, started, `[${humanizeMs(t - started)}]`, o, last);
    if (j.line !== undefined && j.stable !== undefined) show(j.line, j.stable);
    if (j.end) return finish(j.end);
    const ev = item.sync?.evacuation;
    if (ev) last = ev;
    const giveUp = o.waitTimeoutMs !== undefined ? started + o.waitTimeoutMs : defaultGiveUp(started, ev?.deadline);
    if (t >= giveUp) {
      const why = o.waitTimeoutMs !== undefined ? '' : ev?.deadline !== undefined ? ' (5 minutes past its deadline; --wait-timeout sets another limit)' : ' (no deadline is known: the default limit; --wait-timeout sets another)';
      return finish({ code: EXIT.WAIT_TIMEOUT, message: `gave up waiting after ${humanizeMs(t - started)}${why}; the evacuation of ${id} goes on in the sidecar (follow with 'blocklist show ${id}')` });
    }
    await sleep(o.intervalMs);
  }
}
