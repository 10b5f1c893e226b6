/** Item and id builders for the sync tests (pure: no store, no YARN). */
import { BlockAction, BlockedItem, CLUSTER_SCOPE, EVACUATE, MARK_BLOCKED, PERMANENT } from '../../src/model/item';

export const APP = 'application_1652313600000_0001';
export const attemptOf = (n: number): string => `appattempt_1652313600000_0001_${String(n).padStart(6, '0')}`;
export const containerOf = (attempt: number, n: number): string => `container_e01_1652313600000_0001_${String(attempt).padStart(2, '0')}_${String(n).padStart(6, '0')}`;

export interface ItemOpts {
  action?: BlockAction;
  start?: number;
  end?: number;
  scope?: string;
  evacuationTimeout?: number;
  /** The one start for every job that versions before per-job starts stored on the item; absent/`null`: none. */
  evacuationSince?: number | null;
  cause?: string;
}

export function nodeItem(host: string, o: ItemOpts = {}): BlockedItem {
  const start = o.start ?? 1_652_313_600_000;
  const action = o.action ?? MARK_BLOCKED;
  const it: BlockedItem = {
    id: host,
    kind: 'node',
    node: host,
    action,
    startTimestamp: start,
    endTimestamp: o.end ?? PERMANENT,
    cause: o.cause ?? 'test',
    scope: o.scope ?? CLUSTER_SCOPE,
    created: { by: 'test', from: 'test', at: start },
    updated: { by: 'test', from: 'test', at: start },
  };
  if (o.evacuationTimeout !== undefined) it.evacuationTimeout = o.evacuationTimeout;
  if (action === EVACUATE && o.evacuationSince != null) it.evacuationSince = o.evacuationSince;
  return it;
}

export function tmItem(host: string, containerId: string, o: ItemOpts = {}): BlockedItem {
  const it = nodeItem(host, o);
  return { ...it, id: `${host}/${containerId}`, kind: 'taskmanager', containerId };
}

