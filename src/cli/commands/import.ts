/**
 * `blocklist import FILE`: YARN exclude files (XML or plain text, read exactly as Hadoop's
 * HostsFileReader reads them) or our own JSON export, written through the batch endpoint.
 *
 * All or nothing, as far as a client can make it: the whole file is parsed and validated with the
 * server's rules first (a malformed file names its line and host, and nothing is sent); without
 * --merge a dry-run pass checks for hosts already blocked before anything is written, so a
 * conflict imports nothing either (exit 3).
 *
 * Any size the parser accepts: the items go in chunks (CHUNK_ITEMS items and CHUNK_BYTES of JSON at
 * most, so they fit a sidecar's default request limit; a chunk a sidecar still refuses with 413 is
 * split in two and sent again — a 413 writes nothing). Each chunk is all or nothing (the server
 * validates a batch whole); when a later chunk fails, the error says how many items — the first N
 * of the file, up to which host — were imported, so `--merge` can finish the job. With --store
 * there is no network: the batches are the API's largest (10,000 items, one SQLite transaction
 * each), so a file of up to 10,000 hosts is imported all or nothing.
 *
 * Provenance: every item an exclude file creates carries `source: exclude-file:<absolute path>`
 * (or --source NAME), and merges keep it. `--sync` makes the import act like `yarn rmadmin
 * -refreshNodes` on that file: the file's hosts are blocked (merged into blocks that exist), and
 * the blocks this file created earlier whose host is no longer in it are lifted. Blocks made by
 * hand or by another file are never lifted, even when their host left the file; a block this file
 * created is lifted even when someone merged into it since (the file created it, and a merge adds
 * to a block without taking it over — the report names who changed it last).
 *
 * Timeouts, as NodesListManager decides them: a host's own <timeout> beats -g, which beats the
 * sidecar's configured default (the item then carries no evacuationTimeout); negative = forever.
 */
import { scopeCovers } from '../../model/scope';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ApiItem, BatchItem, BatchResult, BlocklistClient, DryRunEffect, SidecarStatus, itemPath } from '../client';
import { CapBasis, previewCap } from '../../sync/preview';
import { CliError, runAction, usage } from '../errors';
import { EXIT } from '../exit-codes';
import { ExcludeFileError, formatOf, parseExcludeFile } from '../exclude-file';
import { isoTime, toJson, toYaml, wireMs } from '../format';
import { effectLines, itemSummary } from '../render';
import { parseBlockTimeout, parseEvacuationTimeout, parseUntil } from '../time-input';
import { BlockedItem, EVACUATE, LONG_MAX_TEXT } from '../../model/item';
import { parseBlockRequest, parseItemRef, parseSource } from '../../model/validate';
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
  sync?: boolean;
  source?: string;
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

/** The `source` an exclude file's blocks carry: the file's absolute path (symlinks not resolved: the name the operator uses stays stable when a config tool swaps the target). */
export function excludeFileSource(file: string, flags: Pick<ImportFlags, 'source'>): string {
  return flags.source ?? `exclude-file:${path.resolve(file)}`;
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
  const source = excludeFileSource(file, flags);
  return entries.map((e) => {
    const item: BatchItem = { id: e.host, action, cause, source };
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
    // An export keeps who created each block, so a later `import --sync` of the exclude file still
    // finds its own blocks after a move to another store.
    const source = flags.source ?? o.source;
    if (typeof source === 'string') item.source = source;
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

/** Items per chunk sent to a sidecar, and the JSON size a chunk stays under (the default request limit is 1 MiB). */
export const CHUNK_ITEMS = 1_000;
export const CHUNK_BYTES = 256 * 1024;
/** With --store (in-process, no request limit that matters): the API's largest batch. */
const DIRECT_CHUNK_ITEMS = 10_000;

/** Consecutive runs of items within the count and size bounds. */
function chunksOf(items: BatchItem[], maxItems: number, maxBytes: number): BatchItem[][] {
  const out: BatchItem[][] = [];
  let cur: BatchItem[] = [];
  let bytes = 2;
  for (const it of items) {
    const size = JSON.stringify(it).length + 1;
    if (cur.length && (cur.length >= maxItems || bytes + size > maxBytes)) {
      out.push(cur);
      cur = [];
      bytes = 2;
    }
    cur.push(it);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** A 413 from the batch endpoint, told apart so the chunk can be split. */
class TooLarge extends Error {}

/** Raised when a chunk after the first failed: what was imported before it. */
class PartialImport extends Error {
  constructor(
    readonly failure: CliError,
    readonly imported: BatchResult[],
    readonly total: number,
  ) {
    super(failure.message);
  }
}

/**
 * One batch call per chunk, in file order. A 413 (nothing written) splits the chunk in two. A
 * failure after some chunks were written raises PartialImport (only for real writes: a dry run
 * writes nothing either way).
 */
async function batchInChunks(client: BlocklistClient, items: BatchItem[], dryRun: boolean): Promise<BatchResult[]> {
  const direct = !!client.transport.direct;
  const queue = direct ? chunksOf(items, DIRECT_CHUNK_ITEMS, Number.MAX_SAFE_INTEGER) : chunksOf(items, CHUNK_ITEMS, CHUNK_BYTES);
  const results: BatchResult[] = [];
  while (queue.length) {
    const chunk = queue.shift() as BatchItem[];
    let res: { results: BatchResult[] };
    try {
      res = await batchCall(client, chunk, dryRun);
    } catch (e) {
      if (e instanceof TooLarge && chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        queue.unshift(chunk.slice(0, half), chunk.slice(half));
        continue;
      }
      const err = e instanceof TooLarge ? new CliError(`${e.message}; nothing of this chunk was imported`, EXIT.ERROR) : e;
      if (!dryRun && results.length && err instanceof CliError) throw new PartialImport(err, results, items.length);
      throw err;
    }
    results.push(...res.results);
  }
  return results;
}

async function batchCall(client: BlocklistClient, items: BatchItem[], dryRun: boolean): Promise<{ results: BatchResult[] }> {
  const res = await client.transport.request('POST', '/blocklist', { body: items, query: dryRun ? { dryRun: 'true' } : undefined });
  if (res.status === 413) throw new TooLarge(`one host's item alone is larger than the sidecar accepts (413)`);
  if (res.status < 200 || res.status > 299) client.fail(res, 'import refused, nothing of this chunk was imported');
  return res.body as { results: BatchResult[] };
}

/**
 * `--sync`: the live blocks this source created whose host is not in the file (any kind: a file
 * names hosts, so only node blocks carry an exclude file's source).
 */
export function toLift(current: Record<string, ApiItem>, source: string, inFile: ReadonlySet<string>): ApiItem[] {
  return Object.values(current)
    .filter((it) => it.source === source && !inFile.has(it.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** An item as the server sent it, in the model's shape (what the cap's plan reads). */
function fromWire(it: ApiItem): BlockedItem {
  const slash = it.id.indexOf('/');
  const at = wireMs(it.startTimestamp);
  const out: BlockedItem = {
    id: it.id,
    kind: it.kind,
    node: it.kind === 'taskmanager' && slash > 0 ? it.id.slice(0, slash) : it.id,
    action: it.action as BlockedItem['action'],
    startTimestamp: at,
    endTimestamp: wireMs(it.endTimestamp),
    cause: it.cause,
    scope: it.scope,
    created: { by: it.createdBy ?? '', from: it.createdFrom ?? '', at },
    updated: { by: it.updatedBy ?? '', from: it.updatedFrom ?? '', at },
  };
  if (it.kind === 'taskmanager' && slash > 0) out.containerId = it.id.slice(slash + 1);
  return out;
}

/**
 * What the import would do to YARN, from the dry-run results and the current list, with the safety
 * cap applied as the sidecar's engine last applied it (src/sync/preview.ts): what the cap would
 * hold back is `deferred`, not an addition, and an EVACUATE item held back releases nothing.
 */
function importEffect(results: BatchResult[], current: Record<string, ApiItem>, app: string | undefined, cap: CapBasis | undefined, now: number, lifted: ApiItem[]): DryRunEffect {
  const before = Object.values(current).map(fromWire);
  const after = new Map(before.map((i) => [i.id, i]));
  for (const r of results) if (r.item) after.set(r.item.id, fromWire(r.item));
  for (const it of lifted) after.delete(it.id);
  const p = previewCap(before, [...after.values()], app, now, cap);
  const releases = new Set<string>();
  for (const r of results) {
    const it = r.item;
    if (!it || !scopeCovers(it.scope, app) || !p.enforced.has(it.id)) continue;
    const was = current[it.id];
    if (it.action === EVACUATE && was?.action !== EVACUATE) for (const c of it.taskManagers ?? []) releases.add(c);
  }
  return { blacklistAdditions: p.blacklistAdditions, blacklistRemovals: p.blacklistRemovals, containersToRelease: [...releases].sort(), deferred: p.deferred };
}

/** The running sidecar's cap basis (its nodes and remembered denominator), when it has an engine. */
function capOf(s: SidecarStatus): CapBasis | undefined {
  if (!s.safetyCap || !s.nodes) return undefined;
  return { nodes: s.nodes.list, runningNodesFloor: s.safetyCap.runningNodes, maxBlockedFraction: s.safetyCap.maxBlockedFraction };
}

interface ImportOutcome {
  results: BatchResult[];
  effect?: DryRunEffect;
  /** --sync: the blocks lifted (or, in a dry run, that would be). */
  lifted?: ApiItem[];
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
    for (const it of toLift(await client.list(), sync.source, inFile)) {
      const res = await client.transport.request('DELETE', itemPath(it.id));
      // 404: gone meanwhile (unblocked or ended), which is what the sync wanted.
      if (res.status === 404) continue;
      if (res.status < 200 || res.status > 299) {
        const done = lifted.length ? ` (lifted before it: ${lifted.map((l) => l.id).join(', ')})` : '';
        client.fail(res, `the file's hosts were imported, but lifting '${it.id}' failed${done}; re-run the sync`);
      }
      lifted.push(it);
    }
    return { results, lifted };
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

/** The real write, with a partial failure explained. */
async function importChunks(client: BlocklistClient, items: BatchItem[]): Promise<BatchResult[]> {
  try {
    return await batchInChunks(client, items, false);
  } catch (e) {
    if (!(e instanceof PartialImport)) throw e;
    const n = e.imported.length;
    const last = e.imported[n - 1]?.id ?? '';
    throw new CliError(
      `${e.failure.message} — ${n} of ${e.total} item(s) were imported before this (the first ${n} of the file, up to '${last}'), the other ${e.total - n} were not; re-run with --merge to import the rest`,
      e.failure.code,
      e.failure.details,
    );
  }
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
      if (flags.timeout !== undefined && flags.until !== undefined) throw usage('give either --timeout or --until, not both');
      const text = readInput(file);
      const now = Date.now();
      const fmt = flags.format && flags.format !== 'auto' ? flags.format : file.toLowerCase().endsWith('.json') ? 'json' : formatOf(file);
      if (flags.sync && fmt === 'json') throw usage('--sync applies to exclude files (YARN XML or plain text), not to a JSON export');
      if (flags.source !== undefined) {
        const errs: string[] = [];
        parseSource(flags.source, errs);
        if (errs.length) throw usage(`--source: ${errs[0]}`);
      }
      const planned = fmt === 'json' ? planJson(file, text, flags, now) : planExcludeFile(file, text, fmt, flags);
      const sync = flags.sync ? { source: excludeFileSource(file, flags) } : undefined;
      if (sync) flags.merge = true;
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
      if (!planned.length && !sync) {
        note(`${file} names no hosts; nothing to import`);
        return;
      }

      const { results, effect, lifted } = await withClient(flags, (c) => runImport(c, planned, flags, sync), { create: true, dryRun: !!flags.dryRun });
      const counts = new Map<string, number>();
      for (const r of results) counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
      const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
      if (flags.output === 'json' || flags.output === 'yaml') {
        const doc = { file, format: fmt, dryRun: !!flags.dryRun, results, ...(sync ? { source: sync.source, lifted: lifted ?? [] } : {}), ...(effect ? { effect } : {}) };
        write(flags.output === 'json' ? toJson(doc) : toYaml(doc));
      } else {
        const p = painter(flags);
        const label = fmt === 'yarn-xml' ? 'YARN XML' : fmt === 'text' ? 'plain text' : 'JSON';
        write(`${flags.dryRun ? `${p.yellow('dry run:')} would import` : 'imported'} ${results.length} item(s) from ${file} (${label}): ${summary}\n`);
        for (const r of results) {
          const out = r.outcome.padEnd(9);
          write(r.item ? `  ${out} ${itemSummary(r.item, now)}\n` : `  ${out} ${r.id}: ${(r.errors ?? []).join('; ')}\n`);
        }
        if (sync) {
          const l = lifted ?? [];
          write(`${flags.dryRun ? 'would lift' : 'lifted'} ${l.length} block(s) ${sync.source} created whose host is no longer in the file${l.length ? ':' : ''}\n`);
          for (const it of l) {
            const changed = it.updatedAt && it.updatedAt !== it.createdAt ? ` (last changed by ${it.updatedBy ?? '?'} at ${isoTime(wireMs(it.updatedAt))})` : '';
            write(`  ${'lift'.padEnd(9)} ${itemSummary(it, now)}${changed}\n`);
          }
        }
        if (effect) write(effectLines(effect, p) + 'nothing was changed\n');
      }
      const conflicts = results.filter((r) => r.status === 409);
      if (conflicts.length && flags.dryRun) throw new CliError(`${conflicts.length} host(s) are already blocked: the import would be refused without --merge`, EXIT.CONFLICT);
      if (conflicts.length) throw new CliError(`${conflicts.length} host(s) were blocked meanwhile and not merged; re-run with --merge`, EXIT.CONFLICT);
    }),
  );
}
