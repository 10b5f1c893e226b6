/**
 * `blocklist block NODE` and `blocklist block-tm NODE/CONTAINER`: one PUT with exact wire values
 * (relative --timeout as ms, --until as epoch ms, --evacuation-timeout as seconds), validated
 * first with the server's own rules so a typo never costs a round trip. --dry-run asks the server
 * what would change; --wait follows the evacuation until READY (kubectl drain / nomad -monitor).
 */
import { Command } from 'commander';
import { ApiItem, BlockBody, BlocklistClient } from '../client';
import { CliError, runAction, usage } from '../errors';
import { EXIT } from '../exit-codes';
import { toJson, toYaml } from '../format';
import { effectLines, itemSummary } from '../render';
import { evacuationTimeoutWire, parseBlockTimeout, parseEvacuationTimeout, parseUntil, timeoutWire } from '../time-input';
import { followEvacuation } from '../evacuation-watch';
import { ItemRef, parseBlockRequest } from '../../model/validate';
import { EVACUATE, MARK_BLOCKED } from '../../model/item';
import { settledItem, unknownHostWarning } from '../unknown-host';
import { CommonFlags, addCommonOptions, itemRef, note, painter, withClient, write } from './common';

interface BlockFlags extends CommonFlags {
  cause: string;
  evacuate?: boolean;
  timeout?: string;
  until?: string;
  merge?: boolean;
  scope?: string;
  evacuationTimeout?: string;
  dryRun?: boolean;
  wait?: boolean;
  waitTimeout?: string;
  interval?: string;
}

/** The request body from the flags; throws a usage error naming the flag. */
export function blockBody(flags: BlockFlags): BlockBody {
  if (flags.timeout !== undefined && flags.until !== undefined) throw usage('give either --timeout or --until, not both (neither = permanent)');
  const body: BlockBody = { action: flags.evacuate ? EVACUATE : MARK_BLOCKED, cause: flags.cause };
  if (flags.timeout !== undefined) body.timeout = timeoutWire(parseBlockTimeout(flags.timeout));
  if (flags.until !== undefined) {
    const at = parseUntil(flags.until);
    const now = Date.now();
    if (at <= now) throw usage(`--until ${flags.until} (${new Date(at).toISOString()}) is not in the future (now is ${new Date(now).toISOString()})`);
    body.endTimestamp = String(at);
  }
  if (flags.merge) body.allowMerge = true;
  if (flags.scope !== undefined) body.scope = flags.scope;
  if (flags.evacuationTimeout !== undefined) {
    if (!flags.evacuate) throw usage('--evacuation-timeout only applies with --evacuate');
    body.evacuationTimeout = evacuationTimeoutWire(parseEvacuationTimeout(flags.evacuationTimeout, '--evacuation-timeout'));
  }
  return body;
}

const DESCRIPTION = {
  node: "block a node: no new containers there; with --evacuate also move the job's containers off it",
  taskmanager: 'block one task manager container (NODE/CONTAINER); with --evacuate release that container',
  rack: "block every node of a rack (a failing top-of-rack switch): YARN's blacklist takes the rack; with --evacuate move the job's containers off all its nodes",
} as const;
const ARGUMENT = {
  node: ['<node>', 'the NodeManager host name as YARN names it (no port)'],
  taskmanager: ['<node/container>', 'e.g. node1/container_e01_1652313600000_0001_01_000002'],
  rack: ['<rack>', "the rack path as YARN names it (the RM's 'rack' of a node), e.g. /default-rack"],
} as const;

function defineBlock(program: Command, name: string, kind: Kind): void {
  const cmd = program
    .command(name)
    .description(DESCRIPTION[kind])
    .argument(ARGUMENT[kind][0], ARGUMENT[kind][1])
    .requiredOption('--cause <text>', 'why (required; shown to everyone, merged on --merge)')
    .option('--evacuate', 'MARK_BLOCKED_AND_EVACUATE_TASKS: also move running containers off')
    .option('--timeout <duration>', 'block for this long: 30m, 2h, 1d (default: permanent)')
    .option('--until <time>', 'block until this instant: 2026-12-01T06:00Z, 2026-12-01, or epoch ms')
    .option('--merge', 'if already blocked, merge (evacuate wins, later end wins, causes joined) instead of failing with exit 3')
    .option('--scope <scope>', "'cluster' (default: every job sharing the store) or one application id")
    .option('--evacuation-timeout <duration>', 'with --evacuate: grace period before containers are released: 10m, 0 (at once), forever')
    .option('--dry-run', 'show what would change (item, YARN blacklist, containers released) and change nothing');
  const done = kind === 'node' ? 'the node is empty' : kind === 'rack' ? "the rack's nodes are empty" : 'the container is released';
  cmd
    .option('--wait', `with --evacuate: follow the evacuation until ${done} (exit 0) or its deadline passes (exit 6)`)
    .option('--wait-timeout <duration>', 'with --wait: give up after this long (exit 6); default: 5 min past the evacuation deadline, or 30 min while none is known')
    .option('--interval <duration>', 'with --wait: poll interval', '1s');
  addCommonOptions(cmd).action(runAction(async (rawId: string, flags: BlockFlags) => runBlock(kind, rawId, flags)));
}

type Kind = 'node' | 'taskmanager' | 'rack';

/** The block's request, checked locally with the server's own rules: every problem before anything is sent. */
function checkedRequest(kind: Kind, rawId: string, flags: BlockFlags): { ref: ItemRef; body: BlockBody } {
  // The API's message names its endpoint; the operator types commands, so name the command.
  if (kind === 'node' && rawId.includes('/') && !rawId.startsWith('/')) {
    throw usage(`'${rawId}' is a task manager (<node>/<containerId>): use \`blocklist block-tm ${rawId}\``);
  }
  const ref = itemRef(rawId, kind);
  const body = blockBody(flags);
  const check = parseBlockRequest(ref, body, Date.now());
  if (!check.ok) throw usage(check.errors[0], check.errors.slice(1));
  if (flags.wait && !flags.evacuate) throw usage('--wait follows an evacuation; add --evacuate');
  if (flags.wait && flags.dryRun) throw usage('--wait and --dry-run do not go together: a dry run starts nothing');
  if (flags.wait && flags.output && flags.output !== 'table') throw usage('--wait draws progress; drop -o json|yaml (use `blocklist show` for machine output)');
  return { ref, body };
}

/** What the answer says, for people (or as it is, with -o json|yaml). */
function printAnswer(kind: Kind, res: { status: number; body: ApiItem }, flags: BlockFlags): void {
  const item = res.body;
  const now = Date.now();
  if (flags.output === 'json') return write(toJson(item));
  if (flags.output === 'yaml') return write(toYaml(item));
  const p = painter(flags);
  const what = kind === 'taskmanager' ? 'task manager' : kind;
  if (flags.dryRun) {
    const would = item.outcome === 'unchanged' ? 'change nothing, already blocked so:' : res.status === 201 ? `block ${what}` : 'merge into';
    write(`${p.yellow('dry run:')} would ${would} ${itemSummary(item, now)}\n`);
    write(effectLines(item.dryRun, p));
    write('nothing was changed\n');
  } else if (item.outcome === 'unchanged') write(`nothing changed, already blocked so: ${itemSummary(item, now)}\n`);
  else if (res.status === 202) write(`merged into the existing block: ${itemSummary(item, now)}\n`);
  else write(`blocked ${what} ${itemSummary(item, now)}\n`);
}

/**
 * What the block does not do that its operator may think: a host the RM does not know (kept, said:
 * unknown-host.ts), a task manager elsewhere (the answer's warnings), a block the cap holds back
 * (stored, not applied: its own exit code, and no --wait for what never starts).
 */
async function sayWhatItDoesNot(kind: Kind, client: BlocklistClient, item: ApiItem, flags: BlockFlags): Promise<void> {
  const settled = !flags.dryRun && !client.transport.direct && kind !== 'taskmanager' ? await settledItem(client, item) : item;
  const warning = kind === 'node' ? unknownHostWarning(settled) : undefined;
  if (warning) note(warning);
  for (const w of item.warnings ?? []) note(`warning: ${w}`);
  if (!flags.dryRun && settled.sync?.state === 'deferred') {
    throw new CliError(`deferred: stored, but not on YARN's blacklist${flags.wait ? ' (nothing to wait for)' : ''}: ${settled.sync.detail ?? 'held back by the safety cap'}`, EXIT.DEFERRED);
  }
}

async function runBlock(kind: Kind, rawId: string, flags: BlockFlags): Promise<void> {
  const { ref, body } = checkedRequest(kind, rawId, flags);
  await withClient(
    flags,
    async (client) => {
      if (flags.wait && client.transport.direct) throw usage('--wait needs a running sidecar (the store alone does not evacuate); drop --store');
      const res = await client.block(ref.id, body, !!flags.dryRun);
      printAnswer(kind, res, flags);
      await sayWhatItDoesNot(kind, client, res.body, flags);
      if (!flags.wait) return;
      const r = await followEvacuation(client, ref.id, {
        paint: painter(flags),
        interactive: !!process.stdout.isTTY,
        intervalMs: parseBlockTimeout(flags.interval ?? '1s'),
        waitTimeoutMs: flags.waitTimeout ? parseBlockTimeout(flags.waitTimeout) : undefined,
        out: process.stdout,
      });
      if (r.code !== EXIT.OK) throw new CliError(r.message, r.code);
      write(`${r.message}\n`);
    },
    { create: true, dryRun: !!flags.dryRun },
  );
}

export function register(program: Command): void {
  defineBlock(program, 'block', 'node');
  defineBlock(program, 'block-tm', 'taskmanager');
  defineBlock(program, 'block-rack', 'rack');
}
