/**
 * The bench sections and their sizes, apart from the command line so the mocha smoke test
 * (test/bench/bench-quick.test.ts) drives the same code with tiny sizes.
 */
import { benchPropagation, PropagationSizes } from './propagation';
import { benchReconcile, ReconcileSizes } from './reconcile';
import { benchThroughput, ThroughputSizes } from './throughput';
import { benchEvacuation, EvacuationSizes } from './evacuation';
import { benchEvacuationFlink, EvacuationFlinkSizes } from './evacuation-flink';
import { benchEvacuationYarn, EvacuationYarnSizes } from './evacuation-yarn';
import { benchMemory, MemorySizes } from './memory';
import { benchListing, ListingSizes } from './listing';
import { benchRmFootprint, RmFootprintSizes } from './rm-footprint';
import { AmFootprintSizes, benchAmFootprint } from './am-footprint';
import { measureLimits } from './lib/limits';
import { Row, SectionResult, Skipped } from './lib/report';

export const SECTIONS = ['propagation', 'reconcile', 'throughput', 'evacuation', 'memory', 'rm-footprint', 'listing', 'am-footprint'] as const;
/**
 * Sections that run real Flink JVMs (minutes each): run by `npm run bench` and `--only`, not by the
 * harness's smoke test (test/real/flink-evacuation.test.ts covers the parts they use).
 */
export const JVM_SECTIONS = ['evacuation-flink', 'evacuation-yarn'] as const;
export const ALL_SECTIONS = [...SECTIONS, ...JVM_SECTIONS] as const;
export type SectionName = (typeof ALL_SECTIONS)[number];

export interface BenchSizes {
  limitSamples: number;
  propagation: PropagationSizes;
  reconcile: ReconcileSizes;
  throughput: ThroughputSizes;
  evacuation: EvacuationSizes;
  evacuationFlink: EvacuationFlinkSizes;
  evacuationYarn: EvacuationYarnSizes;
  memory: MemorySizes;
  rmFootprint: RmFootprintSizes;
  amFootprint: AmFootprintSizes;
  listing: ListingSizes;
}

export function sizesFor(quick: boolean): BenchSizes {
  if (quick) {
    return {
      limitSamples: 200,
      propagation: { apiBlocks: 100, pollBlocks: { 100: 20 }, zkBlocks: 0, warmup: 5 },
      reconcile: { nodes: 10_000, items: 5_000, containers: 50_000, churn: 0.01, passes: 20, warmup: 5 },
      throughput: { concurrency: [8], durationMs: 1000, storeInserts: 300 },
      evacuation: { nodes: 20, perNode: 10, tickMs: 100, releaseBatchSize: 500 },
      evacuationFlink: { trials: 1, intervalMs: 10_000, replaceMs: 1000 },
      evacuationYarn: { trials: 2 },
      memory: { items: [1_000, 10_000], soakItems: 1_000, soakSeconds: 3 },
      rmFootprint: { nodeCounts: [1_000, 10_000], sidecarCounts: [10], containers: 500, windowMs: 15_000, warmupMs: 3_000 },
      amFootprint: { idleMs: 5_000 },
      listing: { items: 10_000, listings: 10, memListings: 5, ratioItems: 2_000, ratioRequests: 5, batchItems: 10_000 },
    };
  }
  return {
    limitSamples: 1000,
    propagation: { apiBlocks: 1000, pollBlocks: { 100: 300, 1000: 50 }, zkBlocks: 500, warmup: 20 },
    reconcile: { nodes: 10_000, items: 5_000, containers: 50_000, churn: 0.01, passes: 200, warmup: 20 },
    throughput: { concurrency: [8, 32], durationMs: 5000, storeInserts: 1000 },
    evacuation: { nodes: 100, perNode: 10, tickMs: 100, releaseBatchSize: 500 },
    evacuationFlink: { trials: 4, intervalMs: 10_000, replaceMs: 1000 },
    evacuationYarn: { trials: 5 },
    memory: { items: [1_000, 10_000, 100_000], soakItems: 10_000, soakSeconds: 60 },
    rmFootprint: { nodeCounts: [1_000, 10_000], sidecarCounts: [10, 50], containers: 500, windowMs: 60_000, warmupMs: 5_000 },
    amFootprint: { idleMs: 20_000 },
    listing: { items: 100_000, listings: 30, memListings: 10, ratioItems: 10_000, ratioRequests: 20, batchItems: 10_000 },
  };
}

/** Tiny sizes: for the smoke test only (checks the harness runs and yields ratios, not timings). */
export function tinySizes(): BenchSizes {
  return {
    limitSamples: 20,
    propagation: { apiBlocks: 5, pollBlocks: { 50: 3 }, zkBlocks: 0, warmup: 1 },
    reconcile: { nodes: 200, items: 100, containers: 500, churn: 0.04, passes: 3, warmup: 1 },
    throughput: { concurrency: [2], durationMs: 200, storeInserts: 20 },
    evacuation: { nodes: 3, perNode: 2, tickMs: 20, releaseBatchSize: 4 },
    evacuationFlink: { trials: 1, intervalMs: 4000, replaceMs: 500 },
    evacuationYarn: { trials: 1 },
    memory: { items: [10, 100], soakItems: 10, soakSeconds: 1 },
    rmFootprint: { nodeCounts: [50], sidecarCounts: [], containers: 10, windowMs: 500, warmupMs: 200 },
    amFootprint: { idleMs: 500 },
    listing: { items: 300, listings: 3, memListings: 2, ratioItems: 50, ratioRequests: 2, batchItems: 100 },
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
      case 'throughput':
        r = await benchThroughput(sizes.throughput);
        break;
      case 'evacuation':
        r = await benchEvacuation(limits, sizes.evacuation);
        break;
      case 'evacuation-flink':
        r = await benchEvacuationFlink(sizes.evacuationFlink);
        break;
      case 'evacuation-yarn':
        r = await benchEvacuationYarn(sizes.evacuationYarn);
        break;
      case 'memory':
        r = await benchMemory(sizes.memory);
        break;
      case 'listing':
        r = await benchListing(sizes.listing);
        break;
      case 'rm-footprint':
        r = await benchRmFootprint(sizes.rmFootprint);
        break;
      case 'am-footprint':
        r = await benchAmFootprint(sizes.amFootprint);
        break;
    }
    for (const row of r.rows) log(`  ${row.figure}: ${row.value.toFixed(3)} ${row.unit} vs ${row.limit.toFixed(3)} ${row.limitUnit} = ${row.ratio.toFixed(2)}× ${row.met === undefined ? '' : row.met ? '(goal met)' : '(GOAL MISSED)'}`);
    all.rows.push(...r.rows);
    all.skipped.push(...r.skipped);
    all.notes.push(...r.notes);
  }
  return all;
}
