/**
 * What every admin command shares: connection flags, -o, --no-color, opening and closing the
 * client, and the client-side validation that applies the server's own rules before any request.
 */
import { Command, Option } from 'commander';
import { BlocklistClient, HttpTransport } from '../client';
import { usage } from '../errors';
import { OutputFormat, Paint, paint, useColor } from '../format';
import { addConnectionOptions, ConnectionFlags, resolveTarget } from '../settings';
import { ItemRef, parseItemRef } from '../../model/validate';
import { ACTIONS, BlockAction } from '../../model/item';

export interface CommonFlags extends ConnectionFlags {
  output?: OutputFormat;
  color?: boolean;
}

export function addCommonOptions(cmd: Command, outputs: OutputFormat[] = ['table', 'json', 'yaml']): Command {
  addConnectionOptions(cmd);
  if (outputs.length) cmd.addOption(new Option('-o, --output <format>', 'output format').choices(outputs));
  return cmd.option('--no-color', 'no colours (also: NO_COLOR=1, or output that is not a terminal)');
}

export function painter(flags: CommonFlags): Paint {
  return paint(useColor(process.stdout, process.env, flags.color));
}

/** Opens the client, runs fn, always closes (an SQLite store must be closed to checkpoint). */
export async function withClient<T>(flags: CommonFlags, fn: (c: BlocklistClient) => Promise<T>, opts: { create?: boolean; dryRun?: boolean } = {}): Promise<T> {
  const app = flags.app;
  const target = app !== undefined ? await (await import('../find-sidecar.js')).sidecarTarget({ ...flags, app }) : resolveTarget(flags);
  // The direct-store transport runs the whole API in-process (fastify, SQLite): loaded only when used,
  // so a plain `blocklist list` against a sidecar starts fast.
  const transport =
    target.kind === 'server'
      ? new HttpTransport(target.url, target.token)
      : await (await import('../direct-store.js')).DirectStoreTransport.openTarget(target, opts.dryRun ? 'empty' : opts.create ? 'create' : 'error');
  const client = new BlocklistClient(transport);
  try {
    return await fn(client);
  } finally {
    await client.transport.close();
  }
}

/** An id as the API would parse it; the kind comes from its shape unless forced. */
export function itemRef(raw: string, kind?: 'node' | 'taskmanager' | 'rack'): ItemRef {
  const r = parseItemRef(raw, kind);
  if (!r.ok) throw usage(r.errors[0], r.errors.slice(1));
  return r.value;
}

/** --action accepts the FLIP's names and the short ones the table shows. */
export function parseAction(raw: string): BlockAction {
  const v = raw.trim().toUpperCase().replace(/-/g, '_');
  if (v === 'BLOCK' || v === 'MARK_BLOCKED') return 'MARK_BLOCKED';
  if (v === 'EVACUATE' || v === 'MARK_BLOCKED_AND_EVACUATE_TASKS') return 'MARK_BLOCKED_AND_EVACUATE_TASKS';
  throw usage(`--action '${raw}' is not an action; use block (${ACTIONS[0]}) or evacuate (${ACTIONS[1]})`);
}

export function write(text: string): void {
  process.stdout.write(text);
}

export function note(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : text + '\n');
}

/** --count N of a command that repeats (status --watch, watch): at least 1; absent = no end. */
export function countLimit(raw: string | undefined): number {
  return raw !== undefined ? Math.max(1, Number.parseInt(raw, 10) || 1) : Infinity;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
