/**
 * Looks for the records of jobs that are gone (this job's evacuation starts' family,
 * StartsRecord.collect, and any other per-job family the sidecar keeps: the detector's state)
 * beside the sync passes, never inside one, and one sweep at a time. Each family keeps its own
 * schedule (at most daily; once per cluster when a sweeper is elected), and is best effort.
 *
 * Why not inside the pass: the cluster's elected sweeper reads one record per job of the cluster,
 * and at 1,000 jobs on a busy ZooKeeper that held its own pass (its pushes to YARN) for a second
 * or more once a day.
 */
import { BlockedItem } from '../model/item';
import { Logger } from '../core/logger';
import { message } from './cache';
import { StartsRecord } from './starts-record';

export class GoneSweep {
  /** The sweep running now, if any. */
  running: Promise<void> | undefined;

  constructor(
    private readonly deps: {
      starts: Pick<StartsRecord, 'collect'>;
      /** Other families of per-job records (the detector's state). */
      also?: (applicationId: string, now: number) => Promise<unknown>;
      logger: Logger;
    },
  ) {}

  /** Starts a sweep unless one runs; `items`: the store's items the pass saw. */
  start(items: readonly BlockedItem[], applicationId: string | undefined, now: number): void {
    if (this.running) return;
    const { starts, also, logger } = this.deps;
    this.running = (async () => {
      await starts.collect(items, now);
      if (applicationId !== undefined && also) await also(applicationId, now);
    })()
      .catch((e: unknown) => logger.warn(`looking for the records of jobs that are gone failed (tried again later): ${message(e)}`))
      .finally(() => {
        this.running = undefined;
      });
  }
}
