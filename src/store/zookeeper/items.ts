/**
 * The store's items as znodes (layout in zookeeper/paths.ts): decoding a znode into an item, the
 * change marker every write carries, the skeleton the items live under, reading all children, and
 * the compare-and-set port cas-add.ts drives. The store's operations (zookeeper/zookeeper-store.ts), its
 * expiry (zookeeper/expiry.ts) and its records (zookeeper/records.ts) all go through this, so the
 * znode format has one owner.
 *
 * Why every write is a multi with a setData on the items znode: the multi is atomic, so the change
 * marker (the items znode's mzxid) moves iff the change committed, and watchers of that one znode
 * hear of every change (a parent's own stat moves only on child create/delete, not on a merge).
 */
import { BlockedItem } from '../../model/item';
import { Clock } from '../../core/clock';
import { CasPort } from '../cas-add';
import { Deadline, retry } from '../retry';
import { CorruptItemError, decodeStored } from '../codec';
import { QuarantinedRow, quarantinedRow } from '../quarantine';
import { ZkLayout, decodeId } from './paths';
import { ZkOp, ZkSession } from './session';
import { ZK, hasCode } from './errors';
import { FailureContext, readFailure } from './store-failures';

export const EMPTY = Buffer.alloc(0);
/** Children are read this many at a time (the client pipelines them). */
export const READ_BATCH = 256;

export interface ItemRow {
  item: BlockedItem;
  version: number;
}

export class ZkItems implements FailureContext {
  constructor(
    readonly session: ZkSession,
    readonly layout: ZkLayout,
    readonly clock: Clock,
    readonly operationTimeoutMs: number,
    readonly description: string,
  ) {}

  stateName(): string {
    return this.session.stateName();
  }

  /** Retries a step after connection loss until the deadline; other errors pass through. */
  retrying<T>(d: Deadline, step: () => Promise<T>): Promise<T> {
    return retry({ deadline: d, clock: this.clock, classify: readFailure }, step);
  }

  decode(id: string, data: Buffer): BlockedItem {
    return decodeStored(id, data.toString('utf8'), `item '${id}' at ${this.layout.itemPath(id)}`);
  }

  /** The change-marker op that goes into every write's multi. */
  bump(): ZkOp {
    return { op: 'set', path: this.layout.items, data: EMPTY, version: -1 };
  }

  /** A versioned delete of one item, with the change marker. */
  removeAt(path: string, version: number, d: Deadline): Promise<void> {
    return this.session.multi([{ op: 'remove', path, version }, this.bump()], d.left());
  }

  /**
   * Makes sure the chroot, the root and the items znode exist (a plain client needs the chroot to
   * exist already, so the store creates it).
   */
  async ensureSkeleton(d: Deadline): Promise<void> {
    for (const p of this.layout.skeleton()) {
      // exists first: creating an existing node under a parent we may not write to would be NO_AUTH.
      if (await this.retrying(d, () => this.session.exists(p, d.left()))) continue;
      await this.retrying(d, async () => {
        try {
          await this.session.create(p, EMPTY, d.left());
        } catch (e) {
          if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
        }
      });
    }
  }

  /** Every child with its data and version; children deleted meanwhile and corrupt ones are left out (`bad`). */
  async readAll(d: Deadline, bad: QuarantinedRow[] = []): Promise<ItemRow[]> {
    const names = await this.retrying(d, () => this.session.getChildren(this.layout.items, d.left()));
    names.sort();
    const out: ItemRow[] = [];
    for (let i = 0; i < names.length; i += READ_BATCH) {
      const batch = names.slice(i, i + READ_BATCH);
      const read = await Promise.all(
        batch.map(async (name) => {
          const id = decodeId(name);
          if (id === undefined) {
            bad.push({ id: name, reason: `znode ${this.layout.items}/${name} is not an item this store wrote (bad name; remove it with zkCli)` });
            return undefined;
          }
          const cur = await this.retrying(d, () => this.session.getData(`${this.layout.items}/${name}`, d.left()));
          if (!cur) return undefined;
          try {
            return { item: this.decode(id, cur.data), version: cur.stat.version };
          } catch (e) {
            if (!(e instanceof CorruptItemError)) throw e;
            bad.push(quarantinedRow(e, id));
            return undefined;
          }
        }),
      );
      for (const r of read) if (r) out.push(r);
    }
    return out;
  }

  /** Items as versioned znodes for cas-add.ts; every write is a multi with the change marker. */
  casPort(d: Deadline): CasPort<number> {
    return {
      read: async (id) => {
        const cur = await this.session.getData(this.layout.itemPath(id), d.left());
        return cur ? { item: this.decode(id, cur.data), version: cur.stat.version, text: cur.data.toString('utf8') } : undefined;
      },
      create: async (id, text) => {
        try {
          await this.session.multi([{ op: 'create', path: this.layout.itemPath(id), data: Buffer.from(text) }, this.bump()], d.left());
        } catch (e) {
          // NO_NODE on a create: the skeleton itself is gone (removed by hand); make it, then retry.
          if (hasCode(e, ZK.NO_NODE) && !(await this.session.exists(this.layout.items, d.left()))) await this.ensureSkeleton(d);
          throw e;
        }
      },
      replace: (id, text, version) =>
        this.session.multi([{ op: 'set', path: this.layout.itemPath(id), data: Buffer.from(text), version }, this.bump()], d.left()).then(() => undefined),
    };
  }
}
