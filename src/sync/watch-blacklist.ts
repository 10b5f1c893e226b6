/**
 * Watches what YARN has on this application's blacklist: the proxy's list (what the AM's client
 * sends the RM) and, best effort, the RM's own view of the attempt (AppAttemptInfo
 * .blacklistedNodes on newer RMs). A host the scheduler still honours but the client does not
 * report (a list inherited by a new attempt) is reported as `schedulerOnly`, so the pure rule can
 * send it an explicit removal when nobody wants it.
 *
 * Read policy: `when-invalid`. Between reads the cache is written through by the pass after each
 * successful push (the proxy then has exactly what was pushed). It is invalidated on start, on a
 * new attempt, after a failed push and on every full resync.
 */
import { Logger } from '../core/logger';
import { Metrics } from '../metrics/metrics';
import { AmrmProxy, ResourceManagerReader } from '../yarn/types';
import { Cached, READ_OK, ReadOutcome, message } from './cache';

export interface BlacklistView {
  /** What the proxy lists. */
  actual: ReadonlySet<string>;
  /** Hosts only the RM's view of the attempt lists (candidates for an explicit removal). */
  schedulerOnly: readonly string[];
  /** Each owner's hosts as the proxy last reported them (absent after a write-through). */
  owners?: Readonly<Record<string, readonly string[]>>;
}

export class BlacklistWatcher {
  readonly cache = new Cached<BlacklistView>("YARN's blacklist", { kind: 'when-invalid' });

  constructor(private readonly deps: { proxy: AmrmProxy; rm: ResourceManagerReader; logger: Logger; metrics: Metrics }) {}

  async refresh(now: number, applicationId: string | undefined, attemptId: string | undefined): Promise<ReadOutcome> {
    if (!this.cache.due(now)) return READ_OK;
    let actual: Set<string>;
    let owners: Record<string, string[]>;
    try {
      const read = await this.deps.proxy.blacklist();
      actual = new Set(read.blacklist);
      owners = read.owners;
    } catch (e) {
      return { ok: false, error: message(e) };
    }
    const scheduler = await this.schedulerView(applicationId, attemptId);
    this.cache.set({ actual, schedulerOnly: scheduler.filter((h) => !actual.has(h)), owners }, now);
    this.deps.metrics.blacklistHosts.set(actual.size);
    return READ_OK;
  }

  /** After a successful push the proxy holds exactly `hosts`; nothing else is pending removal. */
  wrote(hosts: readonly string[], now: number): void {
    this.cache.set({ actual: new Set(hosts), schedulerOnly: [] }, now);
    this.deps.metrics.blacklistHosts.set(hosts.length);
  }

  /** Best effort: an older RM or an RM error just skips it. */
  private async schedulerView(applicationId: string | undefined, attemptId: string | undefined): Promise<string[]> {
    if (applicationId === undefined) return [];
    try {
      const attempts = await this.deps.rm.attempts(applicationId);
      const current = attempts.find((a) => a.appAttemptId === attemptId) ?? attempts.at(-1);
      return current?.blacklistedNodes ?? [];
    } catch (e) {
      this.deps.logger.debug(`reading the RM's view of the blacklist failed (skipped): ${message(e)}`);
      return [];
    }
  }
}
