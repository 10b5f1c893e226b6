/**
 * Watches what YARN has on this application's blacklist. The AM's one blacklist is shared by
 * several owners (this sidecar, Flink's own blocklist, …): the proxy keeps each owner's set and
 * sends YARN their union. This sidecar reconciles only its own owner's set (`actual`) and never
 * removes a host another owner holds (`othersHold`).
 *
 * Read policy: the proxy's list is read on every pass and every poll tick (it is local and cheap),
 * so a proxy or AM restart that lost the list is seen and repaired within a poll interval. The RM's
 * own view of the attempt (AppAttemptInfo.blacklistedNodes on newer RMs, best effort) is read only
 * when invalid — on start, on a new attempt, after a failed pass, on every full resync — because the
 * RM is shared by every job. A host the scheduler still honours but no owner holds (a list inherited
 * by a new attempt) is reported as `schedulerOnly`, so the pure rule can send it an explicit removal.
 */
import { Logger } from '../core/logger';
import { Metrics } from '../metrics/metrics';
import { AmrmProxy, BlacklistView as ProxyBlacklist, ResourceManagerReader } from '../yarn/types';
import { Cached, READ_OK, ReadOutcome, message } from './cache';
import { rmAttemptsDue } from './read-policy';

export interface BlacklistView {
  /** This sidecar's own owner set on the proxy. */
  actual: ReadonlySet<string>;
  /** Hosts any other owner holds: never removed by this sidecar. */
  othersHold: ReadonlySet<string>;
  /** Hosts only the RM's view of the attempt lists (candidates for an explicit removal). */
  schedulerOnly: readonly string[];
  /** Each owner's hosts as the proxy last reported them. */
  owners: Readonly<Record<string, readonly string[]>>;
}

/** This owner's set, the hosts others hold. A proxy that predates owners reports none: then the union is ours. */
export function ownSet(read: ProxyBlacklist, owner: string): { own: Set<string>; others: Set<string> } {
  const names = Object.keys(read.owners);
  if (names.length === 0) return { own: new Set(read.blacklist), others: new Set() };
  const others = new Set<string>();
  for (const name of names) if (name !== owner) for (const h of read.owners[name]) others.add(h);
  return { own: new Set(read.owners[owner] ?? []), others };
}

/** Without spreading `a` into an array: with 100,000 hosts that copy is garbage on every poll tick. */
function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const h of a) if (!b.has(h)) return false;
  return true;
}

export class BlacklistWatcher {
  readonly cache = new Cached<BlacklistView>("YARN's blacklist", { kind: 'every-pass' });
  private readonly scheduler = new Cached<readonly string[]>("the RM's view of the app's blacklist", { kind: 'on-demand' });
  /** The attempt the RM's view was last read for ('' = read before the attempt was known). */
  private schedulerReadFor: string | undefined;

  constructor(private readonly deps: { proxy: AmrmProxy; rm: ResourceManagerReader; logger: Logger; metrics: Metrics; owner: string }) {}

  async refresh(now: number, applicationId: string | undefined, attemptId: string | undefined): Promise<ReadOutcome> {
    // A new RM view changes what take() makes of an answer: then the answer is read whole.
    const schedulerDue = rmAttemptsDue(this.schedulerReadFor, attemptId);
    let read: ProxyBlacklist | undefined;
    try {
      read = await this.read(schedulerDue);
    } catch (e) {
      return { ok: false, error: message(e) };
    }
    // The RM's view of the attempt (an RM call, shared by every job): at start and when the
    // attempt changes, never on a timer or after a failure (read-policy.ts rmAttemptsDue).
    if (schedulerDue) {
      this.scheduler.set(await this.schedulerView(applicationId, attemptId), now);
      this.schedulerReadFor = attemptId ?? '';
    }
    this.take(read, now);
    return READ_OK;
  }

  /**
   * The poll's question: does the proxy hold another set for this owner than the one believed
   * (a restarted proxy or AM lost it, someone else wrote it)? An unreadable proxy means we no
   * longer know what YARN has: the belief is dropped, and the first answer afterwards is a change.
   */
  async drifted(now: number): Promise<boolean> {
    let read: ProxyBlacklist | undefined;
    try {
      read = await this.read();
    } catch {
      this.invalidate();
      return false;
    }
    const before = this.cache.value;
    this.take(read, now);
    return before === undefined || !sameSet(before.actual, this.cache.value?.actual ?? new Set());
  }

  /** Forget what the proxy has: read again by the next pass (the RM's view only for a new attempt). */
  invalidate(): void {
    this.cache.invalidate();
  }

  /** After a successful push this owner's set is exactly `hosts`; nothing is left only on the RM's side. */
  wrote(hosts: readonly string[], now: number): void {
    const prev = this.cache.value;
    const owners = { ...(prev?.owners ?? {}), [this.deps.owner]: [...hosts] };
    this.cache.set({ actual: new Set(hosts), othersHold: prev?.othersHold ?? new Set(), schedulerOnly: [], owners }, now);
    this.scheduler.set([], now);
    this.deps.metrics.blacklistHosts.set(hosts.length);
  }

  /**
   * The digest of the proxy's last answer and what take() made of it. With 100,000 hosts that
   * answer is megabytes every poll tick: when the proxy says it is unchanged (blacklistSince) and
   * nothing since replaced what was taken (a push, an invalidation, the RM's view), the belief
   * stands as it is — nothing parsed, no sets rebuilt.
   */
  private taken: { digest: string; scheduler: readonly string[] | undefined; value: BlacklistView } | undefined;

  /** The proxy's answer, or undefined when it is the one last taken and the belief is still that. */
  private async read(whole = false): Promise<ProxyBlacklist | undefined> {
    const proxy = this.deps.proxy;
    if (!proxy.blacklistSince) return proxy.blacklist();
    const t = this.taken;
    const current = !whole && t && t.scheduler === this.scheduler.value && this.cache.value === t.value;
    const r = await proxy.blacklistSince(current ? t.digest : undefined);
    if (r.unchanged) return undefined;
    this.digest = r.digest;
    return r.view;
  }

  /** The digest of the answer read() returned last (take() files it with what it made). */
  private digest: string | undefined;

  private take(read: ProxyBlacklist | undefined, now: number): void {
    const t = this.taken;
    if (read === undefined) {
      // read() said: the same answer as the one taken, and the belief is still what it made.
      if (t) this.cache.set(t.value, now);
      return;
    }
    const digest = this.digest;
    this.digest = undefined;
    const { own, others } = ownSet(read, this.deps.owner);
    // Read on every pass: the union is built only when the RM's view has hosts to check against it.
    const scheduler = this.scheduler.value ?? [];
    const union = scheduler.length > 0 ? new Set(read.blacklist) : undefined;
    const schedulerOnly = union ? scheduler.filter((h) => !union.has(h) && !own.has(h)) : [];
    const value: BlacklistView = { actual: own, othersHold: others, schedulerOnly, owners: read.owners };
    this.cache.set(value, now);
    this.taken = digest !== undefined ? { digest, scheduler: this.scheduler.value, value } : undefined;
    this.deps.metrics.blacklistHosts.set(own.size);
  }

  /** Best effort: an older RM or an RM error just skips it. */
  private async schedulerView(applicationId: string | undefined, attemptId: string | undefined): Promise<string[]> {
    if (applicationId === undefined) return [];
    try {
      const attempts = await this.deps.rm.attempts(applicationId);
      const current = attempts.find((a) => a.appAttemptId === attemptId) ?? attempts.at(-1);
      return current?.blacklistedNodes ?? [];
    } catch (e) {
      this.deps.logger.debug(`reading the RM's view of the blacklist failed (skipped): ${message(e)}`);
      return [];
    }
  }
}
