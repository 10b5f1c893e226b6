/**
 * The detector's sources, polled in order each pass, with what GET /detector shows of each (last
 * poll, last error, counts) and where the app's containers ran (a failed task manager's container
 * is gone from YARN's live list, so it is remembered here). Moved out of detector.ts unchanged.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { DetectorMetrics } from './metrics';
import { DetectorSource, SourceContext } from './source';
import { DetectorState } from './state';
import { Failure, HealthObservation } from './types';

export interface SourceStatus {
  name: string;
  lastPollAt?: number;
  lastError?: string;
  failures: number;
  unattributed: number;
  missed: number;
}

/** What one poll of every source found. */
export interface Polled {
  failures: Failure[];
  health: HealthObservation[];
  healthRead: boolean;
}

/** Containers remembered beyond the live list (a failed task manager's container is gone from it). */
const REMEMBERED_CONTAINERS = 20_000;

export class SourcePoller {
  private readonly sourceStatus = new Map<string, SourceStatus>();
  private readonly containers = new Map<string, string>();

  constructor(private readonly deps: { sources: DetectorSource[]; clock: Clock; logger: Logger; metrics?: DetectorMetrics }) {
    for (const s of deps.sources) this.sourceStatus.set(s.name, { name: s.name, failures: 0, unattributed: 0, missed: 0 });
  }

  status(): SourceStatus[] {
    return [...this.sourceStatus.values()].map((x) => ({ ...x }));
  }

  /** Every source in order (the YARN sources first teach where containers ran); a failing source is reported, not fatal. */
  async poll(state: DetectorState, nodes: { hosts: Set<string> } | undefined): Promise<Polled> {
    const out: Polled = { failures: [], health: [], healthRead: false };
    for (const source of this.deps.sources) {
      const st = this.sourceStatus.get(source.name)!;
      try {
        const r = await source.poll(this.sourceContext(state, source.name, st, nodes));
        st.lastPollAt = this.deps.clock.now();
        delete st.lastError;
        st.failures += r.failures.length;
        st.unattributed += r.unattributed ?? 0;
        out.failures.push(...r.failures);
        if (r.health) {
          out.health.push(...r.health);
          out.healthRead = true;
        }
        if (r.cursor !== undefined) state.cursors[source.name] = r.cursor;
      } catch (e) {
        st.lastError = (e as Error)?.message ?? String(e);
        this.deps.metrics?.sourceErrors.inc({ source: source.name });
        this.deps.logger.warn(`detector source ${source.name} failed: ${st.lastError}`);
      }
    }
    return out;
  }

  private sourceContext(state: DetectorState, name: string, st: SourceStatus, nodes: { hosts: Set<string> } | undefined): SourceContext {
    const { clock, logger, metrics } = this.deps;
    return {
      now: clock.now(),
      logger,
      hostOfContainer: (id) => this.containers.get(id),
      isKnownHost: (h) => nodes?.hosts.has(h) ?? false,
      noteContainer: (id, h) => this.remember(id, h),
      cursor: state.cursors[name],
      missed: (n, why) => {
        st.missed += n;
        metrics?.missed.inc({ source: name }, n);
        logger.warn(`detector: ${why}`);
      },
    };
  }

  /** A container and the host it ran on; the oldest is forgotten past REMEMBERED_CONTAINERS. */
  remember(id: string, host: string): void {
    this.containers.delete(id);
    this.containers.set(id, host);
    if (this.containers.size > REMEMBERED_CONTAINERS) {
      const oldest = this.containers.keys().next().value;
      if (oldest !== undefined) this.containers.delete(oldest);
    }
  }
}
