/**
 * Series read from the sync engine's last pass at scrape time: which job this sidecar serves
 * (`blocklist_sidecar_info`), the safety cap's use, blocks not yet on YARN's blacklist, and each
 * evacuation by node (phase, containers left and released, deadline). Evacuation series are bounded
 * like the item series: at most `maxEvacuations` evacuations get them (those still moving first),
 * and `blocklist_evacuation_series_omitted` counts the rest.
 */
import { Gauge, Registry } from 'prom-client';
import { BlockedItem } from '../model/item';
import { BlocklistSource, EngineReading, EvacuationReading, StoreReader } from './store-reading';

export const ENGINE_SERIES_NAMES = {
  sidecarInfo: 'blocklist_sidecar_info',
  capLimit: 'blocklist_safety_cap_limit_nodes',
  capUsed: 'blocklist_safety_cap_used_nodes',
  runningNodes: 'blocklist_cluster_running_nodes',
  unapplied: 'blocklist_unapplied_blocks',
  evacuationPhase: 'blocklist_evacuation_phase',
  evacuationRemaining: 'blocklist_evacuation_containers_remaining',
  evacuationReleased: 'blocklist_evacuation_containers_released',
  evacuationDeadline: 'blocklist_evacuation_deadline_timestamp_seconds',
  evacuationOmitted: 'blocklist_evacuation_series_omitted',
} as const;

/** Evacuations still moving before finished ones, then the nearest deadline, then by item id. */
export function evacuationsToShow(all: Iterable<EvacuationReading>, max: number): { shown: EvacuationReading[]; omitted: number } {
  const list = [...all];
  if (list.length <= max) return { shown: list, omitted: 0 };
  const rank = (e: EvacuationReading) => (e.phase === 'READY' ? 1 : 0);
  list.sort((a, b) => rank(a) - rank(b) || (a.deadline ?? Infinity) - (b.deadline ?? Infinity) || (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : 0));
  return { shown: list.slice(0, Math.max(0, max)), omitted: list.length - Math.max(0, max) };
}

/** The name YARN's blacklist gives a node or rack item (task managers are never on it). */
function blacklistName(it: BlockedItem): string | undefined {
  return it.kind === 'node' ? it.node : it.kind === 'rack' ? it.id : undefined;
}

/**
 * Node and rack items in force, not held back by the cap, that YARN's blacklist does not hold as
 * the engine last knew it (a blacklist being read again counts as the one read before it).
 */
export function unappliedBlocks(inForce: readonly BlockedItem[], deferred: ReadonlySet<string>, actual: ReadonlySet<string>): number {
  let n = 0;
  for (const it of inForce) {
    const name = blacklistName(it);
    if (name !== undefined && !deferred.has(it.id) && !actual.has(name)) n++;
  }
  return n;
}

export interface EngineSeriesOptions {
  maxEvacuations: number;
}

/** What the console's history samples besides the counts (src/metrics/history.ts). */
export interface EngineFigures {
  /** Blocks not yet on YARN (blocklist_unapplied_blocks); undefined without an engine or a store reading. */
  unapplied(): Promise<number | undefined>;
}

export function registerEngineSeries(registry: Registry, source: () => BlocklistSource | undefined, reader: StoreReader, opts: EngineSeriesOptions): EngineFigures {
  const registers = [registry];
  const engine = (): EngineReading | undefined => source()?.engine?.();
  new Gauge({
    name: ENGINE_SERIES_NAMES.sidecarInfo,
    help: 'Always 1: the YARN application (and attempt) this sidecar serves, as labels; join on instance to tell many sidecars apart.',
    labelNames: ['application_id', 'app_attempt_id'] as const,
    registers,
    collect() {
      this.reset();
      this.set({ application_id: source()?.applicationId() ?? '', app_attempt_id: engine()?.appAttemptId ?? '' }, 1);
    },
  });
  const capGauge = (name: string, help: string, pick: (c: NonNullable<EngineReading['cap']>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const cap = engine()?.cap;
        if (cap) this.set(pick(cap));
      },
    });
  capGauge(ENGINE_SERIES_NAMES.capLimit, 'Most RUNNING nodes the safety cap (max-blocked-fraction) lets this application blacklist, as of the last pass.', (c) => c.limit);
  capGauge(ENGINE_SERIES_NAMES.capUsed, "RUNNING nodes on this application's blacklist, counted against the safety cap, as of the last pass.", (c) => c.used);
  capGauge(ENGINE_SERIES_NAMES.runningNodes, "The safety cap's denominator: RUNNING nodes (the highest count of the last minutes), as of the last pass.", (c) => c.runningNodes);
  const unapplied = unappliedCounter(engine, reader);
  new Gauge({
    name: ENGINE_SERIES_NAMES.unapplied,
    help: "Node and rack blocks in force (not deferred by the safety cap) that are not on YARN's blacklist yet: a push pending or being retried.",
    registers,
    async collect() {
      const n = await unapplied();
      if (n !== undefined) this.set(n);
    },
  });
  registerEvacuations(registers, engine, opts.maxEvacuations);
  return { unapplied };
}

/** Counts unapplied blocks, remembering YARN's blacklist as last known across its re-reads. */
function unappliedCounter(engine: () => EngineReading | undefined, reader: StoreReader): () => Promise<number | undefined> {
  let lastActual: ReadonlySet<string> = new Set();
  const deferredSets = new WeakMap<readonly { id: string }[], Set<string>>();
  const NONE: readonly { id: string }[] = [];
  return async () => {
    const e = engine();
    const r = await reader.read();
    if (!e || !r) return undefined;
    if (e.actual) lastActual = e.actual;
    const deferredList = e.deferred ?? NONE;
    let deferred = deferredSets.get(deferredList);
    if (!deferred) deferredSets.set(deferredList, (deferred = new Set(deferredList.map((d) => d.id))));
    return unappliedBlocks(r.inForce, deferred, lastActual);
  };
}

function registerEvacuations(registers: Registry[], engine: () => EngineReading | undefined, max: number): void {
  // One choice per pass (the engine's evacuations object), shared by the five gauges of a scrape.
  const chosen = new WeakMap<object, { shown: EvacuationReading[]; omitted: number }>();
  const current = (): { shown: EvacuationReading[]; omitted: number } => {
    const all = engine()?.evacuations;
    if (!all) return { shown: [], omitted: 0 };
    let c = chosen.get(all);
    if (!c) chosen.set(all, (c = evacuationsToShow(all.values(), max)));
    return c;
  };
  const perEvacuation = (name: string, help: string, value: (e: EvacuationReading) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['item', 'node'] as const,
      registers,
      collect() {
        this.reset();
        for (const e of current().shown) {
          const v = value(e);
          if (v !== undefined) this.set({ item: e.itemId, node: e.node }, v);
        }
      },
    });
  new Gauge({
    name: ENGINE_SERIES_NAMES.evacuationPhase,
    help: 'Always 1: the phase of each evacuation (WAIT_CONTAINER, TIMEOUT, READY, …) as a label, by item and node.',
    labelNames: ['item', 'node', 'phase'] as const,
    registers,
    collect() {
      this.reset();
      for (const e of current().shown) this.set({ item: e.itemId, node: e.node, phase: e.phase }, 1);
    },
  });
  perEvacuation(ENGINE_SERIES_NAMES.evacuationRemaining, "The application's containers still on the node of each evacuation.", (e) => e.containers.length);
  perEvacuation(ENGINE_SERIES_NAMES.evacuationReleased, 'Containers this sidecar asked YARN to release for each evacuation.', (e) => e.released.length);
  perEvacuation(ENGINE_SERIES_NAMES.evacuationDeadline, 'Unix time (seconds) of the deadline of each evacuation (absent when it waits for its containers forever).', (e) =>
    e.deadline !== undefined && Number.isFinite(e.deadline) ? e.deadline / 1000 : undefined,
  );
  new Gauge({
    name: ENGINE_SERIES_NAMES.evacuationOmitted,
    help: 'Evacuations without per-node series because of their bound (metrics.evacuations.max-series).',
    registers,
    collect() {
      this.set(current().omitted);
    },
  });
}
