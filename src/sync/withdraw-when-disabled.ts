/**
 * Switched off (`cluster.resource-blocklist.enabled: false`) means YARN's default behaviour: none
 * of this sidecar's entries may stay on the AM's blacklist. At start a disabled sidecar withdraws
 * its own owner set once (other owners' entries, such as Flink's own blocklist, stay), retrying
 * with the engine's backoff until the proxy answers. Enabling again takes a restart, like every
 * configuration change, so "whenever it is switched off" is this start.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { AmrmProxy } from '../yarn/types';
import { Backoff } from './backoff';
import { message } from './cache';
import { ownSet } from './watch-blacklist';

export type WithdrawOutcome = { result: 'withdrawn'; hosts: string[] } | { result: 'nothing-to-withdraw' } | { result: 'failed'; error: string };

/** One attempt: read this owner's set and remove all of it from this owner (never another's). */
export async function withdrawOwnSet(proxy: AmrmProxy, owner: string): Promise<WithdrawOutcome> {
  try {
    const { own } = ownSet(await proxy.blacklist(), owner);
    if (own.size === 0) return { result: 'nothing-to-withdraw' };
    const hosts = [...own].sort();
    await proxy.updateBlacklist({ additions: [], removals: hosts }, owner);
    return { result: 'withdrawn', hosts };
  } catch (e) {
    return { result: 'failed', error: message(e) };
  }
}

/** Withdraws until it succeeds once, retrying after each failure; stop() ends it. */
export class Withdrawal {
  private cancel: (() => void) | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;
  private outcome: WithdrawOutcome | undefined;

  constructor(private readonly deps: { proxy: AmrmProxy; owner: string; clock: Clock; logger: Logger; backoff: Backoff }) {}

  /** The last attempt's outcome (undefined before the first). */
  get last(): WithdrawOutcome | undefined {
    return this.outcome;
  }

  start(): void {
    this.attempt();
  }

  /** Resolves when no attempt is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.idle();
  }

  private attempt(): void {
    if (this.stopped || this.running) return;
    this.running = this.once().finally(() => {
      this.running = undefined;
    });
  }

  private async once(): Promise<void> {
    const { proxy, owner, clock, logger, backoff } = this.deps;
    const out = await withdrawOwnSet(proxy, owner);
    this.outcome = out;
    if (out.result === 'withdrawn') logger.info(`cluster.resource-blocklist.enabled is false: withdrew this sidecar's entries from YARN's blacklist (owner ${owner}): ${out.hosts.join(', ')}`);
    if (out.result !== 'failed' || this.stopped) return;
    const delay = backoff.next();
    logger.log(backoff.attempts === 1 ? 'warn' : 'debug', `cluster.resource-blocklist.enabled is false, but withdrawing this sidecar's entries from YARN's blacklist failed: ${out.error}; retrying in ${delay} ms`);
    this.cancel = clock.setTimer(delay, () => this.attempt());
  }
}
