/**
 * The bench sections and their sizes, apart from the command line so the mocha smoke test
 * (test/bench/bench-quick.test.ts) drives the same code with tiny sizes.
 */
import { benchPropagation, PropagationSizes } from './propagation';
import { benchReconcile, ReconcileSizes } from './reconcile';
import { measureLimits } from './lib/limits';
import { Row, SectionResult, Skipped } from './lib/report';

export const SECTIONS = ['propagation', 'reconcile', 'throughput', 'evacuation', 'memory'] as const;
export type SectionName = (typeof SECTIONS)[number];

export interface BenchSizes {
  limitSamples: number;
  propagation: PropagationSizes;
  reconcile: ReconcileSizes;
  memory: { soakSeconds: number };
}

export function sizesFor(quick: boolean): BenchSizes {
  if (quick) {
    return {
      limitSamples: 200,
      propagation: { apiBlocks: 100, pollBlocks: { 100: 20 }, zkBlocks: 0, warmup: 5 },
      reconcile: { nodes: 10_000, items: 5_000, containers: 50_000, churn: 0.01, passes: 20, warmup: 5 },
      memory: { soakSeconds: 3 },
    };
  }
  return {
    limitSamples: 1000,
    propagation: { apiBlocks: 1000, pollBlocks: { 100: 300, 1000: 50 }, zkBlocks: 500, warmup: 20 },
    reconcile: { nodes: 10_000, items: 5_000, containers: 50_000, churn: 0.01, passes: 200, warmup: 20 },
    memory: { soakSeconds: 60 },
  };
}

/** Tiny sizes: for the smoke test only (checks the harness runs and yields ratios, not timings). */
export function tinySizes(): BenchSizes {
  return {
    limitSamples: 20,
    propagation: { apiBlocks: 5, pollBlocks: { 50: 3 }, zkBlocks: 0, warmup: 1 },
    reconcile: { nodes: 200, items: 100, containers: 500, churn: 0.04, passes: 3, warmup: 1 },
    memory: { soakSeconds: 1 },
  };
}

export interface BenchResult {
  rows: Row[];
  skipped: Skipped[];
  notes: string[];
}

export async function runBench(sections: readonly SectionName[], sizes: BenchSizes, log: (line: string) => void = () => undefined): Promise<BenchResult> {
  const all: BenchResult = { rows: [], skipped: [], notes: [] };
  log('measuring the limits (loopback round trip, durable SQLite commit)…');
  const limits = await measureLimits(sizes.limitSamples);
  for (const name of sections) {
    log(`running ${name}…`);
    let r: SectionResult;
    switch (name) {
      case 'propagation':
        r = await benchPropagation(limits, sizes.propagation);
        break;
      case 'reconcile':
        r = await benchReconcile(sizes.reconcile);
        break;
      default:
        r = { rows: [], skipped: [{ section: name, figure: '(all)', reason: 'not implemented yet' }], notes: [] };
    }
    for (const row of r.rows) log(`  ${row.figure}: ${row.value.toFixed(3)} ${row.unit} vs ${row.limit.toFixed(3)} ${row.limitUnit} = ${row.ratio.toFixed(2)}× ${row.met === undefined ? '' : row.met ? '(goal met)' : '(GOAL MISSED)'}`);
    all.rows.push(...r.rows);
    all.skipped.push(...r.skipped);
    all.notes.push(...r.notes);
  }
  return all;
}
