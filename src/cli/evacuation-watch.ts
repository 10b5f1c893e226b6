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
 *  - --wait-timeout ran out: exit 6, the evacuation carries on in the sidecar;
 *  - the item disappeared (unblocked or expired): exit 4.
 */
import { BlocklistClient, ApiItem, WireEvacuation } from './client';
import { CliError } from './errors';
import { EXIT, ExitCode } from './exit-codes';
import { Paint } from './format';
import { evacuationLine } from './render';
import { humanizeMs } from '../config/duration';

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

export async function followEvacuation(client: BlocklistClient, id: string, o: FollowOptions): Promise<FollowResult> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? defaultSleep;
  const p = o.paint;
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
    } else if (stable !== lastPrinted) {
      o.out.write(line + '\n');
    }
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
      if (e instanceof CliError && e.code === EXIT.NOT_FOUND) {
        return finish({ code: EXIT.NOT_FOUND, message: `${id} is no longer blocked (unblocked or expired); stopped following` });
      }
      throw e;
    }
    const t = now();
    const elapsed = `[${humanizeMs(t - started)}]`;
    const sync = item.sync;
    const ev = sync?.evacuation;
    if (!sync) {
      if (++noSync >= NO_SYNC_POLLS) {
        return finish({ code: EXIT.ERROR, message: `the sidecar reports no sync state for ${id} (is YARN configured?); nothing to follow — check 'blocklist status'` });
      }
      show(`${id}  ${p.dim('waiting for the sidecar to report on it')} ${elapsed}`, 'nosync');
    } else if (sync.state === 'disabled' || sync.state === 'not-applicable') {
      return finish({ code: EXIT.ERROR, message: `${id} will not be evacuated: sync state ${sync.state}${sync.detail ? ` (${sync.detail})` : ''}` });
    } else if (sync.state === 'evacuated' || ev?.phase === 'READY') {
      const done = ev ?? { itemId: id, node: id, action: 'MARK_BLOCKED_AND_EVACUATE_TASKS' as const, phase: 'READY' as const, since: t, timeoutSeconds: 0, remainingSeconds: 0, containers: [], released: [] };
      show(`${id}  ${evacuationLine(done, t, p)} ${elapsed}`, 'ready');
      return finish({ code: EXIT.OK, message: `${id} evacuated in ${humanizeMs(t - (ev?.since ?? started))}${howItWent(ev, last)}` });
    } else if (ev) {
      last = ev;
      // A line redrawn in place must fit the terminal: there, only the reason's code (the detail is for logs and `show`).
      const why = ev.waiting ? (o.interactive ? ` (${ev.waiting.code})` : ` — ${ev.waiting.detail}`) : '';
      show(`${id}  ${evacuationLine(ev, t, p)}${p.dim(why)} ${elapsed}`, `${ev.phase}:${ev.waiting?.code ?? ''}:${ev.containers.join(',')}:${ev.released.length}`);
    } else {
      show(`${id}  ${p.yellow(sync.state)}${sync.detail ? ` — ${sync.detail}` : ''} ${elapsed}`, `${sync.state}:${sync.detail ?? ''}`);
    }
    if (o.waitTimeoutMs !== undefined && t - started >= o.waitTimeoutMs) {
      return finish({ code: EXIT.WAIT_TIMEOUT, message: `gave up waiting after ${humanizeMs(o.waitTimeoutMs)}; the evacuation of ${id} goes on in the sidecar (follow with 'blocklist show ${id}')` });
    }
    await sleep(o.intervalMs);
  }
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
