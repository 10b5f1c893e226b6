/**
 * The warning at block time for a host the RM does not know (a typo, the wrong case): YARN takes
 * the blacklist entry and blocks nothing until a node of that name joins, so the block is kept
 * (a node may be blocked before it joins) but the operator is told, with the nearest names.
 *
 * The answer to the PUT carries the state of the last sync pass, from before this block; the pass
 * the block kicks reads the node list if the host is new to it, so the item is read again for a
 * moment until that pass has judged it.
 */
import { ApiItem, BlocklistClient } from './client';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The item once a pass has judged it (not pending), or as last read after `waitMs`. */
export async function settledItem(client: BlocklistClient, item: ApiItem, waitMs = 2_000, stepMs = 100): Promise<ApiItem> {
  let cur = item;
  const until = Date.now() + waitMs;
  while (cur.sync?.state === 'pending' && Date.now() < until) {
    await sleep(stepMs);
    cur = await client.get(item.id);
  }
  return cur;
}

/** The warning line for an item in state unknown-host, or undefined. */
export function unknownHostWarning(item: ApiItem): string | undefined {
  if (item.sync?.state !== 'unknown-host') return undefined;
  const nearest = item.sync.nearest ?? [];
  const hint = nearest.length ? `; did you mean ${nearest.map((n) => `'${n}'`).join(' or ')}?` : '';
  return `warning: the ResourceManager knows no node '${item.id}': the block is stored and pushed, but YARN blocks nothing until a node of that name joins (names are matched exactly, case included)${hint}`;
}
