/**
 * When each evacuation of *this job* started, pure. One blocklist may be shared by many jobs (the
 * ZooKeeper store): a cluster-wide EVACUATE item is applied by each job on its own — at once by
 * one, hours later by another whose safety cap held it back — so the grace period of graceful
 * decommission ("the maximal time to wait for running containers … to complete") counts from the
 * moment the node went on *that job's* blacklist, and the start is the job's, not the item's.
 *
 * Each job keeps its starts in one named record of the store (`evacuation.<applicationId>`),
 * written only by that job's sidecar: no job ever waits for, contends with or overwrites another's
 * start, a job that is gone leaves others alone, and a sidecar restart reads its starts back. An
 * entry names the item by its id and its creation instant, so a block lifted and made again (a
 * new item under the same id) starts afresh; entries of items that are gone are dropped with the
 * next write.
 *
 * Items stored by versions before this record carry one start for everyone (`evacuationSince`).
 * It is taken as this job's start only where this job had applied the block already (its node is
 * on this job's blacklist, or a task manager item, which only its own job evacuates): there it was
 * this job's start, or a job before it; anywhere else the old start is another job's and this
 * job's grace period starts now.
 */
import { BlockedItem } from '../model/item';
import { Steps, finish, stepEnds } from './steps';
import { applicationOfContainer } from '../model/ids';

/** One evacuation start of this job: `created` is the item's creation instant (which block it was). */
export interface JobStart {
  since: number;
  created: number;
}

/** This job's evacuation starts: item id → start. */
export type JobStarts = ReadonlyMap<string, JobStart>;

/** The store record holding one job's starts (BlocklistStore.readRecord/writeRecord). */
export function startsRecordKey(applicationId: string): string {
  return `${STARTS_RECORD_PREFIX}${applicationId}`;
}

/** The prefix of every job's record: a sidecar looks for the records of other jobs under it. */
export const STARTS_RECORD_PREFIX = 'evacuation.';

/** This job's start of an item, if it is this very block's (not an earlier block of the same id). */
export function startOf(starts: JobStarts, item: BlockedItem): number | undefined {
  const s = starts.get(item.id);
  return s !== undefined && s.created === item.created.at ? s.since : undefined;
}

/**
 * The start of an evacuation this job has no start for yet, evaluated in the pass that puts the
 * item's node on its blacklist: now, or the item's old single start where this job had applied the
 * block before it kept its own (`onBlacklist`: the node or rack is on this job's YARN blacklist
 * already).
 */
export function freshStart(item: BlockedItem, onBlacklist: ReadonlySet<string>, now: number): number {
  const old = item.evacuationSince;
  if (old === undefined) return now;
  const appliedBefore = item.kind === 'taskmanager' || onBlacklist.has(item.node);
  return appliedBefore ? Math.min(old, now) : now;
}

/**
 * Whether this job has anything to evacuate for the item at all: a task manager item names one
 * container, and a container belongs to one application (its id says which); another job's task
 * manager is never ours, so it needs no start of ours.
 */
export function mayEvacuate(item: BlockedItem, applicationId: string | undefined): boolean {
  if (item.kind !== 'taskmanager' || item.containerId === undefined || applicationId === undefined) return true;
  const app = applicationOfContainer(item.containerId);
  return !app.ok || app.value === applicationId;
}

/**
 * The starts to keep after a pass: those of blocks still stored, plus the ones this pass started
 * (an older start of the same block wins: the earliest moment is the start).
 */
export function nextStarts(current: JobStarts, items: readonly BlockedItem[], fresh: JobStarts): Map<string, JobStart> {
  return finish(nextStartsInSteps(current, items, fresh));
}

/** nextStarts, handing control back every STEP_ITEMS entries (steps.ts). */
export function* nextStartsInSteps(current: JobStarts, items: readonly BlockedItem[], fresh: JobStarts): Steps<Map<string, JobStart>> {
  const live = yield* liveBlocksInSteps(items);
  const out = new Map<string, JobStart>();
  let n = 0;
  for (const [id, s] of yield* unionStartsInSteps(current, fresh)) {
    if (live.get(id) === s.created) out.set(id, s);
    if (stepEnds(++n)) yield;
  }
  return out;
}

/** The blocks stored now: item id → creation instant (which block it is). */
export function liveBlocks(items: readonly BlockedItem[]): Map<string, number> {
  return finish(liveBlocksInSteps(items));
}

function* liveBlocksInSteps(items: readonly BlockedItem[]): Steps<Map<string, number>> {
  const live = new Map<string, number>();
  for (const i of items) if (stepEnds(live.set(i.id, i.created.at).size)) yield;
  return live;
}

/**
 * Two copies of one job's starts (two sidecars of the job, or memory and a record written
 * meanwhile): the union; of one block the earliest start, of two blocks under one id the newer block.
 */
export function unionStarts(a: JobStarts, b: JobStarts): Map<string, JobStart> {
  return finish(unionStartsInSteps(a, b));
}

function* unionStartsInSteps(a: JobStarts, b: JobStarts): Steps<Map<string, JobStart>> {
  const out = new Map<string, JobStart>(a);
  let n = 0;
  for (const [id, s] of b) {
    const had = out.get(id);
    if (had === undefined || (had.created === s.created ? s.since < had.since : s.created > had.created)) out.set(id, s);
    if (stepEnds(++n)) yield;
  }
  return out;
}

/**
 * How old a block must be before a record naming it may be judged by whether it is still stored:
 * a reader's copy of the items may lag a new block by a poll or a watch round trip, never by a
 * day, so a start of a block made within the day is never taken for one whose block is gone.
 */
export const GONE_MARGIN_MS = 24 * 3_600_000;

/**
 * Whether a job's record helps nobody any more: each start in it names a block that is gone (not
 * stored, or the id holds a newer block) and was made more than GONE_MARGIN_MS ago, or it holds
 * none. Such a record is what a job leaves behind when it ends (no sidecar is told that its stop is
 * its job's last); any sidecar may remove it, by a compare-and-set delete, so a job that records a
 * start meanwhile keeps its record.
 */
export function helpsNobody(starts: JobStarts, live: ReadonlyMap<string, number>, now: number): boolean {
  for (const [id, s] of starts) if (live.get(id) === s.created || now - s.created < GONE_MARGIN_MS) return false;
  return true;
}

/** Equal contents (nothing to write). */
export function sameStarts(a: JobStarts, b: JobStarts): boolean {
  if (a.size !== b.size) return false;
  for (const [id, s] of a) {
    const o = b.get(id);
    if (!o || o.since !== s.since || o.created !== s.created) return false;
  }
  return true;
}

const RECORD_VERSION = 1;

/**
 * The record's text: `{"v":1,"starts":{"<item id>":["<since>","<created>"],…}}`, epoch ms as
 * strings of digits like every timestamp the store keeps; ids in order, so equal starts are equal
 * text.
 */
export function encodeStarts(starts: JobStarts): string {
  return finish(encodeStartsInSteps(starts));
}

/** encodeStarts, handing control back every STEP_ITEMS entries (steps.ts). */
export function* encodeStartsInSteps(starts: JobStarts): Steps<string> {
  // Written entry by entry rather than through an object for JSON.stringify: at 10,000 starts that
  // object cost a dictionary-mode build, and an id of digits only would have been put first.
  const ids = [...starts.keys()].sort();
  const entries: string[] = new Array<string>(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const s = starts.get(ids[i])!;
    entries[i] = `${JSON.stringify(ids[i])}:["${Math.trunc(s.since)}","${Math.trunc(s.created)}"]`;
    if (stepEnds(i + 1)) yield;
  }
  return `{"v":${RECORD_VERSION},"starts":{${entries.join(',')}}}`;
}

/**
 * The record back to starts. Absent = none yet. Anything unreadable is reported and yields no
 * starts (each evacuation then starts at its next evaluation: later, never earlier — a grace
 * period may grow, it is never cut short by a bad record).
 */
export function decodeStarts(text: string | undefined): { starts: Map<string, JobStart>; problem?: string } {
  const starts = new Map<string, JobStart>();
  if (text === undefined) return { starts };
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return { starts, problem: 'the evacuation-start record is not JSON; evacuations start afresh' };
  }
  if (!isObject(o) || o.v !== RECORD_VERSION || !isObject(o.starts)) return { starts, problem: `the evacuation-start record has an unknown shape (version ${isObject(o) ? String(o.v) : '?'}); evacuations start afresh` };
  let bad = 0;
  for (const [id, v] of Object.entries(o.starts)) {
    const since = Array.isArray(v) ? epochMs(v[0]) : undefined;
    const created = Array.isArray(v) ? epochMs(v[1]) : undefined;
    if (since === undefined || created === undefined) bad++;
    else starts.set(id, { since, created });
  }
  return bad ? { starts, problem: `${bad} unreadable entr${bad === 1 ? 'y' : 'ies'} in the evacuation-start record left out (those evacuations start afresh)` } : { starts };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function epochMs(x: unknown): number | undefined {
  if (typeof x !== 'string' || !/^[0-9]{1,16}$/.test(x)) return undefined;
  return Number(x);
}
