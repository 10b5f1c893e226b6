/**
 * What the scrape-time gauges read from the store: the items in force for this application now and
 * the counts of blocked nodes and task managers. One reading serves every gauge of a scrape, and it
 * is kept until the store's version moves, the application changes, the node list is read again or
 * the next endTimestamp passes, so a scrape of an unchanged store of 100,000 items costs a lookup.
 */
import { BlockedItem } from '../model/item';
import { inForce, nextExpiry } from '../model/effective';
import { Clock } from '../core/clock';

/** The part of the store (src/store/store.ts, a layer above) that the gauges read. */
export interface CountedStore {
  version(): Promise<string>;
  list(): Promise<readonly BlockedItem[]>;
  /** Rows that cannot be decoded (not enforced), when the store keeps such a list. */
  quarantined?(): readonly unknown[];
  /** The local clock against the store's time, when the store has one (store/zookeeper/clock.ts). */
  clockSkew?(): { skewMs: number; limitMs: number } | undefined;
}

/** The RM's nodes as last read: the host names, and the hosts of each rack (a rack block counts them). */
export interface KnownNodes {
  hosts: ReadonlySet<string>;
  racks: ReadonlyMap<string, readonly string[]>;
}

export interface BlocklistCounts {
  nodes: number;
  taskManagers: number;
}

/** What one sidecar's gauges are read from; the engine's side is optional (API only has none). */
export interface BlocklistSource {
  store: CountedStore;
  clock: Clock;
  /** The application whose items count (cluster-scoped items always do). */
  applicationId: () => string | undefined;
  enabled: boolean;
  /**
   * The host names the RM knows (its node list as last read); a node item whose host is not among
   * them blocks nothing in YARN (`unknown-host`) and is not counted. Undefined = not known: count all.
   */
  knownHosts?: () => KnownNodes | undefined;
  /** The sync engine's last pass, when an engine runs (evacuations, the safety cap, YARN's blacklist). */
  engine?: () => EngineReading;
}

/** One evacuation as the engine last saw it (src/sync/evacuation.ts EvacuationStatus has this shape). */
export interface EvacuationReading {
  itemId: string;
  node: string;
  /** WAIT_CONTAINER, TIMEOUT, READY, … (whatever the engine names; label values follow it). */
  phase: string;
  containers: readonly string[];
  released: readonly string[];
  deadline?: number;
}

/** The engine's side of the gauges, as of its last pass. */
export interface EngineReading {
  appAttemptId?: string;
  /** YARN's blacklist for the job as last read or pushed; undefined while being read again. */
  actual?: ReadonlySet<string>;
  /** Items the safety cap holds back (by id). */
  deferred?: readonly { id: string }[];
  /** The safety cap as of the last pass: RUNNING nodes on the blacklist, at most `limit`, of `runningNodes`. */
  cap?: { used: number; limit: number; runningNodes: number };
  /** By item id (the engine's map) or a list: one object per pass, so a scrape's gauges share one choice. */
  evacuations: { values(): Iterable<EvacuationReading> };
}

export interface StoreReading {
  now: number;
  applicationId: string | undefined;
  counts: BlocklistCounts;
  /** Items that count for the application now, in the store's order. */
  inForce: readonly BlockedItem[];
}

export function countItems(items: readonly BlockedItem[], applicationId: string | undefined, now: number, known?: KnownNodes): BlocklistCounts {
  return countInForce(inForce(items, applicationId, now), known);
}

function countInForce(items: readonly BlockedItem[], known?: KnownNodes): BlocklistCounts {
  // Distinct hosts: a node blocked on its own and inside a blocked rack is one blocked node.
  const hosts = new Set<string>();
  let taskManagers = 0;
  for (const it of items) {
    // An unknown host blocks nothing in YARN: not a blocked node (its sync state says unknown-host).
    if (it.kind === 'node') {
      if (!known || known.hosts.has(it.node)) hosts.add(it.node);
    } else if (it.kind === 'rack') {
      // A rack counts the nodes it covers, as far as the node list tells.
      for (const h of known?.racks.get(it.id) ?? []) hosts.add(h);
    } else taskManagers++;
  }
  return { nodes: hosts.size, taskManagers };
}

interface Cached {
  version: string;
  known: KnownNodes | undefined;
  validUntil: number;
  reading: StoreReading;
}

/** Reads the store for a scrape: one read shared by every gauge collected at once, cached as above. */
export class StoreReader {
  private cache: Cached | undefined;
  private inflight: Promise<StoreReading | undefined> | undefined;

  constructor(private readonly source: () => BlocklistSource | undefined) {}

  /** Forget the cached reading (a new source). */
  reset(): void {
    this.cache = undefined;
  }

  /** The reading now; undefined without a source or while the store cannot be read (gauges keep their last value). */
  read(): Promise<StoreReading | undefined> {
    this.inflight ??= this.readNow()
      .catch(() => undefined) // store down: keep the last values; store errors are counted by the engine
      .finally(() => {
        this.inflight = undefined;
      });
    return this.inflight;
  }

  private async readNow(): Promise<StoreReading | undefined> {
    const s = this.source();
    if (!s) return undefined;
    const now = s.clock.now();
    const applicationId = s.applicationId();
    if (!s.enabled) return { now, applicationId, counts: { nodes: 0, taskManagers: 0 }, inForce: [] };
    const version = await s.store.version();
    const known = s.knownHosts?.();
    const c = this.cache;
    if (c && c.version === version && c.reading.applicationId === applicationId && c.known === known && now < c.validUntil) return { ...c.reading, now };
    const items = await s.store.list();
    const effective = inForce(items, applicationId, now);
    const reading: StoreReading = { now, applicationId, counts: countInForce(effective, known), inForce: effective };
    this.cache = { version, known, validUntil: nextExpiry(items, now) ?? Number.POSITIVE_INFINITY, reading };
    return reading;
  }
}
