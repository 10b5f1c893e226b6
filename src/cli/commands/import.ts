/**
 * `blocklist import FILE`: YARN exclude files (XML or plain text, read exactly as Hadoop's
 * HostsFileReader reads them) or our own JSON export, written through the batch endpoint.
 *
 * All or nothing, as far as a client can make it: the whole file is parsed and validated with the
 * server's rules first (a malformed file names its line and host, and nothing is sent); without
 * --merge a dry-run pass checks for hosts already blocked before anything is written, so a
 * conflict imports nothing either (exit 3).
 *
 * Timeouts, as NodesListManager decides them: a host's own <timeout> beats -g, which beats the
 * sidecar's configured default (the item then carries no evacuationTimeout); negative = forever.
 */
import { scopeCovers } from '../../model/scope';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ApiItem, BatchItem, BatchResult, BlocklistClient, DryRunEffect } from '../client';
import { CliError, runAction, usage } from '../errors';
import { EXIT } from '../exit-codes';
import { ExcludeFileError, formatOf, parseExcludeFile } from '../exclude-file';
import { toJson, toYaml, wireMs } from '../format';
import { effectLines, itemSummary } from '../render';
import { parseBlockTimeout, parseEvacuationTimeout, parseUntil } from '../time-input';
import { EVACUATE, LONG_MAX_TEXT } from '../../model/item';
import { parseBlockRequest, parseItemRef } from '../../model/validate';
import { CommonFlags, addCommonOptions, note, painter, parseAction, withClient, write } from './common';

type ImportFormat = 'auto' | 'yarn-xml' | 'text' | 'json';

interface ImportFlags extends CommonFlags {
  format?: ImportFormat;
  g?: string;
  action?: string;
  cause?: string;
  merge?: boolean;
  scope?: string;
  timeout?: string;
  until?: string;
  dryRun?: boolean;
}

/** A batch item plus where it came from, for messages. */
interface Planned {
  item: BatchItem;
  where: string;
}

function readInput(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file} (${code ?? (e as Error).message}); check the path`, code === 'ENOENT' ? EXIT.NOT_FOUND : EXIT.ERROR);
  }
}

function planExcludeFile(file: string, text: string, format: 'yarn-xml' | 'text', flags: ImportFlags): Planned[] {
  let entries;
  try {
    entries = parseExcludeFile(path.basename(file), text, format);
  } catch (e) {
    if (e instanceof ExcludeFileError) throw usage(`${file} is not a valid ${format === 'yarn-xml' ? 'YARN XML' : 'plain-text'} exclude file; nothing was imported`, e.problems);
    throw e;
  }
  const g = flags.g !== undefined ? parseEvacuationTimeout(flags.g, '-g', true) : undefined;
  const action = flags.action ? parseAction(flags.action) : EVACUATE;
  const cause = flags.cause ?? `imported from ${path.basename(file)}`;
  return entries.map((e) => {
    const item: BatchItem = { id: e.host, action, cause };
    const t = e.timeout ?? g;
    if (t !== undefined) item.evacuationTimeout = t < 0 ? -1 : t;
    return { item, where: `line ${e.line}: host ${e.host}` };
  });
}

/** Our JSON export (an array of items) or GET /blocklist's map. Start times and audit stamps are re-made. */
function planJson(file: string, text: string, flags: ImportFlags, now: number): Planned[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw usage(`${file} is not valid JSON (${(e as Error).message}); nothing was imported`);
  }
  const raw: unknown[] = Array.isArray(doc) ? doc : doc && typeof doc === 'object' ? Object.values(doc as Record<string, unknown>) : [];
  if (!Array.isArray(doc) && !(doc && typeof doc === 'object')) throw usage(`${file}: expected an array of items (blocklist export --format json); nothing was imported`);
  const out: Planned[] = [];
  raw.forEach((r, i) => {
    const o = (r ?? {}) as Record<string, unknown>;
    const id = typeof o.id === 'string' ? o.id : '';
    const item: BatchItem = { id, action: flags.action ? parseAction(flags.action) : String(o.action ?? ''), cause: flags.cause ?? String(o.cause ?? '') };
    if (typeof o.scope === 'string' && o.scope !== 'cluster') item.scope = o.scope;
    if (typeof o.evacuationTimeout === 'number') item.evacuationTimeout = o.evacuationTimeout;
    const end = typeof o.endTimestamp === 'string' || typeof o.endTimestamp === 'number' ? String(o.endTimestamp) : undefined;
    if (end !== undefined && end !== LONG_MAX_TEXT) {
      if (wireMs(end) <= now) {
        note(`skipping item ${i} (${id}): its block ended at ${new Date(wireMs(end)).toISOString()}`);
        return;
      }
      item.endTimestamp = end;
    }
    out.push({ item, where: `item ${i} (${id || 'no id'})` });
  });
  return out;
}

/** What the import would do to YARN, from the dry-run results and the current list. */
function importEffect(results: BatchResult[], current: Record<string, ApiItem>, app: string | undefined): DryRunEffect {
  const applies = (it: ApiItem) => scopeCovers(it.scope, app);
  const blocked = new Set(Object.values(current).filter((it) => it.kind === 'node' && applies(it)).map((it) => it.id));
  const additions = new Set<string>();
  const releases = new Set<string>();
  for (const r of results) {
    const it = r.item;
    if (!it || !applies(it)) continue;
    if (it.kind === 'node' && !blocked.has(it.id)) additions.add(it.id);
    const before = current[it.id];
    if (it.action === EVACUATE && before?.action !== EVACUATE) for (const c of it.taskManagers ?? []) releases.add(c);
  }
  return { blacklistAdditions: [...additions].sort(), blacklistRemovals: [], containersToRelease: [...releases].sort() };
}

async function runImport(client: BlocklistClient, planned: Planned[], flags: ImportFlags) {
  const items = planned.map((p) => p.item);
  if (flags.dryRun) {
    const dry = await client.batch(items, true);
    const current = await client.list();
    let app: string | undefined;
    if (!client.transport.direct) app = (await client.status()).applicationId;
    return { results: dry.results, effect: importEffect(dry.results, current, app) };
  }
  if (!flags.merge) {
    const check = await client.batch(items, true);
    const conflicts = check.results.filter((r) => r.code === 'exists');
    if (conflicts.length) {
      throw new CliError(
        `${conflicts.length} of ${items.length} host(s) are already blocked; nothing was imported — add --merge to merge into the existing blocks`,
        EXIT.CONFLICT,
        conflicts.map((c) => `${c.id}: already blocked`),
      );
    }
  }
  const res = await client.batch(items, false);
  return { results: res.results, effect: undefined };
}

export function register(program: Command): void {
  const cmd = program
    .command('import')
    .description('import a YARN exclude file (XML if the name ends in .xml, else plain text, as HostsFileReader) or a JSON export')
    .argument('<file>', 'exclude file (yarn.resourcemanager.nodes.exclude-path style) or blocklist export --format json')
    .addOption(new Option('--format <format>', 'override the format chosen from the file name').choices(['auto', 'yarn-xml', 'text', 'json']).default('auto'))
    .option('-g, --graceful-timeout <seconds>', "evacuation timeout for hosts without their own <timeout>, like 'yarn rmadmin -refreshNodes -g' (-1 = forever)")
    .option('--action <action>', 'evacuate (default for exclude files: YARN decommissions excluded hosts) or block')
    .option('--cause <text>', "cause for every imported item (default: 'imported from FILE')")
    .option('--timeout <duration>', 'every imported block lasts this long (default: permanent)')
    .option('--until <time>', 'every imported block ends at this instant')
    .option('--scope <scope>', "'cluster' (default) or one application id")
    .option('--merge', 'merge into hosts already blocked instead of refusing the import (exit 3)')
    .option('--dry-run', 'show what would be imported and change nothing');
  addCommonOptions(cmd).action(
    runAction(async (file: string, rawFlags: ImportFlags & { gracefulTimeout?: string }) => {
      const flags: ImportFlags = { ...rawFlags, g: rawFlags.gracefulTimeout };
      if (flags.timeout !== undefined && flags.until !== undefined) throw usage('give either --timeout or --until, not both');
      const text = readInput(file);
      const now = Date.now();
      const fmt = flags.format && flags.format !== 'auto' ? flags.format : file.toLowerCase().endsWith('.json') ? 'json' : formatOf(file);
      const planned = fmt === 'json' ? planJson(file, text, flags, now) : planExcludeFile(file, text, fmt, flags);
      for (const p of planned) {
        if (flags.scope !== undefined) p.item.scope = flags.scope;
        if (flags.timeout !== undefined) {
          delete p.item.endTimestamp;
          p.item.timeout = String(parseBlockTimeout(flags.timeout));
        }
        if (flags.until !== undefined) p.item.endTimestamp = String(parseUntil(flags.until));
        if (flags.merge) p.item.allowMerge = true;
      }
      // The server's rules, locally, over the whole file: every problem named, nothing sent.
      const problems: string[] = [];
      for (const p of planned) {
        const ref = parseItemRef(p.item.id);
        if (!ref.ok) problems.push(...ref.errors.map((e) => `${p.where}: ${e}`));
        else {
          const v = parseBlockRequest(ref.value, p.item, now);
          if (!v.ok) problems.push(...v.errors.map((e) => `${p.where}: ${e}`));
        }
      }
      if (problems.length) throw usage(`${file}: ${problems.length} problem(s); nothing was imported`, problems);
      if (!planned.length) {
        note(`${file} names no hosts; nothing to import`);
        return;
      }

      const { results, effect } = await withClient(flags, (c) => runImport(c, planned, flags), { create: true, dryRun: !!flags.dryRun });
      const counts = new Map<string, number>();
      for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
      const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
      if (flags.output === 'json' || flags.output === 'yaml') {
        const doc = { file, format: fmt, dryRun: !!flags.dryRun, results, ...(effect ? { effect } : {}) };
        write(flags.output === 'json' ? toJson(doc) : toYaml(doc));
      } else {
        const p = painter(flags);
        const label = fmt === 'yarn-xml' ? 'YARN XML' : fmt === 'text' ? 'plain text' : 'JSON';
        write(`${flags.dryRun ? `${p.yellow('dry run:')} would import` : 'imported'} ${results.length} item(s) from ${file} (${label}): ${summary}\n`);
        for (const r of results) {
          const out = r.outcome.padEnd(9);
          write(r.item ? `  ${out} ${itemSummary(r.item, now)}\n` : `  ${out} ${r.id}: ${(r.errors ?? []).join('; ')}\n`);
        }
        if (effect) write(effectLines(effect, p) + 'nothing was changed\n');
      }
      const conflicts = results.filter((r) => r.status === 409);
      if (conflicts.length && flags.dryRun) throw new CliError(`${conflicts.length} host(s) are already blocked: the import would be refused without --merge`, EXIT.CONFLICT);
      if (conflicts.length) throw new CliError(`${conflicts.length} host(s) were blocked meanwhile and not merged; re-run with --merge`, EXIT.CONFLICT);
    }),
  );
}
