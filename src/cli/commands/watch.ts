/**
 * `blocklist watch`: the blocklist's changes as they happen, one line each (kubectl get --watch):
 * first what is blocked now, then every block added, changed (action, end, cause, scope, sync
 * state) or gone. A line per event whatever stdout is (a pipe, a log file, `tee`): nothing is
 * redrawn, and `-o json` writes one JSON object per line. It reads GET /blocklist every
 * --interval; a sidecar that stops answering is said once on stderr and read again.
 */
import { Command } from 'commander';
import { ApiItem, BlocklistClient } from '../client';
import { CliError, runAction } from '../errors';
import { EXIT } from '../exit-codes';
import { isoTime, wireMs } from '../format';
import { itemSummary, syncText } from '../render';
import { parseBlockTimeout } from '../time-input';
import { FieldChange, WatchEvent, diffReadings } from '../watch-diff';
import { CommonFlags, addCommonOptions, countLimit, note, painter, sleep, withClient, write } from './common';

interface WatchFlags extends CommonFlags {
  all?: boolean;
  interval: string;
  count?: string;
}

const shownValue = (c: FieldChange, v: string): string => (c.field === 'endTimestamp' ? endText(v) : c.field === 'cause' ? `"${v}"` : v);
const endText = (wire: string): string => {
  const ms = wireMs(wire);
  return Number.isFinite(ms) ? isoTime(ms) : 'permanent';
};
const FIELD_WORD: Record<FieldChange['field'], string> = { action: 'action', endTimestamp: 'end', cause: 'cause', scope: 'scope', sync: 'sync' };

/** One event as a line for people. */
export function eventLine(e: WatchEvent | { kind: 'present'; id: string; item: ApiItem }, at: number, p: ReturnType<typeof painter>): string {
  const when = p.dim(isoTime(at));
  switch (e.kind) {
    case 'present':
    case 'added':
      return `${when}  ${(e.kind === 'added' ? p.green : p.dim)(e.kind.padEnd(7))}  ${itemSummary(e.item, at)}  ${syncText(e.item.sync, p)}`;
    case 'changed':
      return `${when}  ${p.yellow('changed'.padEnd(7))}  ${e.id}: ${e.changes.map((c) => `${FIELD_WORD[c.field]} ${shownValue(c, c.from)} -> ${shownValue(c, c.to)}`).join('; ')}`;
    case 'removed':
      return `${when}  ${p.red('removed'.padEnd(7))}  ${e.id} (unblocked, or its end passed)`;
  }
}

async function reading(client: BlocklistClient, all: boolean): Promise<Record<string, ApiItem>> {
  const appliesTo = all || client.transport.direct ? undefined : (await client.status()).applicationId;
  return client.list(appliesTo ? { appliesTo } : {});
}

export function register(program: Command): void {
  const cmd = program
    .command('watch')
    .description('stream the blocklist\'s changes (added, changed, removed), one line each; works in a pipe too')
    .option('--all', 'every item in the store (default: what applies to the sidecar\'s application)')
    .option('--interval <duration>', 'how often the blocklist is read', '1s')
    .option('--count <n>', 'stop after n events (the first reading counts its items)');
  addCommonOptions(cmd, ['table', 'json']).action(
    runAction(async (flags: WatchFlags) => {
      const interval = parseBlockTimeout(flags.interval);
      const max = countLimit(flags.count);
      const p = painter(flags);
      await withClient(flags, async (client) => {
        let last: Record<string, ApiItem> | undefined;
        let seen = 0;
        let down = false;
        for (;;) {
          let now: Record<string, ApiItem>;
          try {
            now = await reading(client, !!flags.all);
            if (down) note(`${isoTime(Date.now())}  the sidecar answers again`);
            down = false;
          } catch (e) {
            if (!(e instanceof CliError) || e.code !== EXIT.UNREACHABLE) throw e;
            if (!down) note(`${isoTime(Date.now())}  ${e.message}; still trying every ${flags.interval}`);
            down = true;
            await sleep(interval);
            continue;
          }
          const at = Date.now();
          const events = last ? diffReadings(last, now) : Object.values(now).sort((a, b) => (a.id < b.id ? -1 : 1)).map((item) => ({ kind: 'present' as const, id: item.id, item }));
          for (const ev of events) {
            write(flags.output === 'json' ? `${JSON.stringify({ at: new Date(at).toISOString(), event: ev.kind, ...ev, kind: undefined })}\n` : `${eventLine(ev, at, p)}\n`);
            if (++seen >= max) return;
          }
          last = now;
          await sleep(interval);
        }
      });
    }),
  );
}
