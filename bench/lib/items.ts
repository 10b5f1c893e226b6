/** Items for the benches, built the way the API builds them (model/merge#newItem). */
import { BlockAction, BlockedItem, MARK_BLOCKED } from '../../src/model/item';
import { newItem } from '../../src/model/merge';

export function nodeItem(host: string, now: number, action: BlockAction = MARK_BLOCKED, cause = 'bench'): BlockedItem {
  return newItem({ id: host, kind: 'node', node: host, action, end: { type: 'permanent' }, cause, scope: 'cluster', allowMerge: false }, now, { by: 'bench', from: '127.0.0.1' });
}

/** Host names that no simulated node has: the safety cap never defers them (not RUNNING). */
export const outsideHost = (i: number, prefix = 'x'): string => `${prefix}${i}.bench.invalid`;
