/**
 * A set of host names kept as the sorted, duplicate-free array a plan already holds (its
 * blacklist), so that a pass neither copies nor hashes every blocked host again.
 *
 * Why: under a stream of writes a pass runs every few tens of milliseconds, and a hash set of
 * every blocked host per pass was much of what a pass allocated (straight into V8's old
 * generation, so frequent full GCs). Two sorted lists are compared by one merge walk, without a
 * set at all, which is what a pass does with the plan's hosts and the belief about the proxy.
 *
 * `has()` is a binary search. A caller that asks many times (the API's status of every item of a
 * listing) gets a hash set built once, on its HASH_AFTER-th question, and kept: a lookup stays
 * O(1) for them, and a pass that asks a handful of times pays for no set.
 */

/** Lookups answered by binary search before a hash set is built for the rest. */
const HASH_AFTER = 64;

export class SortedHosts implements ReadonlySet<string> {
  private lookups = 0;
  private hashed: Set<string> | undefined;

  /** `hosts` must be sorted (by `<`) and unique, and is never changed afterwards (it is shared). */
  constructor(readonly hosts: readonly string[]) {}

  get size(): number {
    return this.hosts.length;
  }

  has(host: string): boolean {
    if (this.hashed) return this.hashed.has(host);
    if (++this.lookups > HASH_AFTER) {
      this.hashed = new Set(this.hosts);
      return this.hashed.has(host);
    }
    return this.includes(host);
  }

  /** has() by binary search only, never building the hash set (a pass's few lookups). */
  includes(host: string): boolean {
    const a = this.hosts;
    let lo = 0;
    let hi = a.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid] < host) lo = mid + 1;
      else hi = mid;
    }
    return lo < a.length && a[lo] === host;
  }

  forEach(fn: (value: string, key: string, set: ReadonlySet<string>) => void, thisArg?: unknown): void {
    for (const h of this.hosts) fn.call(thisArg, h, h, this);
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.hosts[Symbol.iterator]();
  }

  values(): IterableIterator<string> {
    return this.hosts[Symbol.iterator]();
  }

  keys(): IterableIterator<string> {
    return this.hosts[Symbol.iterator]();
  }

  *entries(): IterableIterator<[string, string]> {
    for (const h of this.hosts) yield [h, h];
  }
}

/** Whether `s` is kept sorted (a merge walk applies). */
export function isSorted(s: ReadonlySet<string>): s is SortedHosts {
  return s instanceof SortedHosts;
}

/**
 * `a − b` and `b − a` of two sorted host lists, each sorted, by one merge walk. With `all`, every
 * host of `a` is in the first list (a re-push of the whole set).
 */
export function sortedDifference(a: readonly string[], b: readonly string[], all = false): { onlyA: string[]; onlyB: string[] } {
  const onlyA: string[] = [];
  const onlyB: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x === y) {
      if (all) onlyA.push(x);
      i++;
      j++;
    } else if (x < y) {
      onlyA.push(x);
      i++;
    } else {
      onlyB.push(y);
      j++;
    }
  }
  while (i < a.length) onlyA.push(a[i++]);
  while (j < b.length) onlyB.push(b[j++]);
  return { onlyA, onlyB };
}
