/**
 * The host names in the RM's node list as last read, as a set built once per list: the API asks
 * for every item of GET /blocklist, and the metrics per scrape, whether its host is one the RM knows.
 */
import { NodeView } from './desired';

const sets = new WeakMap<readonly NodeView[], ReadonlySet<string>>();

/** Undefined when no node list has been read, or it is empty: then no host can be called unknown. */
export function knownHosts(list: readonly NodeView[] | undefined): ReadonlySet<string> | undefined {
  if (!list || list.length === 0) return undefined;
  let s = sets.get(list);
  if (!s) {
    s = new Set(list.map((n) => n.host));
    sets.set(list, s);
  }
  return s;
}
