/**
 * When a sidecar looks through every job's named records to remove those of jobs that are gone
 * (the evacuation starts, the detector's state). A record outlives its job — nothing tells a
 * sidecar that its stop is its job's last — so somebody must look; but a look reads every other
 * job's record, and with every sidecar looking once a day, a thousand jobs on one ZooKeeper
 * ensemble made a thousand times a thousand reads a day for what one look per cluster does.
 *
 * With a sweeper (the sidecar the cluster-state election on ZooKeeper elected: one per store),
 * only that sidecar looks, once a day; a sidecar elected anew makes its first look within an hour
 * (spread by its application id), so the looks go on when the elected one goes away. Without one
 * (SQLite, or the shared cluster state switched off), every sidecar looks once a day, at a moment
 * of the day spread by its application id, as before.
 */

const DAY_MS = 24 * 3_600_000;
/** A newly elected sweeper's first look comes within this long. */
export const FIRST_LOOK_AFTER_ELECTION_MS = 3_600_000;

export class SweepSchedule {
  private next: number | undefined;

  constructor(
    private readonly opts: {
      /** Whether this sidecar is the cluster's sweeper now; absent: every sidecar sweeps. */
      sweeper?: () => boolean;
      /** Between two looks of one sidecar (default a day). */
      everyMs?: number;
    } = {},
  ) {}

  /** Whether to look now; when it says yes, the next look is a period later. */
  due(applicationId: string, now: number): boolean {
    const { sweeper } = this.opts;
    const every = this.opts.everyMs ?? DAY_MS;
    if (sweeper && !sweeper()) {
      // Not (or no longer) the sweeper: when elected again, a fresh first look.
      this.next = undefined;
      return false;
    }
    if (this.next === undefined) {
      // A thousand sidecars started together do not all look at once.
      let h = 0;
      for (const c of applicationId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
      this.next = now + (h % (sweeper ? Math.min(every, FIRST_LOOK_AFTER_ELECTION_MS) : every));
    }
    if (now < this.next) return false;
    this.next = now + every;
    return true;
  }
}
