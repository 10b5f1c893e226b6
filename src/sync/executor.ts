/**
 * Applies a decision's actions through the AMRM proxy and reports each outcome by stage. The only
 * code in the engine that writes to YARN; it decides nothing (the decision is reconcile.ts's).
 */
import { Logger } from '../core/logger';
import { Metrics } from '../metrics/metrics';
import { AmrmProxy, BlacklistWrite } from '../yarn/types';
import { BlacklistDiff } from './desired';
import { message } from './cache';

export type PushOutcome =
  | { stage: 'push'; result: 'nothing-to-push' }
  /** `write`: the versions a versioned proxy names for this change (watch-blacklist.ts wrote()). */
  | { stage: 'push'; result: 'pushed'; diff: BlacklistDiff; write: BlacklistWrite | void }
  | { stage: 'push'; result: 'failed'; diff: BlacklistDiff; error: string };

export type ReleaseOutcome =
  | { stage: 'release'; result: 'nothing-to-release' }
  | { stage: 'release'; result: 'released'; batch: string[]; released: string[]; unknown: string[] }
  | { stage: 'release'; result: 'failed'; batch: string[]; error: string };

export class Executor {
  constructor(private readonly deps: { proxy: AmrmProxy; metrics: Metrics; logger: Logger; owner: string }) {}

  async push(diff: BlacklistDiff | undefined): Promise<PushOutcome> {
    if (!diff) return { stage: 'push', result: 'nothing-to-push' };
    const { proxy, metrics, logger } = this.deps;
    const stop = metrics.pushLatency.startTimer();
    let write: BlacklistWrite | void;
    try {
      write = await proxy.updateBlacklist(diff, this.deps.owner);
    } catch (e) {
      metrics.pushes.inc({ result: 'failure' });
      return { stage: 'push', result: 'failed', diff, error: `blacklist update (+[${diff.additions.join(',')}] -[${diff.removals.join(',')}]) failed: ${message(e)}` };
    } finally {
      stop();
    }
    metrics.pushes.inc({ result: 'success' });
    // Under a stream of writes a push carries hundreds of hosts: the line is built only when logged.
    if (logger.isLevelEnabled?.('info') !== false) logger.info(`blacklist updated: additions [${diff.additions.join(', ')}] removals [${diff.removals.join(', ')}]`);
    return { stage: 'push', result: 'pushed', diff, write };
  }

  async release(batch: string[]): Promise<ReleaseOutcome> {
    if (batch.length === 0) return { stage: 'release', result: 'nothing-to-release' };
    const { proxy, metrics, logger } = this.deps;
    try {
      const res = await proxy.release(batch);
      metrics.containersReleased.inc(res.released.length);
      logger.info(`evacuation: released ${res.released.length} container(s)${res.unknown.length ? ` (${res.unknown.length} already gone)` : ''}: ${batch.join(', ')}`);
      return { stage: 'release', result: 'released', batch, released: res.released, unknown: res.unknown };
    } catch (e) {
      return { stage: 'release', result: 'failed', batch, error: `releasing ${batch.length} container(s) failed: ${message(e)}` };
    }
  }
}
