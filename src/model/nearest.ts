/**
 * The host names the RM knows that are nearest to one it does not (a typo, the wrong case, a
 * short name for a fully qualified one), for the `unknown-host` sync state. Pure.
 *
 * YARN compares host names as exact strings (the scheduler looks the blacklist up by
 * `SchedulerNode#getNodeName`), so `Node0001` blocks nothing when the RM says `node0001`.
 */

/** Levenshtein distance, stopping early once it exceeds `max` (returns max + 1 then). */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length];
}

/**
 * Up to `limit` known names nearest to `host`, nearest first: the same name in another case, a name
 * whose first DNS label is the host (or the other way round: `node1` for `node1.example.com`), then
 * names within a small edit distance (2, or a quarter of the name's length when longer), compared
 * case-insensitively. Ties keep the known names' order. Empty when nothing is close.
 */
export function nearestHosts(host: string, known: Iterable<string>, limit = 3): string[] {
  const h = host.toLowerCase();
  const max = Math.max(2, Math.floor(h.length / 4));
  const scored: { name: string; score: number }[] = [];
  for (const name of known) {
    if (name === host) return [];
    const n = name.toLowerCase();
    let score: number;
    if (n === h) score = 0;
    else if (n.split('.')[0] === h || h.split('.')[0] === n) score = 0.5;
    else {
      const d = editDistance(h, n, max);
      if (d > max) continue;
      score = d;
    }
    scored.push({ name, score });
  }
  return scored
    .sort((a, b) => a.score - b.score)
    .slice(0, limit)
    .map((s) => s.name);
}
