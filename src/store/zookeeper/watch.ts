/**
 * The ZooKeeper store's change feed: a data watch on the items znode, which every write touches in
 * the same multi (zookeeper/paths.ts), re-armed after each fire.
 *
 * Why no change is missed:
 *  - on a fire, the re-arming `exists` is *sent* before listeners are told; a listener reads
 *    through the same session, and ZooKeeper answers one session's requests in order, so the
 *    listener sees at least the state the new watch was armed on; anything later fires it again
 *    (a listener that subscribes while that re-arm is in flight is covered by comparing markers);
 *  - an arm that failed (timeout, lost connection) is retried with a capped backoff, and its
 *    answer is compared with the last marker seen: a difference is reported;
 *  - a new session (after expiry) has no watches: re-arm and compare the same way.
 * Extra notifications are possible and harmless (a listener re-reads version()); missing ones are not.
 */
import { backoffAfter } from '../retry';
import { Logger, silentLogger } from '../../core/logger';
import { ZkSession, ZkStat } from './session';

export const markerOf = (stat: ZkStat | undefined): string => (stat ? `${stat.mzxid}.${stat.pzxid}` : 'absent');

export class ZkWatch {
  private readonly listeners = new Set<() => void>();
  private lastMarker: string | undefined;
  private arming = false;
  private armAgain = false;
  private lateJoiner = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay = 0;
  private closed = false;
  private readonly onSession = (): void => this.arm(false);

  constructor(
    private readonly session: ZkSession,
    private readonly path: string,
    private readonly timeoutMs: number,
    private readonly logger: Logger = silentLogger,
  ) {
    session.on('session', this.onSession);
  }

  subscribe(onChange: () => void): () => void {
    this.listeners.add(onChange);
    // A listener joining while a fired watch is being re-armed missed that fire's notification,
    // and the re-arm may answer with a state that already includes a later change (another
    // session's write can be ordered before our exists): have the answer notify on a difference.
    if (this.arming) this.lateJoiner = true;
    if (this.listeners.size === 1) this.arm(false);
    return () => {
      this.listeners.delete(onChange);
    };
  }

  private notify(): void {
    for (const l of [...this.listeners]) {
      try {
        l();
      } catch (e) {
        this.logger.warn('zookeeper watch listener threw', { error: (e as Error).message });
      }
    }
  }

  /** fired: called because the watch fired (listeners are told right after the re-arm is sent). */
  private arm(fired: boolean): void {
    if (this.closed || this.listeners.size === 0) return;
    if (this.arming) {
      // One arm in flight at a time; a fire meanwhile still notifies (its change is real).
      this.armAgain = true;
      if (fired) this.notify();
      return;
    }
    this.arming = true;
    const req = this.session.exists(this.path, this.timeoutMs, () => this.arm(true));
    if (fired) this.notify();
    req.then(
      (stat) => {
        const m = markerOf(stat);
        const changed = this.lastMarker !== undefined && m !== this.lastMarker;
        this.lastMarker = m;
        this.retryDelay = 0;
        this.arming = false;
        const late = this.lateJoiner;
        this.lateJoiner = false;
        if (changed && (!fired || late)) this.notify();
        if (this.armAgain) {
          this.armAgain = false;
          this.arm(false);
        }
      },
      (e: unknown) => {
        this.arming = false;
        this.armAgain = false;
        if (this.closed) return;
        // Capped backoff: the session itself reconnects; we only need to be armed once it does.
        this.retryDelay = backoffAfter(this.retryDelay, 100, 2000);
        this.logger.debug('zookeeper watch could not be armed; retrying', { error: (e as Error).message, inMs: this.retryDelay });
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => this.arm(false), this.retryDelay);
        this.retryTimer.unref();
      },
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.listeners.clear();
    this.session.off('session', this.onSession);
  }
}
