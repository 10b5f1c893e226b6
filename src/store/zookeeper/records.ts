/**
 * Named records on the ZooKeeper store (BlocklistStore.readRecord/writeRecord: the detector keeps
 * its state there, each job its evacuation starts): one znode per key under <base>/records, plain
 * UTF-8. Apart from the items because they follow other rules: no change marker (a record is not
 * part of the blocklist the engines watch). writeRecord: last writer wins; replaceRecord:
 * compare-and-set (versioned setData).
 */
import { checkRecordKey, StoreUnavailableError } from '../store';
import { Deadline } from '../retry';
import { EMPTY, ZkItems } from './items';
import { decodeId } from './paths';
import { ZK, hasCode } from './errors';
import { unavailable } from './store-failures';

export async function readRecord(items: ZkItems, key: string): Promise<string | undefined> {
  checkRecordKey(key);
  const d = new Deadline(items.operationTimeoutMs);
  try {
    const cur = await items.retrying(d, () => items.session.getData(items.layout.recordPath(key), d.left()));
    return cur ? cur.data.toString('utf8') : undefined;
  } catch (e) {
    throw unavailable(items, e, `read record '${key}'`);
  }
}

/** setData, or create (with the records parent on first use); last writer wins. */
export async function writeRecord(items: ZkItems, key: string, value: string): Promise<void> {
  checkRecordKey(key);
  const { session, layout } = items;
  const d = new Deadline(items.operationTimeoutMs);
  const path = layout.recordPath(key);
  const data = Buffer.from(value, 'utf8');
  try {
    for (let round = 0; round < 5; round++) {
      try {
        await items.retrying(d, () => session.multi([{ op: 'set', path, data, version: -1 }], d.left()));
        return;
      } catch (e) {
        if (!hasCode(e, ZK.NO_NODE)) throw e;
      }
      try {
        if (!(await items.retrying(d, () => session.exists(layout.records, d.left())))) {
          await items.retrying(d, () => session.create(layout.records, EMPTY, d.left())).catch((e: unknown) => {
            if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
          });
        }
        await items.retrying(d, () => session.create(path, data, d.left()));
        return;
      } catch (e) {
        if (!hasCode(e, ZK.NODE_EXISTS)) throw e; // created meanwhile by another writer: set it
      }
    }
    throw new StoreUnavailableError(`zookeeper store ${items.description}: write record '${key}' kept racing other writers`);
  } catch (e) {
    throw unavailable(items, e, `write record '${key}'`);
  }
}

/**
 * Writes `value` only if the record's text is still `expected` (undefined: no record): the text is
 * compared after getData, and the setData names the version that getData saw, so a writer between
 * the two makes it fail (BAD_VERSION) instead of being overwritten. false = changed meanwhile. A
 * set whose reply was lost and that was applied answers false on its retry (BAD_VERSION): the
 * caller re-reads and finds its own text, which a merge leaves as it is.
 */
export async function replaceRecord(items: ZkItems, key: string, expected: string | undefined, value: string): Promise<boolean> {
  checkRecordKey(key);
  const { session, layout } = items;
  const d = new Deadline(items.operationTimeoutMs);
  const path = layout.recordPath(key);
  const data = Buffer.from(value, 'utf8');
  const lost = (e: unknown): boolean => hasCode(e, ZK.BAD_VERSION) || hasCode(e, ZK.NO_NODE) || hasCode(e, ZK.NODE_EXISTS);
  try {
    const cur = await items.retrying(d, () => session.getData(path, d.left()));
    if ((cur ? cur.data.toString('utf8') : undefined) !== expected) return false;
    try {
      if (cur) {
        await items.retrying(d, () => session.multi([{ op: 'set', path, data, version: cur.stat.version }], d.left()));
        return true;
      }
      if (!(await items.retrying(d, () => session.exists(layout.records, d.left())))) {
        await items.retrying(d, () => session.create(layout.records, EMPTY, d.left())).catch((e: unknown) => {
          if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
        });
      }
      await items.retrying(d, () => session.create(path, data, d.left()));
      return true;
    } catch (e) {
      if (lost(e)) return false;
      throw e;
    }
  } catch (e) {
    throw unavailable(items, e, `replace record '${key}'`);
  }
}

/** The keys under <base>/records that start with `prefix`; none before the first record. */
export async function recordKeys(items: ZkItems, prefix: string): Promise<string[]> {
  const d = new Deadline(items.operationTimeoutMs);
  try {
    const names = await items.retrying(d, () => items.session.getChildren(items.layout.records, d.left())).catch((e: unknown) => {
      if (hasCode(e, ZK.NO_NODE)) return [] as string[];
      throw e;
    });
    const out: string[] = [];
    for (const n of names) {
      const key = decodeId(n);
      if (key !== undefined && key.startsWith(prefix)) out.push(key);
    }
    return out;
  } catch (e) {
    throw unavailable(items, e, `list records '${prefix}*'`);
  }
}

/** A versioned delete of a record whose text is still `expected`; false = changed or gone. */
export async function removeRecord(items: ZkItems, key: string, expected: string): Promise<boolean> {
  checkRecordKey(key);
  const d = new Deadline(items.operationTimeoutMs);
  const path = items.layout.recordPath(key);
  try {
    const cur = await items.retrying(d, () => items.session.getData(path, d.left()));
    if (!cur || cur.data.toString('utf8') !== expected) return false;
    try {
      await items.retrying(d, () => items.session.multi([{ op: 'remove', path, version: cur.stat.version }], d.left()));
      return true;
    } catch (e) {
      if (hasCode(e, ZK.BAD_VERSION) || hasCode(e, ZK.NO_NODE)) return false;
      throw e;
    }
  } catch (e) {
    throw unavailable(items, e, `remove record '${key}'`);
  }
}
