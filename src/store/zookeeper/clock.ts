/**
 * The store's own time. Every sidecar sharing the store deletes expired items, and an item's end
 * is an instant that whoever made it chose: deleting on one machine's wall clock lets a clock that
 * runs ahead delete other jobs' blocks before their end. So the ZooKeeper store measures its own
 * time — a setData of `<root>/clock` answers with the znode's mtime, taken on the clock of the
 * server that ordered the write (the leader) — and refuses to expire while the local clock is
 * ahead of it by more than the limit (docs/zookeeper.md, Clocks).
 *
 * The measurement is kept as (store time, monotonic instant) and carried forward on the monotonic
 * clock, so a step of the local wall clock shows at once, without another write: the store's time
 * now is its time at the write plus the monotonic time since. The write is made again at most once
 * a minute (PROBE_INTERVAL_MS, from the expiry job's runs), so that the drift of the monotonic
 * clock and a change of leader are followed.
 */
import { Logger } from '../../core/logger';
import { ClockSkew, ClockSkewError } from '../store';
import { Deadline } from '../retry';
import { ZK, ZkSession, hasCode } from './session';

/** How often the store's time is measured again (one small write per sidecar). */
export const PROBE_INTERVAL_MS = 60_000;

export interface StoreClockOptions {
  session: Pick<ZkSession, 'setData' | 'create'>;
  /** The znode written to read the store's time. */
  path: string;
  /** The local wall clock (the sidecar's injected clock), epoch ms. */
  localTime: () => number;
  /** A monotonic clock in ms (performance.now() in the sidecar). */
  monotonic: () => number;
  limitMs: number;
  logger: Logger;
  /** What the log lines call the store. */
  description: string;
}

interface Measurement {
  /** The store's time at the write (its mtime). */
  storeMs: number;
  /** The monotonic instant taken for it: the middle of the write's round trip. */
  monoMs: number;
  uncertaintyMs: number;
  /** Local wall time of the measurement. */
  measuredAt: number;
}

/** How a skew reads in words: "2 h 0 min", "41 s", "350 ms". */
export function spanInWords(ms: number): string {
  // The unit is chosen after rounding: 2 h measured a few ms short reads "2 h 0 min", not "120 min".
  const a = Math.abs(ms);
  if (Math.round(a) < 1000) return `${Math.round(a)} ms`;
  if (Math.round(a / 1000) < 120) return `${Math.round(a / 1000)} s`;
  const min = Math.round(a / 60_000);
  if (min < 120) return `${min} min`;
  return `${Math.floor(min / 60)} h ${min % 60} min`;
}

export class StoreClock {
  private last: Measurement | undefined;
  /** Whether the last reading was beyond the limit, so a crossing is logged once. */
  private beyond = false;

  constructor(private readonly opts: StoreClockOptions) {}

  /** The skew now, from the last measurement; undefined before the first one. */
  reading(): ClockSkew | undefined {
    const m = this.last;
    if (!m) return undefined;
    const storeNow = m.storeMs + (this.opts.monotonic() - m.monoMs);
    return { skewMs: this.opts.localTime() - storeNow, uncertaintyMs: m.uncertaintyMs, storeNow, measuredAt: m.measuredAt, limitMs: this.opts.limitMs };
  }

  /** Measures again when the last measurement is older than PROBE_INTERVAL_MS (or there is none). */
  async refresh(d: Deadline): Promise<void> {
    const m = this.last;
    if (m && this.opts.monotonic() - m.monoMs < PROBE_INTERVAL_MS) return;
    try {
      await this.measure(d);
    } catch (e) {
      // The last measurement, carried forward on the monotonic clock, still holds; without one, say so.
      if (!m) throw e;
      this.opts.logger.debug(`zookeeper: measuring the store's time failed, keeping the last measurement (${(e as Error).message})`);
    }
  }

  /** One write of the clock znode; its mtime is the store's time at the middle of the round trip. */
  async measure(d: Deadline): Promise<void> {
    const { session, path } = this.opts;
    const data = Buffer.from(String(this.opts.localTime()));
    let before = this.opts.monotonic();
    let stat;
    try {
      stat = await session.setData(path, data, -1, d.left());
    } catch (e) {
      if (!hasCode(e, ZK.NO_NODE)) throw e;
      try {
        await session.create(path, data, d.left());
      } catch (c) {
        if (!hasCode(c, ZK.NODE_EXISTS)) throw c;
      }
      before = this.opts.monotonic();
      stat = await session.setData(path, data, -1, d.left());
    }
    const after = this.opts.monotonic();
    this.last = { storeMs: stat.mtimeMs, monoMs: (before + after) / 2, uncertaintyMs: (after - before) / 2, measuredAt: this.opts.localTime() };
    this.logCrossing();
  }

  /**
   * Throws ClockSkewError when the local clock, or the `now` an expiry was asked for, is ahead of
   * the store's time by more than the limit. A clock behind it is no danger to others: it deletes
   * only what has ended on both clocks.
   */
  checkExpiry(now: number): void {
    const r = this.reading();
    if (!r) throw new ClockSkewError(`zookeeper store ${this.opts.description}: expiry refused: the store's time has not been measured yet (writing ${this.opts.path} failed), so this clock cannot be checked against it; nothing was deleted`);
    const ahead = Math.max(r.skewMs, now - r.storeNow);
    this.logCrossing();
    if (ahead <= r.limitMs) return;
    throw new ClockSkewError(
      `zookeeper store ${this.opts.description}: expiry refused: this sidecar's clock is ${spanInWords(ahead)} ahead of the store's time (ZooKeeper's, from the mtime of ${this.opts.path}); deleting shared items on it would end other jobs' blocks early. Nothing was deleted; the other sidecars expire them. Fix this machine's clock (NTP): within ${spanInWords(r.limitMs)} (cluster.resource-blocklist.store.zookeeper.clock-skew-limit) expiry resumes`,
    );
  }

  /** One line when the skew goes beyond the limit, one when it is back within. */
  private logCrossing(): void {
    const r = this.reading();
    if (!r) return;
    const beyond = Math.abs(r.skewMs) > r.limitMs;
    if (beyond === this.beyond) return;
    this.beyond = beyond;
    const fields = { store: this.opts.description, skewMs: Math.round(r.skewMs), limitMs: r.limitMs };
    if (beyond) {
      this.opts.logger.warn(
        `clock skew: this sidecar's clock is ${spanInWords(r.skewMs)} ${r.skewMs > 0 ? 'ahead of' : 'behind'} the store's time (ZooKeeper's), beyond the limit of ${spanInWords(r.limitMs)}: ${r.skewMs > 0 ? 'expiry is refused and items count until their end on the store\'s time' : "blocks made through this sidecar are stamped on its clock, so the other jobs see them end early"}; fix this machine's clock (NTP)`,
        fields,
      );
    } else this.opts.logger.info(`clock skew: this sidecar's clock agrees with the store's time again (within ${spanInWords(r.limitMs)})`, fields);
  }
}
