/**
 * `blocklist status [--watch]`: the sidecar's sync and evacuation state (GET /status). --watch
 * redraws it every --interval on a terminal (like `watch`), or prints it again below in a pipe.
 */
import { Command } from 'commander';
import { runAction } from '../errors';
import { toJson, toYaml } from '../format';
import { statusText } from '../render';
import { parseBlockTimeout } from '../time-input';
import { CommonFlags, addCommonOptions, countLimit, painter, sleep, withClient, write } from './common';

interface StatusFlags extends CommonFlags {
  watch?: boolean;
  interval: string;
  count?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('status')
    .description("the sidecar's sync state: application, last sync, YARN blacklist desired vs actual, pending, deferred, evacuations")
    .option('-w, --watch', 'keep refreshing until Ctrl-C')
    .option('--interval <duration>', 'refresh interval with --watch', '2s')
    .option('--count <n>', 'with --watch: stop after n refreshes');
  addCommonOptions(cmd).action(
    runAction(async (flags: StatusFlags) => {
      const interval = parseBlockTimeout(flags.interval);
      const max = countLimit(flags.count);
      const tty = !!process.stdout.isTTY;
      await withClient(flags, async (client) => {
        for (let i = 0; ; i++) {
          const s = await client.status();
          if (flags.output === 'json') write(toJson(s));
          else if (flags.output === 'yaml') write((i ? '---\n' : '') + toYaml(s));
          else {
            const where = client.transport.direct ? `${client.description} (no sidecar: store only, nothing is synced)` : client.description;
            const body = statusText(s, where, Date.now(), painter(flags));
            if (flags.watch && tty) write(`\x1b[H\x1b[2J${body}\nrefreshing every ${flags.interval}; Ctrl-C to stop\n`);
            else write((i ? '\n' : '') + body);
          }
          if (!flags.watch || i + 1 >= max) return;
          await sleep(interval);
        }
      });
    }),
  );
}
