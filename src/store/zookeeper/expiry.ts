/**
 * Expiry on the shared ZooKeeper store, where every sidecar of the cluster runs the same expiry job:
 * versioned deletes of every item with end <= now. Of several sidecars expiring at once exactly one
 * delete succeeds per item, and only that caller reports it (the audit must not say it twice).
 */
import { BlockedItem } from '../../model/item';
import { Logger } from '../../core/logger';
import { Deadline, retry } from '../retry';
import { ItemRow, READ_BATCH, ZkItems } from './items';
import { casFailure, notInTime, unavailable } from './store-failures';

/**
 * An item merged meanwhile (BAD_VERSION) is re-read and deleted only if still expired; one already
 * deleted (NO_NODE) belongs to the caller that deleted it. Corrupt items are skipped (quarantined,
 * never expired): expiry of the rest must not stop. If the ensemble fails midway, the items already
 * removed are still returned (the audit needs them); only a call that removed nothing and failed
 * throws.
 */
export async function removeExpired(items: ZkItems, now: number, logger: Logger): Promise<BlockedItem[]> {
  const d = new Deadline(items.operationTimeoutMs);
  let rows: ItemRow[];
  try {
    rows = await items.readAll(d);
  } catch (e) {
    throw unavailable(items, e, 'removeExpired (read)');
  }
  const removed: BlockedItem[] = [];
  const failures: unknown[] = [];
  const expired = rows.filter((r) => r.item.endTimestamp <= now);
  for (let i = 0; i < expired.length; i += READ_BATCH) {
    await Promise.all(
      expired.slice(i, i + READ_BATCH).map(async (r) => {
        try {
          const gone = await expireOne(items, r, now, d);
          if (gone) removed.push(gone);
        } catch (e) {
          failures.push(e);
        }
      }),
    );
  }
  if (failures.length) {
    const err = unavailable(items, failures[0], `removeExpired (${failures.length} of ${expired.length} deletes)`);
    if (!removed.length) throw err;
    logger.warn('expiry removed some items and failed on others; the next run retries them', { removed: removed.length, failed: failures.length, error: err.message });
  }
  return removed;
}

/**
 * Deletes one expired item with the version read. A lost round is read again: gone means another
 * sidecar removed it (reported there) — or, after a lost reply, we did; extended by a merge
 * meanwhile means it is not expired any more.
 */
function expireOne(items: ZkItems, row: ItemRow, now: number, d: Deadline): Promise<BlockedItem | undefined> {
  const { item } = row;
  const path = items.layout.itemPath(item.id);
  let unsure = false;
  return retry(
    {
      deadline: d,
      clock: items.clock,
      classify: casFailure,
      initialMs: 50,
      maxMs: 50,
      onTransient: () => (unsure = true),
      exhausted: (last) => notInTime(items, `expiring '${item.id}'`, last),
    },
    async (round) => {
      let cur = row;
      if (round > 0) {
        const again = await items.session.getData(path, d.left());
        if (!again) return unsure ? item : undefined;
        cur = { item: items.decode(item.id, again.data), version: again.stat.version };
        if (cur.item.endTimestamp > now) return undefined;
      }
      await items.removeAt(path, cur.version, d);
      return cur.item;
    },
  );
}
