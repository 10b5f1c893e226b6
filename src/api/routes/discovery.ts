/**
 * GET /discovery/prometheus: Prometheus' HTTP service discovery (http_sd_configs) over the
 * sidecars this one knows: with the ZooKeeper store every sidecar published under
 * <root>/sidecars (so any sidecar of the cluster answers for all), else itself alone. One target
 * group per sidecar, labelled with its application and attempt (docs/deploy.md shows the scrape
 * configuration). RunningTargets keeps a crashed sidecar's target while its attempt runs.
 */
import { FastifyInstance } from 'fastify';
import type { SidecarRecord } from '../../store/zookeeper/sidecar-registry';
import { sendErrors } from '../errors';

/** Where the published sidecars come from (the sidecar wires ZooKeeper, or itself). */
export interface DiscoveryPort {
  /** For messages: where the list was read. */
  readonly source: string;
  sidecars(): Promise<readonly SidecarRecord[]>;
  /**
   * Every sidecar registered and not stopped cleanly, published now or not (a crashed one's
   * registration stays: the ZooKeeper store's persistent `<root>/sidecar-attempts`). Absent: none kept.
   */
  registered?(): Promise<readonly SidecarRecord[] | undefined>;
  /** Drops a registration whose attempt no longer runs. */
  forget?(record: SidecarRecord): Promise<void>;
  /** The targets with whether each is kept though no longer published (RunningTargets). */
  targets?(): Promise<{ record: SidecarRecord; vanished: boolean }[]>;
}

/** What the RM says of an application, as far as the discovery needs it; undefined = the RM knows no such application. */
export interface ApplicationState {
  state: string;
  currentAppAttemptId?: string;
}
export interface ApplicationStates {
  application(id: string): Promise<ApplicationState | undefined>;
}

/** How long an RM answer about a vanished sidecar's application is used before asking again. */
export const RECHECK_MS = 30_000;
/** A vanished sidecar whose application the RM cannot be asked about is kept at most this long. */
export const UNKNOWN_HOLD_MS = 60 * 60_000;
/** At most this many vanished sidecars are remembered (the oldest go first). */
export const MAX_VANISHED = 1000;

interface Vanished {
  record: SidecarRecord;
  /** When it was last published, or first found missing (clock ms). */
  lastSeen: number;
  /** The RM's last word on its application, and when it was asked. */
  asked?: { at: number; running: boolean | undefined };
}

/**
 * A discovery that keeps a sidecar's target while its attempt still runs. Published sidecars are
 * ephemeral znodes, gone with the sidecar's ZooKeeper session: a sidecar that crashed while its
 * job runs would leave Prometheus' target list, and `up == 0` (BlocklistSidecarDown) could never
 * fire for it. A target that vanishes stays listed while the RM reports its application RUNNING
 * with that attempt current, its labels as they were plus `__meta_blocklist_published: "false"`
 * (seen in Prometheus' service-discovery page, not on the series); it goes — and its registration
 * with it — when the application ends, another attempt runs, the attempt publishes itself again, or
 * (the RM unreadable) UNKNOWN_HOLD_MS after it was last seen. Which sidecars vanished comes from
 * the store's registrations when the inner discovery has them (they outlive this process), else
 * from what this process has listed since it started.
 */
export class RunningTargets implements DiscoveryPort {
  readonly source: string;
  private readonly known = new Map<string, Vanished>();

  constructor(
    private readonly inner: DiscoveryPort,
    private readonly rm: ApplicationStates,
    private readonly now: () => number,
  ) {
    this.source = inner.source;
  }

  async sidecars(): Promise<readonly SidecarRecord[]> {
    return (await this.targets()).map((t) => t.record);
  }

  /** The published sidecars, then those kept (vanished: true). */
  async targets(): Promise<{ record: SidecarRecord; vanished: boolean }[]> {
    const live = await this.inner.sidecars();
    const registered = this.inner.registered ? await this.inner.registered() : undefined;
    const t = this.now();
    const liveKeys = new Set(live.map(targetKey));
    for (const r of live) this.known.set(targetKey(r), { record: r, lastSeen: t });
    // With registrations, they say who vanished; this process's memory only adds when it asked the RM.
    if (registered) {
      const regKeys = new Set(registered.map(targetKey));
      for (const r of registered) if (!liveKeys.has(targetKey(r)) && !this.known.has(targetKey(r))) this.known.set(targetKey(r), { record: r, lastSeen: t });
      for (const k of [...this.known.keys()]) if (!liveKeys.has(k) && !regKeys.has(k)) this.known.delete(k);
    }
    const gone = [...this.known.entries()].filter(([k]) => !liveKeys.has(k)).sort((a, b) => b[1].lastSeen - a[1].lastSeen);
    for (const [k] of gone.slice(MAX_VANISHED)) this.known.delete(k);
    const kept: SidecarRecord[] = [];
    for (const [k, v] of gone.slice(0, MAX_VANISHED)) {
      if (await this.stillRuns(v, t)) kept.push(v.record);
      else {
        this.known.delete(k);
        await this.inner.forget?.(v.record).catch(() => undefined);
      }
    }
    return [...live.map((record) => ({ record, vanished: false })), ...kept.map((record) => ({ record, vanished: true }))];
  }

  /** Whether a vanished sidecar's attempt still runs, as the RM said within RECHECK_MS. */
  private async stillRuns(v: Vanished, t: number): Promise<boolean> {
    if (!v.asked || t - v.asked.at >= RECHECK_MS) {
      let running: boolean | undefined;
      try {
        const app = await this.rm.application(v.record.application);
        running = app !== undefined && app.state === 'RUNNING' && (v.record.attempt === undefined || app.currentAppAttemptId === undefined || app.currentAppAttemptId === v.record.attempt);
      } catch {
        running = undefined;
      }
      v.asked = { at: t, running };
    }
    return v.asked.running ?? t - v.lastSeen < UNKNOWN_HOLD_MS;
  }
}

/** One target per attempt (one sidecar publishes an attempt: the newer process wins), else per address. */
const targetKey = (r: SidecarRecord): string => `${r.application} ${r.attempt ?? r.address}`;

/** Prometheus' http_sd answer: one target group per sidecar. */
export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

export function targetGroups(records: readonly SidecarRecord[], vanished: ReadonlySet<SidecarRecord> = new Set()): TargetGroup[] {
  return [...records]
    .sort((a, b) => a.application.localeCompare(b.application) || (a.attempt ?? '').localeCompare(b.attempt ?? ''))
    .map((r) => ({
      targets: [r.address],
      labels: { __scheme__: r.scheme, application: r.application, ...(r.attempt ? { attempt: r.attempt } : {}), host: r.host, ...(vanished.has(r) ? { __meta_blocklist_published: 'false' } : {}) },
    }));
}

export async function discoveryRoutes(app: FastifyInstance, opts: { discovery: DiscoveryPort }): Promise<void> {
  app.get('/discovery/prometheus', async (_req, reply) => {
    let records: readonly SidecarRecord[];
    const vanished = new Set<SidecarRecord>();
    try {
      const d = opts.discovery;
      const all = d.targets ? await d.targets() : (await d.sidecars()).map((record) => ({ record, vanished: false }));
      for (const t of all) if (t.vanished) vanished.add(t.record);
      records = all.map((t) => t.record);
    } catch (e) {
      return sendErrors(reply, 503, [`cannot list the sidecars in ${opts.discovery.source}: ${(e as Error).message}`]);
    }
    return reply.type('application/json').send(targetGroups(records, vanished));
  });
}
