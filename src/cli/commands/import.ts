/**
 * `blocklist import FILE`: YARN exclude files (XML or plain text) or our own JSON export (what to
 * send: import-plan.ts), written through the batch endpoint (in chunks: import-chunks.ts).
 *
 * All or nothing, as far as a client can make it: the whole file is parsed and validated with the
 * server's rules first (a malformed file names its line and host, and nothing is sent); without
 * --merge a dry-run pass checks for hosts already blocked before anything is written, so a
 * conflict imports nothing either (exit 3). A dry run says what YARN would see (import-effect.ts).
 *
 * Provenance: every item an exclude file creates carries `source: exclude-file:<absolute path>`
 * (or --source NAME), and merges keep it. `--sync` makes the import act like `yarn rmadmin
 * -refreshNodes` on that file: the file's hosts are blocked (merged into blocks that exist), and
 * the blocks this file created earlier whose host is no longer in it are lifted. Blocks made by
 * hand or by another file are never lifted, even when their host left the file; a block this file
 * created is lifted even when someone merged into it since (the file created it, and a merge adds
 * to a block without taking it over — the report names who changed it last).
 */
import * as fs from 'node:fs';
import { Command, Option } from 'commander';
import { ApiItem, BlocklistClient, DryRunEffect, BatchResult, itemPath } from '../client';
import { CapBasis } from '../../sync/preview';
import { CliError, runAction, usage } from '../errors';
import { EXIT } from '../exit-codes';
import { formatOf } from '../exclude-file';
import { isoTime, toJson, toYaml, wireMs } from '../format';
import { effectLines, itemSummary } from '../render';
import { parseBlockTimeout, parseUntil, timeoutWire } from '../time-input';
import { parseBlockRequest, parseItemRef, parseSource } from '../../model/validate';
import { MARK_BLOCKED, wireTag } from '../../model/item';
import { CommonFlags, addCommonOptions, note, painter, withClient, write } from './common';
import { PlanFlags, Planned, excludeFileSource, planExcludeFile, planJson, toLift } from './import-plan';
import { batchInChunks, importChunks } from './import-chunks';
import { capOf, importEffect } from './import-effect';

type ImportFormat = 'auto' | 'yarn-xml' | 'text' | 'json';

interface ImportFlags extends CommonFlags, PlanFlags {
  format?: ImportFormat;
  merge?: boolean;
  scope?: string;
  timeout?: string;
  until?: string;
  dryRun?: boolean;
  sync?: boolean;
}

function readInput(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file} (${code ?? (e as Error).message}); check the path`, code === 'ENOENT' ? EXIT.NOT_FOUND : EXIT.ERROR);
  }
}

interface ImportOutcome {
  results: BatchResult[];
  effect?: DryRunEffect;
  /** --sync: the blocks lifted (or, in a dry run, that would be). */
  lifted?: ApiItem[];
  /** --sync: blocks the file had created that were made again by hand while the sync ran: left. */
  left?: ApiItem[];
}

/** The If-Match of a listed item (a sidecar that sends no stamps gets a plain DELETE). */
function versionOf(it: ApiItem): { ifMatch?: string } {
  return it.createdAt !== undefined && it.updatedAt !== undefined ? { ifMatch: wireTag({ createdAt: it.createdAt, updatedAt: it.updatedAt }) } : {};
}

async function runImport(client: BlocklistClient, planned: Planned[], flags: ImportFlags, sync: { source: string } | undefined): Promise<ImportOutcome> {
  const items = planned.map((p) => p.item);
  const inFile = new Set(items.map((i) => i.id));
  if (flags.dryRun) {
    const dry = items.length ? await batchInChunks(client, items, true) : [];
    const current = await client.list();
    const lifted = sync ? toLift(current, sync.source, inFile) : undefined;
    let app: string | undefined;
    let cap: CapBasis | undefined;
    if (!client.transport.direct) {
      const s = await client.status({ nodes: true });
      app = s.applicationId;
      cap = capOf(s);
    }
    return { results: dry, effect: importEffect(dry, current, app, cap, Date.now(), lifted ?? []), ...(lifted ? { lifted } : {}) };
  }
  if (sync) {
    // Blocks first, then lifts: a host is never left unblocked between the two steps.
    const results = items.length ? await importChunks(client, items) : [];
    const lifted: ApiItem[] = [];
    const left: ApiItem[] = [];
    for (const listed of toLift(await client.list(), sync.source, inFile)) {
      // Each lift names the version listed (If-Match): a block that changed since is looked at
      // again, and lifted only if this file still created it (someone merged into it) — not when
      // it was lifted and blocked again by hand meanwhile, which the sync must never lift.
      let it: ApiItem | undefined = listed;
      let res = await client.transport.request('DELETE', itemPath(it.id), versionOf(it));
      if (res.status === 412) {
        const now = await client.transport.request('GET', itemPath(it.id));
        it = now.status === 200 ? (now.body as ApiItem) : undefined;
        if (it && toLift({ [it.id]: it }, sync.source, inFile).length === 0) {
          left.push(it);
          continue;
        }
        res = it ? await client.transport.request('DELETE', itemPath(it.id), versionOf(it)) : { status: 404, body: undefined };
      }
      // 404: gone meanwhile (unblocked or ended), which is what the sync wanted.
      if (res.status === 404 || !it) continue;
      if (res.status < 200 || res.status > 299) {
        const done = lifted.length ? ` (lifted before it: ${lifted.map((l) => l.id).join(', ')})` : '';
        client.fail(res, `the file's hosts were imported, but lifting '${it.id}' failed${done}; re-run the sync`);
      }
      lifted.push(it);
    }
    return { results, lifted, left };
  }
  if (!flags.merge) {
    const check = await batchInChunks(client, items, true);
    const conflicts = check.filter((r) => r.code === 'exists');
    if (conflicts.length) {
      throw new CliError(
        `${conflicts.length} of ${items.length} host(s) are already blocked; nothing was imported — add --merge to merge into the existing blocks`,
        EXIT.CONFLICT,
        conflicts.map((c) => `${c.id}: already blocked`),
      );
    }
  }
  return { results: await importChunks(client, items) };
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
    .option('--sync', "like 'yarn rmadmin -refreshNodes': also lift the blocks this file created earlier whose host is no longer in it (blocks made by hand are never lifted); implies --merge")
    .option('--source <name>', 'record the blocks as made by NAME instead of exclude-file:<absolute path> (keep one name when the file moves)')
    .option('--dry-run', 'show what would be imported and change nothing');
  addCommonOptions(cmd).action(
    runAction(async (file: string, rawFlags: ImportFlags & { gracefulTimeout?: string }) => {
      const flags: ImportFlags = { ...rawFlags, g: rawFlags.gracefulTimeout };
      const now = Date.now();
      const plan = planImport(file, flags, now);
      if (!plan.planned.length && !plan.sync) {
        note(`${file} names no hosts; nothing to import`);
        return;
      }
      const outcome = await withClient(flags, (c) => runImport(c, plan.planned, flags, plan.sync), { create: true, dryRun: !!flags.dryRun });
      if (flags.output === 'json' || flags.output === 'yaml') {
        const { results, effect, lifted, left } = outcome;
        const sync = plan.sync;
        const doc = { file, format: plan.format, dryRun: !!flags.dryRun, results, ...(sync ? { source: sync.source, lifted: lifted ?? [], ...(left?.length ? { left } : {}) } : {}), ...(effect ? { effect } : {}) };
        write(flags.output === 'json' ? toJson(doc) : toYaml(doc));
      } else printImport(file, plan, outcome, flags, now);
      const conflicts = outcome.results.filter((r) => r.status === 409);
      if (conflicts.length && flags.dryRun) throw new CliError(`${conflicts.length} host(s) are already blocked: the import would be refused without --merge`, EXIT.CONFLICT);
      if (conflicts.length) throw new CliError(`${conflicts.length} host(s) were blocked meanwhile and not merged; re-run with --merge`, EXIT.CONFLICT);
    }),
  );
}

interface ImportPlan {
  format: string;
  planned: Planned[];
  /** --sync: the source whose blocks the file no longer names are lifted. */
  sync: { source: string } | undefined;
}

/** The file read and planned with the flags applied, every problem found locally by the server's rules (then nothing is sent). */
function planImport(file: string, flags: ImportFlags, now: number): ImportPlan {
  if (flags.timeout !== undefined && flags.until !== undefined) throw usage('give either --timeout or --until, not both');
  const text = readInput(file);
  const format = flags.format && flags.format !== 'auto' ? flags.format : file.toLowerCase().endsWith('.json') ? 'json' : formatOf(file);
  if (flags.sync && format === 'json') throw usage('--sync applies to exclude files (YARN XML or plain text), not to a JSON export');
  if (flags.source !== undefined) {
    const errs: string[] = [];
    parseSource(flags.source, errs);
    if (errs.length) throw usage(`--source: ${errs[0]}`);
  }
  const planned = format === 'json' ? planJson(file, text, flags, now) : planExcludeFile(file, text, format, flags);
  // -g is an evacuation timeout: a MARK_BLOCKED block releases nothing, so say it does nothing now.
  const blocks = planned.filter((p) => p.item.action === MARK_BLOCKED).length;
  if (flags.g !== undefined && blocks > 0) {
    note(`warning: -g ${flags.g} does nothing for the ${blocks} MARK_BLOCKED block(s) (${flags.action ? '--action block' : 'as the file says'}): they release no containers; it is kept with them only for a later merge into an evacuation`);
  }
  const sync = flags.sync ? { source: excludeFileSource(file, flags) } : undefined;
  if (sync) flags.merge = true;
  for (const p of planned) {
    if (flags.scope !== undefined) p.item.scope = flags.scope;
    if (flags.timeout !== undefined) {
      delete p.item.endTimestamp;
      p.item.timeout = timeoutWire(parseBlockTimeout(flags.timeout));
    }
    if (flags.until !== undefined) p.item.endTimestamp = String(parseUntil(flags.until));
    if (flags.merge) p.item.allowMerge = true;
  }
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
  return { format, planned, sync };
}

/** The import's outcome in words: each item, what the sync lifted or left, and a dry run's effect. */
function printImport(file: string, plan: ImportPlan, outcome: ImportOutcome, flags: ImportFlags, now: number): void {
  const { results, effect, lifted, left } = outcome;
  const counts = new Map<string, number>();
  for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  const p = painter(flags);
  const label = plan.format === 'yarn-xml' ? 'YARN XML' : plan.format === 'text' ? 'plain text' : 'JSON';
  write(`${flags.dryRun ? `${p.yellow('dry run:')} would import` : 'imported'} ${results.length} item(s) from ${file} (${label}): ${summary}\n`);
  for (const r of results) {
    const out = r.outcome.padEnd(9);
    write(r.item ? `  ${out} ${itemSummary(r.item, now)}\n` : `  ${out} ${r.id}: ${(r.errors ?? []).join('; ')}\n`);
    for (const w of r.warnings ?? []) note(`warning: ${r.id}: ${w}`);
  }
  if (plan.sync) {
    const l = lifted ?? [];
    write(`${flags.dryRun ? 'would lift' : 'lifted'} ${l.length} block(s) ${plan.sync.source} created whose host is no longer in the file${l.length ? ':' : ''}\n`);
    for (const it of l) {
      const changed = it.updatedAt && it.updatedAt !== it.createdAt ? ` (last changed by ${it.updatedBy ?? '?'} at ${isoTime(wireMs(it.updatedAt))})` : '';
      write(`  ${'lift'.padEnd(9)} ${itemSummary(it, now)}${changed}\n`);
    }
    for (const it of left ?? []) write(`  ${'left'.padEnd(9)} ${itemSummary(it, now)} (blocked again by ${it.createdBy ?? 'someone'} while the sync ran: not the file's)\n`);
  }
  if (effect) write(effectLines(effect, p) + 'nothing was changed\n');
}
