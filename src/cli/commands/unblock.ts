/**
 * `blocklist unblock ID…`: removes each item. Every id is checked before anything is removed; then
 * each is removed in turn, so one missing id does not stop the others. The exit code is the first
 * failure's (4 when an id was not blocked).
 *
 * An id no request may name (`*`, `host:8041`) can still be a quarantined row (an older version's,
 * a hand edit's): the store removes such a row by that id, so it is sent as typed — first, and a
 * refusal (it is no such row) stops the command before anything else is removed.
 */
import { Command } from 'commander';
import { CliError, runAction, usage } from '../errors';
import { EXIT, ExitCode } from '../exit-codes';
import { toJson, toYaml } from '../format';
import { effectLines } from '../render';
import { DryRunEffect } from '../client';
import { parseItemRef } from '../../model/validate';
import { CommonFlags, addCommonOptions, note, painter, withClient, write } from './common';

interface UnblockFlags extends CommonFlags {
  dryRun?: boolean;
}

interface Outcome {
  id: string;
  outcome: 'removed' | 'would-remove' | 'failed';
  error?: string;
  exitCode?: ExitCode;
  dryRun?: DryRunEffect;
}

export function register(program: Command): void {
  const cmd = program
    .command('unblock')
    .alias('rm')
    .description('remove blocks (nodes or NODE/CONTAINER task managers); YARN gets the node back at once')
    .argument('<id...>', 'node host names and/or node/containerId task managers')
    .option('--dry-run', 'show what would change in YARN and change nothing');
  addCommonOptions(cmd).action(
    runAction(async (ids: string[], flags: UnblockFlags) => {
      const { named, unnamed } = sortIds(ids);
      const outcomes = await withClient(flags, async (client) => {
        const out: Outcome[] = [];
        for (const id of [...unnamed.map((u) => u.id), ...named]) {
          try {
            const r = await client.unblock(id, !!flags.dryRun);
            out.push({ id, outcome: flags.dryRun ? 'would-remove' : 'removed', ...(r.dryRun ? { dryRun: r.dryRun } : {}) });
          } catch (e) {
            if (!(e instanceof CliError) || e.code === EXIT.UNREACHABLE) throw e;
            const odd = unnamed.find((u) => u.id === id);
            if (odd && e.code === EXIT.USAGE) throw usage(`${odd.error}, and no quarantined row has that id`, [...odd.more, ...(out.length ? [`removed before: ${out.map((o) => o.id).join(', ')}`] : [])]);
            out.push({ id, outcome: 'failed', error: e.message, exitCode: e.code });
          }
        }
        return out;
      });
      if (flags.output === 'json' || flags.output === 'yaml') {
        const doc = outcomes.map(({ exitCode: _x, ...o }) => o);
        write(flags.output === 'json' ? toJson(doc) : toYaml(doc));
      } else {
        const p = painter(flags);
        for (const o of outcomes) {
          if (o.outcome === 'removed') write(`unblocked ${o.id}\n`);
          else if (o.outcome === 'would-remove') write(`${p.yellow('dry run:')} would unblock ${o.id}\n${effectLines(o.dryRun, p)}`);
        }
        if (flags.dryRun && outcomes.some((o) => o.outcome === 'would-remove')) write('nothing was changed\n');
      }
      const failed = outcomes.filter((o) => o.outcome === 'failed');
      for (const f of failed.slice(1)) note(`blocklist unblock: ${f.error}`);
      if (failed.length) throw new CliError(failed[0].error ?? 'failed', failed[0].exitCode ?? EXIT.ERROR);
    }),
  );
}

/** Ids as the API parses them, and those it would refuse (only a quarantined row may hold one). */
function sortIds(ids: string[]): { named: string[]; unnamed: { id: string; error: string; more: string[] }[] } {
  const named: string[] = [];
  const unnamed: { id: string; error: string; more: string[] }[] = [];
  for (const id of ids) {
    const r = parseItemRef(id);
    if (r.ok) named.push(r.value.id);
    else unnamed.push({ id, error: r.errors[0], more: r.errors.slice(1) });
  }
  return { named, unnamed };
}
