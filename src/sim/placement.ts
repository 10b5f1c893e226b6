/**
 * Where one allocation round puts the containers it places: round-robin over the eligible nodes
 * (RUNNING, not blacklisted, with a free slot; the cluster picks them and shuffles them with its
 * seeded random), one container per node per pass, until every wanted container is placed or no
 * node has a slot left. The simulator's own choice: spread, so that a scene has task managers on
 * many nodes and a blocked node rarely holds them all.
 */

/** The nodes to place on, in order (a node once per container); `free` is each node's free slots. */
export function spreadOver<N>(eligible: readonly N[], free: ReadonlyMap<N, number>, need: number): N[] {
  const left = new Map(free);
  const out: N[] = [];
  let round: readonly N[] = eligible;
  while (out.length < need && round.length > 0) {
    const next: N[] = [];
    for (const n of round) {
      if (out.length === need) break;
      out.push(n);
      const f = (left.get(n) ?? 0) - 1;
      left.set(n, f);
      if (f > 0) next.push(n);
    }
    round = next;
  }
  return out;
}
