/**
 * One detector per job. Every sidecar of a job (an HA pair, or the old and the new one while a
 * restart overlaps) reads the job's state record each pass; only the holder of the lease written in
 * it (`runner`: a member and an end) reads the sources and YARN and decides. The others stand by,
 * reading the record, and take the lease over once it lapses. The lease is claimed and renewed by
 * the record's own compare-and-set (state-record.ts#commit), so it works on every store with named
 * records (ZooKeeper, SQLite) and needs no ZooKeeper session, znode or clock agreement beyond the
 * record: two sidecars can never both win one claim.
 *
 * A lease is not a fence: a holder paused past its lease (a long GC, a partition) may finish a
 * pass while another has taken over. The cap holds all the same, because every automatic block is
 * reserved in the record by compare-and-set before it is made (reservation.ts); the lease only
 * makes the normal case one reader of the sources instead of two.
 *
 * Bounds: the holder renews when less than half its lease is left (a write every LEASE/2 per job);
 * when it dies, another sidecar takes over at its first pass after the lease's end — at most
 * leaseMs + one poll interval (+ the clocks' difference) with no detector. A sidecar that stops
 * cleanly gives the lease up, and the other takes over at its next pass.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { DetectorRunner } from './state';
import { StateRecord } from './state-record';

/** The shortest lease: a stalled store write (seconds) or a slow pass must not lose it. */
export const MIN_LEASE_MS = 120_000;

/** The lease for a poll interval: at least six passes long, and at least MIN_LEASE_MS. */
export function leaseMsFor(pollIntervalMs: number): number {
  return Math.max(MIN_LEASE_MS, 6 * pollIntervalMs);
}

/** What GET /detector shows of who runs the detector. */
export interface RunnerView {
  /** This sidecar's name in the lease. */
  member: string;
  /** runner: this sidecar runs the job's detector; standby: another does; unknown: not decided yet. */
  role: 'runner' | 'standby' | 'unknown';
  /** The lease as last read or written (absent on a store without records: every sidecar runs). */
  holder: DetectorRunner | null;
}

export class DetectorLease {
  private role: RunnerView['role'] = 'unknown';

  constructor(
    private readonly record: StateRecord,
    private readonly member: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly leaseMs: number,
  ) {}

  view(): RunnerView {
    return { member: this.member, role: this.role, holder: this.record.state.runner ? { ...this.record.state.runner } : null };
  }

  /** Whether this sidecar runs the pass (after record.load()): holds the lease, or claims it now. */
  async acquire(): Promise<boolean> {
    // Without compare-and-set no lease can be safe, and no reservation either: such a store (a
    // test double, or a store of one sidecar) has every detector run, as before.
    if (!this.record.shared) return this.become('runner', undefined);
    const now = this.clock.now();
    const held = this.record.state.runner;
    if (held && held.member !== this.member && held.until > now) return this.become('standby', held);
    if (held && held.member === this.member && held.until - now > this.leaseMs / 2) return this.become('runner', held);
    // Free, lapsed, or ours and due for renewal: claim it against the record as read. Losing means
    // another sidecar wrote the record meanwhile — its claim, or any other change: look again once.
    for (let round = 0; round < 2; round++) {
      const out = await this.record.commit((s) => {
        s.runner = { member: this.member, until: now + this.leaseMs };
      });
      if (out !== 'lost') return this.become('runner', this.record.state.runner);
      const other = this.record.state.runner;
      if (other && other.member !== this.member && other.until > now) return this.become('standby', other);
    }
    return this.become('standby', this.record.state.runner);
  }

  /** Gives the lease up (a clean stop), so another sidecar takes over at its next pass. Best effort. */
  async release(): Promise<void> {
    for (let round = 0; round < 2; round++) {
      if (this.record.state.runner?.member !== this.member) return;
      try {
        const out = await this.record.commit((s) => {
          delete s.runner;
        });
        if (out !== 'lost') break;
      } catch (e) {
        this.logger.warn(`detector: giving up its lease failed (another sidecar takes over when it lapses): ${(e as Error).message}`);
        return;
      }
    }
    this.role = 'unknown';
  }

  private become(role: 'runner' | 'standby', holder: DetectorRunner | undefined): boolean {
    if (role !== this.role) {
      const who = holder ? `${holder.member} until ${new Date(holder.until).toISOString()}` : 'nobody';
      this.logger.info(role === 'runner' ? `detector: this sidecar (${this.member}) runs the job's detector (lease until ${holder ? new Date(holder.until).toISOString() : '-'})` : `detector: standing by; ${who} runs the job's detector`);
    }
    this.role = role;
    return role === 'runner';
  }
}
