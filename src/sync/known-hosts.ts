/**
 * The RM's node list as last read, indexed once per list (the node watcher makes the index when it
 * reads one, and the view carries it): the API asks for every item of GET /blocklist whether its
 * host is one the RM knows, and the metrics per scrape which hosts a rack covers.
 */
import type { KnownNodes } from '../metrics/metrics';
import { NodeView, hostsByRack } from './desired';

/** The index, and the nearest known names of unknown hosts as the API works them out (kept with the list they were found in). */
export interface NodeIndex extends KnownNodes {
  readonly nearest: Map<string, readonly string[]>;
}

/** Undefined when no node list has been read, or it is empty: then no host can be called unknown. */
export function indexNodes(list: readonly NodeView[] | undefined): NodeIndex | undefined {
  if (!list || list.length === 0) return undefined;
  return { hosts: new Set(list.map((n) => n.host)), racks: hostsByRack(list), nearest: new Map() };
}
