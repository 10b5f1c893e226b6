/**
 * `blocklist extend ID (--by DURATION | --until TIME)`: a later end for a block, nothing else.
 * It is a merge (FLIP-224: the later end wins) of the item's own action and cause with the new
 * end, sent with the version just read (If-Match), so a block changed or lifted meanwhile is not
 * extended blindly (exit 3). `--by` counts from the block's current end; an extend never shortens
 * (a shorter block is an unblock and a new block) and a permanent block has nothing to extend.
 */
import { Command } from 'commander';
import { ApiItem, BlockBody, itemPath } from '../client';
import { CliError, runAction, usage } from '../errors';
import { EXIT } from '../exit-codes';
import { isoTime, toJson, toYaml, wireMs } from '../format';
import { itemSummary } from '../render';
import { parseBlockTimeout, parseUntil } from '../time-input';
import { wireTag } from '../../model/item';
import { CommonFlags, addCommonOptions, itemRef, painter, withClient, write } from './common';

interface ExtendFlags extends CommonFlags {
  by?: string;
  until?: string;
  cause?: string;
  dryRun?: boolean;
}

/** The new end, or a usage error naming why there is none. */
export function extendedEnd(item: Pick<ApiItem, 'id' | 'endTimestamp'>, flags: Pick<ExtendFlags, 'by' | 'until'>, now: number): number {
  if ((flags.by === undefined) === (flags.until === undefined)) throw usage('give either --by DURATION (from the current end) or --until TIME');
  const end = wireMs(item.endTimestamp);
  if (!Number.isFinite(end)) throw new CliError(`'${item.id}' is blocked permanently already; nothing to extend`, EXIT.OK);
  const next = flags.by !== undefined ? end + parseBlockTimeout(flags.by) : parseUntil(flags.until as string);
  if (next <= now) throw usage(`--until ${flags.until} (${isoTime(next)}) is not in the future`);
  if (next <= end) throw usage(`'${item.id}' ends at ${isoTime(end)} already, not before ${isoTime(next)}: extend never shortens a block (unblock it and block it again)`);
  return next;
}

export function register(program: Command): void {
  const cmd = program
    .command('extend')
    .description('give a block a later end (by a duration from its current end, or until a time); nothing else changes')
    .argument('<id>', 'a node, NODE/CONTAINER task manager or /rack path that is blocked')
    .option('--by <duration>', 'from the current end: 2h, 1d')
    .option('--until <time>', 'until this instant: 2026-12-01T06:00Z, 2026-12-01, or epoch ms')
    .option('--cause <text>', 'also add this to the cause (merged as a block --merge adds it)')
    .option('--dry-run', 'show the block as it would be and change nothing');
  addCommonOptions(cmd).action(
    runAction(async (rawId: string, flags: ExtendFlags) => {
      const ref = itemRef(rawId);
      await withClient(flags, async (client) => {
        const item = await client.get(ref.id);
        const now = Date.now();
        const end = extendedEnd(item, flags, now);
        const body: BlockBody = { action: item.action, cause: flags.cause ?? item.cause, endTimestamp: String(end), allowMerge: true };
        const ifMatch = item.createdAt !== undefined && item.updatedAt !== undefined ? wireTag({ createdAt: item.createdAt, updatedAt: item.updatedAt }) : undefined;
        const res = await client.transport.request('PUT', itemPath(ref.id), { body, ...(ifMatch !== undefined ? { ifMatch } : {}), ...(flags.dryRun ? { query: { dryRun: 'true' } } : {}) });
        if (res.status === 412) throw new CliError(`'${ref.id}' changed (or was lifted) since it was read; nothing was extended — look at it again ('blocklist show ${ref.id}')`, EXIT.CONFLICT);
        if (res.status < 200 || res.status > 299) client.fail(res, `cannot extend '${ref.id}'`);
        const after = res.body as ApiItem;
        if (flags.output === 'json') return write(toJson(after));
        if (flags.output === 'yaml') return write(toYaml(after));
        const was = `was until ${isoTime(wireMs(item.endTimestamp))}`;
        write(`${flags.dryRun ? `${painter(flags).yellow('dry run:')} would extend` : 'extended'} ${itemSummary(after, now)} (${was})\n`);
        if (flags.dryRun) write('nothing was changed\n');
      });
    }),
  );
}
