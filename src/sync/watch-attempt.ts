/**
 * Watches which application attempt the AMRM proxy serves. A new attempt starts with a new
 * AMRMClient whose blacklist is empty, so the pass must re-read and re-push; this watcher only
 * notices the change and reports it (what to do about it is the pure rule in memory.ts).
 */
import { Logger } from '../core/logger';
import { AmrmProxy, AttemptInfo } from '../yarn/types';
import { Cached, message } from './cache';

export type AttemptRead = { ok: true; newAttempt?: { from: string; to: string } } | { ok: false; error: string };

export class AttemptWatcher {
  readonly cache = new Cached<AttemptInfo>('the application attempt', { kind: 'every-pass' });
  private appId: string | undefined;
  private warnedMismatch = false;

  constructor(private readonly deps: { proxy: AmrmProxy; logger: Logger; applicationId?: string }) {
    this.appId = deps.applicationId;
  }

  /** Configured (yarn.application.id, CONTAINER_ID), else what the proxy names. */
  get applicationId(): string | undefined {
    return this.appId;
  }

  get attemptId(): string | undefined {
    return this.cache.value?.appAttemptId;
  }

  async refresh(now: number): Promise<AttemptRead> {
    let attempt: AttemptInfo;
    try {
      attempt = await this.deps.proxy.attempt();
    } catch (e) {
      return { ok: false, error: message(e) };
    }
    const before = this.attemptId;
    this.cache.set(attempt, now);
    this.noteApplication(attempt);
    if (before !== undefined && before !== attempt.appAttemptId) {
      this.deps.logger.info(`new application attempt ${attempt.appAttemptId} (was ${before}): re-reading YARN's blacklist and re-pushing every blocked node`);
      return { ok: true, newAttempt: { from: before, to: attempt.appAttemptId } };
    }
    return { ok: true };
  }

  /** The poll's question: does the proxy serve another attempt than the one last seen? */
  async changed(): Promise<boolean> {
    try {
      const a = await this.deps.proxy.attempt();
      return this.attemptId !== undefined && a.appAttemptId !== this.attemptId;
    } catch {
      // The proxy being down matters only when there is something to push; a pass will say so.
      return false;
    }
  }

  private noteApplication(attempt: AttemptInfo): void {
    if (this.appId === undefined) this.appId = attempt.applicationId;
    else if (attempt.applicationId && attempt.applicationId !== this.appId && !this.warnedMismatch) {
      this.warnedMismatch = true;
      this.deps.logger.warn(`the AMRM proxy serves ${attempt.applicationId} but this sidecar is configured for ${this.appId}; enforcing for ${this.appId}`);
    }
  }
}
