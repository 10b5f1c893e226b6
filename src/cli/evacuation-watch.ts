/**
 * `block --evacuate --wait`: follows one node's evacuation until it is empty, like `kubectl drain`
 * (blocks until done or --timeout) and `nomad node drain -monitor` (prints progress as it goes).
 * On a terminal one status line is redrawn in place (containers left, deadline countdown); in a
 * pipe or log a line is printed only when something other than the countdown changes.
 *
 * Ends:
 *  - READY / evacuated: exit 0;
 *  - TIMEOUT with a timeout > 0: the deadline passed with containers still there, so the sidecar
 *    releases them by force: exit 6 (what Hadoop's client-side tracking calls "not completed in
 *    time"). Judged from the state, not from catching the phase: READY with containers released
 *    under a timeout > 0 is the same outcome. With timeout 0 the release *is* the plan, so it
 *    follows on to READY and exits 0;
 *  - --wait-timeout ran out: exit 6, the evacuation carries on in the sidecar;
 *  - the item disappeared (unblocked or expired): exit 4.
 */
import { BlocklistClient, ApiItem } from './client';
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
    } else if ((sync.state === 'evacuated' || ev?.phase === 'READY') && ev && ev.released.length > 0 && ev.timeoutSeconds !== 0) {
      // Empty, but because the deadline forced the containers out: the TIMEOUT outcome, shown as such
      // even when no poll caught that phase (it can last less than one poll interval).
      show(`${id}  ${evacuationLine({ ...ev, phase: 'TIMEOUT' }, t, p)} ${elapsed}`, 'timeout');
      return finish({
        code: EXIT.WAIT_TIMEOUT,
        message: `${id}: the evacuation deadline passed with ${ev.released.length} container(s) still there; the sidecar released them`,
      });
    } else if (sync.state === 'evacuated' || ev?.phase === 'READY') {
      const rel = ev?.released.length ? `; ${ev.released.length} container(s) were released at the deadline` : '';
      show(`${id}  ${evacuationLine(ev ?? { itemId: id, node: id, action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', phase: 'READY', since: t, timeoutSeconds: 0, remainingSeconds: 0, containers: [], released: [] }, t, p)} ${elapsed}`, 'ready');
      return finish({ code: EXIT.OK, message: `${id} evacuated in ${humanizeMs(t - (ev?.since ?? started))}${rel}` });
    } else if (ev?.phase === 'TIMEOUT' && ev.timeoutSeconds !== 0) {
      show(`${id}  ${evacuationLine(ev, t, p)} ${elapsed}`, `timeout`);
      return finish({
        code: EXIT.WAIT_TIMEOUT,
        message: `${id}: the evacuation deadline passed with ${ev.containers.length} container(s) still there; the sidecar releases them now (follow with 'blocklist show ${id}')`,
      });
    } else if (ev) {
      show(`${id}  ${evacuationLine(ev, t, p)} ${elapsed}`, `${ev.phase}:${ev.containers.join(',')}:${ev.released.length}`);
    } else {
      show(`${id}  ${p.yellow(sync.state)}${sync.detail ? ` — ${sync.detail}` : ''} ${elapsed}`, `${sync.state}:${sync.detail ?? ''}`);
    }
    if (o.waitTimeoutMs !== undefined && t - started >= o.waitTimeoutMs) {
      return finish({ code: EXIT.WAIT_TIMEOUT, message: `gave up waiting after ${humanizeMs(o.waitTimeoutMs)}; the evacuation of ${id} goes on in the sidecar (follow with 'blocklist show ${id}')` });
    }
    await sleep(o.intervalMs);
  }
}
