/**
 * The blocklist as the detector reads it: the store's items, listed again only when the store's
 * version moved, and what they say about one job's node blocks. Moved out of detector.ts (the
 * runner) unchanged.
 */
import { appliesTo, inForce, isEffective } from '../model/effective';
import { BlockedItem } from '../model/item';
import { BlocklistStore } from '../store/store';
import { EffectiveBlock } from './auto-blocks';

/**
 * The store's items, listed again only when its version() moved. A ZooKeeper list is a
 * getChildren and a getData per item: every pass of every job's detector listing anew was, at a
 * thousand jobs polling every 10 s and 1,000 items, 100,000 reads a second for an unchanged set;
 * version() is one stat. The version is read before the list, so a change in between is listed
 * again next pass, never missed. What is in force still follows the clock (inForce at `now`).
 */
export class ListedItems {
  private listed: { version: string; items: readonly BlockedItem[] } | undefined;

  constructor(private readonly store: Pick<BlocklistStore, 'list'> & Partial<Pick<BlocklistStore, 'version'>>) {}

  async get(): Promise<readonly BlockedItem[]> {
    const { store } = this;
    if (!store.version) return store.list();
    const version = await store.version();
    if (this.listed?.version === version) return this.listed.items;
    const items = await store.list();
    this.listed = { version, items };
    return items;
  }
}

/**
 * The node blocks in force for the job `appId` at `now` (host → block), the hosts whose item is
 * in force for other jobs only, and those items' stamps (created:updated, which a refused join is
 * filed under).
 */
export function jobBlocks(items: readonly BlockedItem[], appId: string, now: number): { blocked: Map<string, EffectiveBlock>; heldByOtherJobs: Set<string>; itemStamps: Map<string, string> } {
  const blocked = new Map<string, EffectiveBlock>();
  for (const it of inForce(items, appId, now)) {
    if (it.kind !== 'node') continue;
    blocked.set(it.node, { itemId: it.id, by: it.updated.by, end: it.endTimestamp, action: it.action });
  }
  const heldByOtherJobs = new Set<string>();
  const itemStamps = new Map<string, string>();
  for (const it of items) {
    if (it.kind !== 'node' || !isEffective(it, now) || appliesTo(it, appId)) continue;
    heldByOtherJobs.add(it.id);
    itemStamps.set(it.id, `${it.created.at}:${it.updated.at}`);
  }
  return { blocked, heldByOtherJobs, itemStamps };
}
