/**
 * Deadlines on the connection under a ZooKeeper session: how long a client may take to connect and
 * finish its handshake, and how long a connected server may stay silent.
 *
 * Why: node-zookeeper-client bounds only the TCP connect. Once the socket is open it writes its
 * ConnectRequest and waits for the answer without any deadline, and once connected it sends pings
 * but never notices that no answer comes back. A server that accepted the connection while
 * (re)starting and never answered left a sidecar disconnected for good (seen after `kill -9` +
 * restart of ZooKeeper). So a client that has not reached SYNC_CONNECTED within connectTimeoutMs,
 * or whose liveness probe gets no answer within it, is declared stuck; the session then replaces
 * it with a fresh client (a fresh session). Replacing a client that was merely waiting for a dead
 * ensemble costs nothing.
 *
 * This class only keeps time and decides; the session (zookeeper/session.ts) tells it what the
 * client does and acts on its verdict, so the state machine and the clock stay apart.
 */
import { Clock, every, systemClock } from '../../core/clock';
import { ZkTimeoutError } from './errors';

/** Monotonic by default: a wall-clock step must neither hide a stuck client nor fake one. */
const monotonicClock: Clock = { now: () => performance.now(), setTimer: systemClock.setTimer };

export interface ConnectionDeadlinesOptions {
  /** Deadline of connect + handshake, and of a probe's answer while connected. */
  connectTimeoutMs: number;
  sessionTimeoutMs: number;
  /** A cheap request on the current client, bounded by timeoutMs (rejects with ZkTimeoutError). */
  probe(timeoutMs: number): Promise<unknown>;
  /** The current client is stuck: replace it (the session calls clientStarted() for the new one). */
  stuck(why: string): void;
  /** Whose time the deadlines are kept in (tests: a FakeClock). Default: monotonic, real timers. */
  clock?: Clock;
}

export class ConnectionDeadlines {
  /** When the current client started trying to (re)connect; undefined while connected. */
  private connectingSince: number | undefined;
  /** When the ensemble was last known unreachable from here, continuously; undefined while it answers. */
  private unreachableSince: number | undefined;
  /** Last time any call got an answer (an error reply counts): no probe is needed before this is stale. */
  private lastAnswer = 0;
  private probing = false;
  /** Counts clients: a probe's verdict about a replaced client is ignored. */
  private epoch = 0;
  private closed = false;
  private readonly clock: Clock;
  private readonly stopChecking: () => void;

  constructor(private readonly opts: ConnectionDeadlinesOptions) {
    this.clock = opts.clock ?? monotonicClock;
    this.unreachableSince = this.clock.now();
    // Checked a few times per deadline, so a stuck client is replaced within ~1.25× the deadline.
    this.stopChecking = every(this.clock, Math.max(50, Math.min(1000, Math.floor(opts.connectTimeoutMs / 4))), () => this.check());
  }

  /** A fresh client starts connecting: its own deadline starts now. */
  clientStarted(): void {
    this.epoch++;
    this.connectingSince = this.clock.now();
  }

  /** The connection dropped; the client reconnects by itself, within the connect deadline. */
  disconnected(): void {
    this.connectingSince ??= this.clock.now();
    this.unreachableSince ??= this.clock.now();
  }

  connected(): void {
    this.connectingSince = undefined;
    this.unreachableSince = undefined;
    this.lastAnswer = this.clock.now();
  }

  /** Any reply from a server (an error reply too) proves the connection alive. */
  answered(): void {
    this.lastAnswer = this.clock.now();
  }

  /** How long the ensemble has been unreachable from this session, continuously (0 = it answers). */
  unreachableForMs(): number {
    return this.unreachableSince === undefined ? 0 : Math.max(0, this.clock.now() - this.unreachableSince);
  }

  private check(): void {
    if (this.closed) return;
    const t = this.clock.now();
    if (this.connectingSince !== undefined) {
      if (t - this.connectingSince > this.opts.connectTimeoutMs) this.opts.stuck(`no session within ${this.opts.connectTimeoutMs} ms`);
      return;
    }
    // Connected: a server that stops answering without closing the socket is only noticed by a
    // request that gets no answer. Probe when nothing has answered for a while.
    const every = Math.min(this.opts.connectTimeoutMs, Math.floor(this.opts.sessionTimeoutMs / 3));
    if (this.probing || t - this.lastAnswer < every) return;
    this.probing = true;
    const epoch = this.epoch;
    this.opts.probe(this.opts.connectTimeoutMs).then(
      () => {
        this.probing = false;
      },
      (e: unknown) => {
        this.probing = false;
        if (epoch !== this.epoch || this.closed) return;
        if (e instanceof ZkTimeoutError) {
          this.unreachableSince ??= t;
          this.opts.stuck(`connected, but a probe got no answer within ${this.opts.connectTimeoutMs} ms`);
        }
      },
    );
  }

  close(): void {
    this.closed = true;
    this.stopChecking();
  }
}
