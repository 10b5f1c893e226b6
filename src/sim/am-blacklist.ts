/**
 * The application's one blacklist, as YARN keeps it on both sides of the AMRM protocol. No
 * counters and no containers here: the cluster (cluster.ts) counts calls and asks isPlaceBlacklisted
 * when it places.
 *
 * What it copies from YARN, and from where:
 *  - The AM side keeps AMRMClientImpl's three sets: `blacklistedNodes` (what the AM has asked for),
 *    and pending `blacklistAdditions` / `blacklistRemovals` that go out with the next allocate.
 *    updateBlacklist adds the additions (dropping them from pending removals), then the removals
 *    (dropping them from pending additions): within one call the removal wins.
 *  - The RM validates the request first (RMServerUtils.validateBlacklistRequest): "*" (ResourceRequest
 *    .ANY) among the additions fails the whole call with "Cannot add * to the blacklist!". The proxy
 *    contract refuses such an update at once (400) instead of poisoning the next allocate.
 *  - On allocate the scheduler applies additions then removals (AppSchedulingInfo
 *    .updateBlacklistedPlaces). A place is blacklisted when the node's host or its rack is in the
 *    set (SchedulerAppUtils.isPlaceBlacklisted).
 *  - The AM's one blacklist is shared by several owners (the sidecar as `blocklist`, Flink's own
 *    blocklist as `am`, …): each owner changes only its own set, the AMRMClient holds the union, so
 *    one owner's removal never lifts a host another owner still holds.
 */
import { randomBytes } from 'node:crypto';
import { NewAttemptBlacklist } from './options';

export type BlacklistUpdateResult =
  /** `etag`: the blacklist's entity tag after the update; `previousEtag`: the one it was applied to. */
  | { ok: true; blacklist: string[]; owners: Record<string, string[]>; etag: string; previousEtag: string }
  | { ok: false; error: string };

export const ANY = '*';
export const CANNOT_ADD_ANY = 'Cannot add * to the blacklist!';

/** The owner the proxy contract assumes when a request names none: the sidecar. */
export const DEFAULT_BLACKLIST_OWNER = 'blocklist';
/** An owner is a short token: it appears in logs, URLs and the proxy's state. */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function ownerError(owner: string): string | undefined {
  return OWNER_PATTERN.test(owner) ? undefined : `"owner" must be a short token (letters, digits, '.', '_', '-'; at most 64; got '${owner.slice(0, 80)}')`;
}

export class AmBlacklist {
  // Each owner's own set; the AMRMClient holds their union.
  private readonly owners = new Map<string, Set<string>>();
  // AMRMClientImpl's sets (the AM side) …
  private readonly client = new Set<string>();
  private readonly pendingAdditions = new Set<string>();
  private readonly pendingRemovals = new Set<string>();
  // … and the scheduler's placesBlacklistedByApp (the RM side).
  private readonly scheduler = new Set<string>();
  /**
   * The proxy's GET /blacklist version (its strong ETag, RFC 9110 §8.8.3): a random epoch drawn when
   * this proxy starts — from the OS, never from the simulator's seeded random, since a restarted
   * simulator runs with the same seed — and a counter moved by every change of any owner's set. A
   * restarted proxy starts with a new epoch, so a client's old tag can never name its new state.
   */
  private readonly epoch = randomBytes(8).toString('hex');
  private version = 1;

  /** The entity tag of what GET /blacklist answers now (quoted, as the ETag header carries it). */
  etag(): string {
    return `"${this.epoch}-${this.version}"`;
  }

  /** What the AM's AMRMClient has asked for: the union of all owners (the proxy's GET /blacklist). */
  clientView(): string[] {
    return [...this.client].sort();
  }

  /** Each owner's hosts (owners with an empty set are left out), keys and hosts sorted. */
  ownersView(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const owner of [...this.owners.keys()].sort()) {
      const set = this.owners.get(owner);
      if (set && set.size > 0) out[owner] = [...set].sort();
    }
    return out;
  }

  /** What the scheduler honours now (RM REST appAttempt.blacklistedNodes). */
  schedulerView(): string[] {
    return [...this.scheduler].sort();
  }

  /** Deltas waiting for the next allocate. */
  pendingDelta(): { additions: string[]; removals: string[] } {
    return { additions: [...this.pendingAdditions].sort(), removals: [...this.pendingRemovals].sort() };
  }

  /** SchedulerAppUtils.isPlaceBlacklisted: host or rack. */
  isPlaceBlacklisted(host: string, rack: string): boolean {
    return this.scheduler.has(host) || this.scheduler.has(rack);
  }

  /**
   * One owner's update (the proxy's POST /blacklist), after the RM's validation (whole update
   * refused on "*"): the owner's set takes the additions, then the removals (removal wins within a
   * call, YARN's rule); the AMRMClient then gets AMRMClient#updateBlacklist with the change of the
   * union only, so a host another owner holds stays blacklisted.
   */
  update(additions: string[], removals: string[], owner: string): BlacklistUpdateResult {
    const bad = ownerError(owner);
    if (bad !== undefined) return { ok: false, error: bad };
    if (additions.includes(ANY)) return { ok: false, error: CANNOT_ADD_ANY };
    const previousEtag = this.etag();
    let set = this.owners.get(owner);
    if (!set) {
      set = new Set();
      this.owners.set(owner, set);
    }
    let changed = false;
    for (const a of additions) {
      if (set.has(a)) continue;
      set.add(a);
      changed = true;
    }
    for (const r of removals) if (set.delete(r)) changed = true;
    if (set.size === 0) this.owners.delete(owner);
    this.syncClient([...additions, ...removals]);
    // An update that changes no set keeps the tag: the answer of GET /blacklist is the same.
    if (changed) this.version++;
    return { ok: true, blacklist: this.clientView(), owners: this.ownersView(), etag: this.etag(), previousEtag };
  }

  /** One owner's hosts now (to replace its whole set by an update). */
  ownerHosts(owner: string): string[] {
    return [...(this.owners.get(owner) ?? [])];
  }

  /** An allocate: the pending delta reaches the scheduler, additions then removals. */
  applyPending(): void {
    for (const a of this.pendingAdditions) this.scheduler.add(a);
    for (const r of this.pendingRemovals) this.scheduler.delete(r);
    this.pendingAdditions.clear();
    this.pendingRemovals.clear();
  }

  /**
   * What the blacklist of a new application attempt starts as:
   *  - 'empty': a new AM's AMRMClient starts with no blacklist and the scheduler attempt is
   *    fresh — the sidecar must push everything again;
   *  - 'inherit': both the scheduler's set and the proxy's view carry over (a work-preserving restart
   *    whose AM-side component recovered its state);
   *  - 'scheduler-only': the scheduler keeps the old set (AppSchedulingInfo
   *    .transferStateFromPreviousAppSchedulingInfo) but the new AM's client starts empty, so the proxy
   *    reports [] while YARN still honours the old entries, so a sidecar that trusts the proxy's
   *    list never removes them.
   * The cluster's default is 'scheduler-only' with keep-containers (as a real RM does), else 'empty'.
   */
  newAttempt(mode: NewAttemptBlacklist): void {
    if (mode !== 'inherit') {
      if (this.owners.size > 0) this.version++;
      this.owners.clear();
      this.client.clear();
      this.pendingAdditions.clear();
      this.pendingRemovals.clear();
    }
    if (mode === 'empty') this.scheduler.clear();
  }

  /** Brings the AMRMClient's set (and its pending deltas) to the union of the owners for these hosts. */
  private syncClient(hosts: Iterable<string>): void {
    for (const h of new Set(hosts)) {
      let held = false;
      for (const set of this.owners.values()) {
        if (set.has(h)) {
          held = true;
          break;
        }
      }
      if (held && !this.client.has(h)) {
        this.client.add(h);
        this.pendingAdditions.add(h);
        this.pendingRemovals.delete(h);
      } else if (!held && (this.client.has(h) || this.pendingAdditions.has(h))) {
        this.client.delete(h);
        this.pendingRemovals.add(h);
        this.pendingAdditions.delete(h);
      } else if (!held) {
        // AMRMClient#updateBlacklist sends a removal even for a host it never held.
        this.pendingRemovals.add(h);
      }
    }
  }
}
