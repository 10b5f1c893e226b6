/**
 * What `blocklist import` will send, from the file alone: a YARN exclude file (XML or plain text,
 * read exactly as Hadoop's HostsFileReader reads them) or our own JSON export, as batch items, each
 * with where it came from (for messages); and, for `--sync`, which blocks the file no longer names.
 *
 * Timeouts, as NodesListManager decides them: a host's own <timeout> beats -g, which beats the
 * sidecar's configured default (the item then carries no evacuationTimeout); negative = forever.
 */
import * as path from 'node:path';
import { ApiItem, BatchItem } from '../client';
import { usage } from '../errors';
import { ExcludeFileError, parseExcludeFile } from '../exclude-file';
import { wireMs } from '../format';
import { evacuationTimeoutWire, parseEvacuationTimeout } from '../time-input';
import { EVACUATE, LONG_MAX_TEXT } from '../../model/item';
import { note, parseAction } from './common';

/** The import's flags that shape its items. */
export interface PlanFlags {
  /** -g, --graceful-timeout: the evacuation timeout of hosts without their own. */
  g?: string;
  action?: string;
  cause?: string;
  source?: string;
}

/** A batch item plus where it came from, for messages. */
export interface Planned {
  item: BatchItem;
  where: string;
}

/** The `source` an exclude file's blocks carry: the file's absolute path (symlinks not resolved: the name the operator uses stays stable when a config tool swaps the target). */
export function excludeFileSource(file: string, flags: Pick<PlanFlags, 'source'>): string {
  return flags.source ?? `exclude-file:${path.resolve(file)}`;
}

export function planExcludeFile(file: string, text: string, format: 'yarn-xml' | 'text', flags: PlanFlags): Planned[] {
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
  const now = Date.now();
  const out: Planned[] = [];
  for (const e of entries) {
    // The file's own action (our export's <action>) unless --action says otherwise.
    const item: BatchItem = { id: e.host, action: flags.action ? action : e.action ?? action, cause, source };
    const t = e.timeout ?? g;
    if (t !== undefined) item.evacuationTimeout = t < 0 ? -1 : evacuationTimeoutWire(t);
    if (e.end !== undefined) {
      if (e.end <= now) {
        note(`skipping line ${e.line} (${e.host}): its block ended at ${new Date(e.end).toISOString()}`);
        continue;
      }
      item.endTimestamp = String(e.end);
    }
    out.push({ item, where: `line ${e.line}: host ${e.host}` });
  }
  return out;
}

/** Our JSON export (an array of items) or GET /blocklist's map. Start times and audit stamps are re-made. */
export function planJson(file: string, text: string, flags: PlanFlags, now: number): Planned[] {
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
    if (typeof o.evacuationTimeout === 'number') item.evacuationTimeout = evacuationTimeoutWire(o.evacuationTimeout);
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

/**
 * `--sync`: the live blocks this source created whose host is not in the file (any kind: a file
 * names hosts, so only node blocks carry an exclude file's source).
 */
export function toLift(current: Record<string, ApiItem>, source: string, inFile: ReadonlySet<string>): ApiItem[] {
  return Object.values(current)
    .filter((it) => it.source === source && !inFile.has(it.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
