/**
 * `blocklist expire`: one expiry pass, for system cron: deletes items whose end has
 * passed and prints what it removed. On a store file (--store) it runs the store's idempotent
 * removeExpired, safe beside a running sidecar; against a sidecar it asks POST /blocklist/expire.
 * Effectiveness never waits for this: an item stops counting at its endTimestamp anyway.
 */
import { Command } from 'commander';
import { ApiItem, BlocklistClient } from '../client';
import { CliError, runAction } from '../errors';
import { EXIT } from '../exit-codes';
import { isoTime, relative, toJson, toYaml, wireMs } from '../format';
import { CommonFlags, addCommonOptions, withClient, write } from './common';

async function expireOnce(client: BlocklistClient, now: number): Promise<ApiItem[]> {
  const t = client.transport;
  if (t.expire) return t.expire(now);
  const res = await t.request('POST', '/blocklist/expire');
  if (res.status === 404) {
    throw new CliError(
      `this sidecar has no expiry endpoint (POST /blocklist/expire); its own expiry job removes ended items, or run 'blocklist expire --store sqlite:PATH' on the host that holds the store`,
      EXIT.NOT_FOUND,
    );
  }
  if (res.status < 200 || res.status > 299) client.fail(res, 'expiry pass failed');
  const body = res.body as { removed?: ApiItem[] } | ApiItem[];
  return Array.isArray(body) ? body : (body.removed ?? []);
}

export function register(program: Command): void {
  const cmd = program.command('expire').description('run one expiry pass now (for system cron): delete items whose end has passed, print them');
  addCommonOptions(cmd).action(
    runAction(async (flags: CommonFlags) => {
      const now = Date.now();
      const removed = await withClient(flags, (c) => expireOnce(c, now));
      if (flags.output === 'json') return write(toJson(removed));
      if (flags.output === 'yaml') return write(toYaml(removed));
      if (!removed.length) return write('nothing to expire\n');
      write(`expired ${removed.length} item${removed.length === 1 ? '' : 's'}:\n`);
      for (const it of removed) {
        const end = wireMs(it.endTimestamp);
        write(`  ${it.id}  ended ${isoTime(end)} (${relative(end, now)})  cause "${it.cause}"\n`);
      }
    }),
  );
}
