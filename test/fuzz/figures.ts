/**
 * Counts the fuzz and fault suites report (requests fuzzed, faults injected, acknowledged writes
 * checked after kills, lost). Each suite prints its own line when it ends, so the figures appear
 * in `npm test`'s output next to the suite that measured them.
 */
const totals = new Map<string, number>();

export function count(name: string, n = 1): void {
  totals.set(name, (totals.get(name) ?? 0) + n);
}

export function figure(name: string): number {
  return totals.get(name) ?? 0;
}

/** One line "  figures (<suite>): a=1, b=2" on stdout. */
export function printFigures(suite: string, names: string[]): void {
  process.stdout.write(`      figures (${suite}): ${names.map((n) => `${n} ${figure(n)}`).join(', ')}\n`);
}
