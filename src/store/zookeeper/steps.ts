/**
 * Two things every keeper of an ephemeral znode needs (the cluster-state election, the sidecar's
 * published address): a step that runs one at a time and again after a failure, and a persistent
 * path made to exist.
 */
import { ZK, ZkSession, hasCode } from './session';

export interface SerialStepsOptions {
  /** One run of the step. */
  work: () => Promise<void>;
  /** Whether failures are still retried (false once stopped). */
  active: () => boolean;
  /** Pause before the step runs again after a failure. */
  retryMs: number;
  /** Told of a failure that will be retried (a log line). */
  onRetry: (e: Error, retryMs: number) => void;
}

/** One run at a time; a request meanwhile runs the step once more afterwards; a failure retries it. */
export class SerialSteps {
  private busy = false;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SerialStepsOptions) {}

  request(): void {
    if (!this.opts.active()) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    this.opts.work().then(
      () => this.afterStep(),
      (e: unknown) => {
        if (this.opts.active()) {
          this.opts.onRetry(e as Error, this.opts.retryMs);
          this.cancel();
          this.retryTimer = setTimeout(() => this.request(), this.opts.retryMs);
          this.retryTimer.unref();
        }
        this.afterStep();
      },
    );
  }

  /** Drops a pending retry. */
  cancel(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  private afterStep(): void {
    this.busy = false;
    if (this.again) {
      this.again = false;
      this.request();
    }
  }
}

/** Creates `path` and its ancestors as persistent znodes where missing (another creating one meanwhile is fine). */
export async function ensurePath(session: ZkSession, path: string, timeoutMs: number): Promise<void> {
  let acc = '';
  for (const seg of path.split('/').slice(1)) {
    acc += '/' + seg;
    if (await session.exists(acc, timeoutMs)) continue;
    try {
      await session.create(acc, Buffer.alloc(0), timeoutMs);
    } catch (e) {
      if (!hasCode(e, ZK.NODE_EXISTS)) throw e;
    }
  }
}
