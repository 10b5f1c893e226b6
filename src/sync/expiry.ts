/**
 * The expiry job: on a node-cron schedule (`cluster.resource-blocklist.expiry.cron`), delete the
 * items whose endTimestamp has passed from the store, with one audit line per deleted item.
 *
 * This is housekeeping only. Whether an item counts is decided by time (model/effective), so the
 * reconciler removes an item from YARN at its endTimestamp whether or not this job has run.
 * Idempotent with several sidecars on one store: removeExpired reports each item to exactly one
 * caller, so each expiry is audited once.
 */
import * as cron from 'node-cron';
import { BlockedItem } from '../model/item';
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { BlocklistStore } from '../store/store';
import { AuditSink } from '../model/audit';
import { Metrics } from '../metrics/metrics';

export type ExpiryOutcome = { outcome: 'removed'; items: BlockedItem[] } | { outcome: 'failed'; error: string } | { outcome: 'skipped'; reason: string };

export interface ExpiryOptions {
  store: BlocklistStore;
  clock: Clock;
  logger: Logger;
  /** node-cron expression with seconds; '' = never scheduled (runOnce still works). */
  schedule: string;
  audit?: AuditSink;
  metrics?: Metrics;
}

export class ExpiryJob {
  private task: cron.ScheduledTask | undefined;
  private running = false;

  constructor(private readonly opts: ExpiryOptions) {}

  /** Deletes what has expired by now. Safe to call at any time, concurrently with the schedule. */
  async runOnce(): Promise<ExpiryOutcome> {
    if (this.running) return { outcome: 'skipped', reason: 'a run is in progress' };
    this.running = true;
    const now = this.opts.clock.now();
    try {
      const items = await this.opts.store.removeExpired(now);
      for (const item of items) this.auditExpired(item, now);
      if (items.length) this.opts.metrics?.expiredItems.inc(items.length);
      return { outcome: 'removed', items };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.opts.logger.warn(`expiry: removing expired items failed (will retry on the next tick): ${error}`);
      return { outcome: 'failed', error };
    } finally {
      this.running = false;
    }
  }

  start(): void {
    if (this.task || !this.opts.schedule) return;
    this.task = cron.schedule(
      this.opts.schedule,
      async () => {
        await this.runOnce();
      },
      { name: 'blocklist-expiry', noOverlap: true },
    );
    this.opts.logger.info(`expiry: deleting expired items on schedule '${this.opts.schedule}'`);
  }

  async stop(): Promise<void> {
    const t = this.task;
    this.task = undefined;
    if (t) await t.destroy();
  }

  private auditExpired(item: BlockedItem, now: number): void {
    const late = now - item.endTimestamp;
    if (this.opts.audit) {
      this.opts.audit.record({ op: 'expire', id: item.id, who: 'expiry', from: 'sidecar', outcome: 'removed', before: item, detail: `endTimestamp passed ${late} ms ago` });
    } else {
      this.opts.logger.info(`audit expire ${item.id} removed by expiry`, { audit: true, op: 'expire', id: item.id, who: 'expiry', from: 'sidecar', outcome: 'removed', endTimestamp: item.endTimestamp });
    }
  }
}
