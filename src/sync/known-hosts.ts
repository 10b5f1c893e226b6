/**
 * The RM's node list as last read, indexed once per list: the API asks for every item of
 * GET /blocklist whether its host is one the RM knows, and the metrics per scrape which hosts a
 * rack covers.
 */
import type { KnownNodes } from '../metrics/metrics';
import { NodeView, hostsByRack } from './desired';

const indexes = new WeakMap<readonly NodeView[], KnownNodes>();

/** Undefined when no node list has been read, or it is empty: then no host can be called unknown. */
export function knownNodes(list: readonly NodeView[] | undefined): KnownNodes | undefined {
  if (!list || list.length === 0) return undefined;
  let k = indexes.get(list);
  if (!k) {
    k = { hosts: new Set(list.map((n) => n.host)), racks: hostsByRack(list) };
    indexes.set(list, k);
  }
  return k;
}

/** The host names of the list (see knownNodes). */
export function knownHosts(list: readonly NodeView[] | undefined): ReadonlySet<string> | undefined {
  return knownNodes(list)?.hosts;
}
