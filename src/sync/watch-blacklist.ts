/**
 * Watches what YARN has on this application's blacklist. The AM's one blacklist is shared by
 * several owners (this sidecar, Flink's own blocklist, …): the proxy keeps each owner's set and
 * sends YARN their union. This sidecar reconciles only its own owner's set (`actual`) and never
 * removes a host another owner holds (`othersHold`).
 *
 * Read policy: the proxy's list is read on every pass and every poll tick (it is local), so a proxy
 * or AM restart that lost the list is seen and repaired within a poll interval. A proxy that
 * versions its list (ETag) answers an unchanged list with a 304 and no body, and tells after each
 * of our pushes whether anyone wrote in between; without versions a digest of the bytes saves the
 * parse (blacklistSince in src/yarn/amrm-client.ts). The RM's
 * own view of the attempt (AppAttemptInfo.blacklistedNodes on newer RMs, best effort) is read only
 * when invalid — on start, on a new attempt, after a failed pass, on every full resync — because the
 * RM is shared by every job. A host the scheduler still honours but no owner holds (a list inherited
 * by a new attempt) is reported as `schedulerOnly`, so the pure rule can send it an explicit removal.
 */
import { Logger } from '../core/logger';
import { Metrics } from '../metrics/metrics';
import { AmrmProxy, BlacklistChange, BlacklistVersion, BlacklistView as ProxyBlacklist, BlacklistWrite, ResourceManagerReader } from '../yarn/types';
import { Cached, READ_OK, ReadOutcome, message } from './cache';
import { rmAttemptsDue } from './read-policy';
import { isSorted } from './sorted-hosts';
import { DiffOrigin, diffLeadsFrom } from './desired';

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

/** Our own push as the proxy acknowledged it: the change sent, the versions it names (if any), and the plan sets it was computed between. */
export interface OwnPush {
  change: BlacklistChange;
  write: BlacklistWrite | void;
  origin?: DiffOrigin;
}

/**
 * Whether `after` is `before` with `change` applied as the proxy applies it (additions, then
 * removals: a host in both ends up removed, YARN's rule), without copying `before` (100,000 hosts).
 */
export function appliedIs(before: ReadonlySet<string>, change: BlacklistChange, after: ReadonlySet<string>, origin?: DiffOrigin): boolean {
  // The usual case under a stream of writes: the change is the diff computed between these very sets.
  if (diffLeadsFrom(origin, before, after)) return true;
  // Two sorted sets (the belief was the last plan, `after` is this plan's): a merge walk instead of
  // a lookup per host, binary searches for the change's few hosts, and no hash set of either.
  const inBefore = isSorted(before) ? (h: string) => before.includes(h) : (h: string) => before.has(h);
  const inAfter = isSorted(after) ? (h: string) => after.includes(h) : (h: string) => after.has(h);
  const removed = new Set(change.removals);
  for (const r of removed) if (inAfter(r)) return false;
  let size = 0;
  if (isSorted(before) && isSorted(after)) {
    const a = after.hosts;
    let j = 0;
    for (const h of before.hosts) {
      if (removed.has(h)) continue;
      while (j < a.length && a[j] < h) j++;
      if (a[j] !== h) return false;
      size++;
    }
  } else {
    for (const h of before) {
      if (removed.has(h)) continue;
      if (!after.has(h)) return false;
      size++;
    }
  }
  for (const a of new Set(change.additions)) {
    if (removed.has(a) || inBefore(a)) continue;
    if (!inAfter(a)) return false;
    size++;
  }
  return size === after.size;
}

/** Without spreading `a` into an array: with 100,000 hosts that copy is garbage on every poll tick. */
function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  if (isSorted(a) && isSorted(b)) return a.hosts.every((h, i) => h === b.hosts[i]);
  for (const h of a) if (!b.has(h)) return false;
  return true;
}

export class BlacklistWatcher {
  readonly cache = new Cached<BlacklistView>("YARN's blacklist", { kind: 'every-pass' });
  private readonly scheduler = new Cached<readonly string[]>("the RM's view of the app's blacklist", { kind: 'on-demand' });
  /** The attempt the RM's view was last read for ('' = read before the attempt was known). */
  private schedulerReadFor: string | undefined;
  /** The AM container the RM's attempt report names (read with the RM's view), for a proxy that does not name it. */
  private rmAm: { attemptId: string | undefined; containerId: string } | undefined;

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

  /**
   * After a successful push this owner's set is exactly `hosts`; nothing is left only on the RM's
   * side. The other owners' sets are what the last read said; whether they still are is known only
   * from a versioned proxy: when it applied our change to the very version the belief was read
   * from (`previousEtag`), nobody wrote in between, so the belief is the proxy's state at the
   * version the push made, and the next read may be a 304. Otherwise (another writer came first,
   * a proxy without versions, an answer that does not add up) the next read is a full one.
   */
  wrote(hosts: readonly string[], now: number, push?: OwnPush, hostSet?: ReadonlySet<string>): void {
    const prev = this.cache.value;
    const t = this.taken;
    // `hosts` and `hostSet` (the plan's blacklist and its set) are never changed: the belief shares
    // them rather than copying 100,000 host names after every push.
    const owners = { ...(prev?.owners ?? {}), [this.deps.owner]: hosts };
    const actual = hostSet ?? new Set(hosts);
    const value: BlacklistView = { actual, othersHold: prev?.othersHold ?? new Set(), schedulerOnly: [], owners };
    this.cache.set(value, now);
    this.scheduler.set([], now);
    this.deps.metrics.blacklistHosts.set(hosts.length);
    const write = push?.write;
    const exact = write && prev && t && t.value === prev && t.version.kind === 'etag' && t.version.etag === write.previousEtag && appliedIs(prev.actual, push.change, actual, push.origin);
    // A belief that is not exact is never filed under a version: the next read() is a full one.
    this.taken = exact ? { version: { kind: 'etag', etag: write.etag }, scheduler: this.scheduler.value, value } : undefined;
  }

  /**
   * The version of the proxy's last answer (or of the state our own push made) and what was made
   * of it. With 100,000 hosts that answer is megabytes every poll tick: when the proxy says it is
   * unchanged (blacklistSince: a 304 to If-None-Match, or the same digest) and nothing since
   * replaced what was taken (an invalidation, the RM's view, a push not known to be exact), the
   * belief stands as it is — nothing parsed, no sets rebuilt.
   */
  private taken: { version: BlacklistVersion; scheduler: readonly string[] | undefined; value: BlacklistView } | undefined;

  /** The proxy's answer, or undefined when it is the one last taken and the belief is still that. */
  private async read(whole = false): Promise<ProxyBlacklist | undefined> {
    const proxy = this.deps.proxy;
    if (!proxy.blacklistSince) return proxy.blacklist();
    const t = this.taken;
    const current = !whole && t && t.scheduler === this.scheduler.value && this.cache.value === t.value;
    const r = await proxy.blacklistSince(current ? t.version : undefined);
    if (r.unchanged) return undefined;
    this.version = r.version;
    return r.view;
  }

  /** The version of the answer read() returned last (take() files it with what it made). */
  private version: BlacklistVersion | undefined;

  private take(read: ProxyBlacklist | undefined, now: number): void {
    const t = this.taken;
    if (read === undefined) {
      // read() said: the same answer as the one taken, and the belief is still what it made.
      if (t) this.cache.set(t.value, now);
      return;
    }
    const version = this.version;
    this.version = undefined;
    const { own, others } = ownSet(read, this.deps.owner);
    // Read on every pass: the union is built only when the RM's view has hosts to check against it.
    const scheduler = this.scheduler.value ?? [];
    const union = scheduler.length > 0 ? new Set(read.blacklist) : undefined;
    const schedulerOnly = union ? scheduler.filter((h) => !union.has(h) && !own.has(h)) : [];
    const value: BlacklistView = { actual: own, othersHold: others, schedulerOnly, owners: read.owners };
    this.cache.set(value, now);
    this.taken = version !== undefined ? { version, scheduler: this.scheduler.value, value } : undefined;
    this.deps.metrics.blacklistHosts.set(own.size);
  }

  /** The AM container of `attemptId` as the RM's attempt report named it, when that was read for this attempt. */
  rmAmContainer(attemptId: string | undefined): string | undefined {
    return this.rmAm !== undefined && this.rmAm.attemptId === attemptId ? this.rmAm.containerId : undefined;
  }

  /** Best effort: an older RM or an RM error just skips it. */
  private async schedulerView(applicationId: string | undefined, attemptId: string | undefined): Promise<string[]> {
    if (applicationId === undefined) return [];
    try {
      const attempts = await this.deps.rm.attempts(applicationId);
      const current = attempts.find((a) => a.appAttemptId === attemptId) ?? attempts.at(-1);
      this.rmAm = current?.containerId !== undefined ? { attemptId: current.appAttemptId, containerId: current.containerId } : undefined;
      return current?.blacklistedNodes ?? [];
    } catch (e) {
      this.deps.logger.debug(`reading the RM's view of the blacklist failed (skipped): ${message(e)}`);
      return [];
    }
  }
}
