/**
 * Leader election on a ZooKeeper ensemble, by ZooKeeper's own recipe ("Leader Election" in
 * ZooKeeper's recipes; cited in docs/sync-engine.md):
 *
 *  - every candidate creates an EPHEMERAL_SEQUENTIAL znode `<path>/m-<token>-<seq>`;
 *  - the candidate whose znode has the lowest sequence number leads;
 *  - every other candidate watches only the znode just before its own (not the leader's), so a
 *    departure wakes one candidate, never the whole herd;
 *  - when that predecessor goes, the candidate lists the children again: it leads if it is now the
 *    lowest, else it watches its new predecessor.
 *
 * Ephemeral znodes die with their session, so a leader whose process dies, or whose session
 * expires (network partition longer than the session timeout), is replaced within the session
 * timeout without anyone acting. The `<token>` in the name finds our own znode again when a create
 * lost its connection after the server applied it (the recipe's "GUID" advice), so a retry never
 * leaves an orphan candidate that would block the election for a whole session timeout.
 *
 * What this session does when ZooKeeper is in trouble:
 *  - disconnected but not expired: the znode may still be alive, the role is kept until the
 *    session is known lost (the shared-state users check the age of what they read anyway);
 *  - a new session (expiry, or the session's watchdog replacing a stuck client): the old znode is
 *    gone or going; the role drops to follower at once and the candidate joins again.
 */
import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Logger, silentLogger } from '../../core/logger';
import { ZkSession, isTransient } from './session';
import { SerialSteps, ensurePath } from './steps';

export type ElectionRole = 'leader' | 'follower' | 'candidate';

export interface ZkElectionOptions {
  session: ZkSession;
  /** The election's parent znode (created when missing), e.g. <chroot><root>/cluster-state/election. */
  path: string;
  /** Who this candidate is, for logs and for the others to show (stored as the znode's data). */
  member: string;
  operationTimeoutMs: number;
  /** Pause before trying again after a failed step (ZooKeeper unreachable). Default 1 s. */
  retryMs?: number;
  logger?: Logger;
}

const MEMBER = /^m-([0-9a-f]+)-(\d{10})$/;

/** Sequence number of a member znode name, or undefined for a name the recipe did not write. */
export function sequenceOf(name: string): number | undefined {
  const m = MEMBER.exec(name);
  return m ? Number(m[2]) : undefined;
}

/**
 * The recipe's decision for one listing of the election's children: lead when ours is the lowest,
 * else watch the member just before ours. `absent` = our znode is not there (lost with a session).
 */
export function electionStep(children: readonly string[], mine: string): { kind: 'lead' } | { kind: 'watch'; predecessor: string } | { kind: 'absent' } {
  const members = children.filter((c) => sequenceOf(c) !== undefined).sort((a, b) => (sequenceOf(a) as number) - (sequenceOf(b) as number));
  const i = members.indexOf(mine);
  if (i < 0) return { kind: 'absent' };
  if (i === 0) return { kind: 'lead' };
  return { kind: 'watch', predecessor: members[i - 1] };
}

export class ZkLeaderElection extends EventEmitter {
  /** Names our znode; new per session, so a lost create is found again only within its session. */
  private token = randomBytes(6).toString('hex');
  private readonly log: Logger;
  private readonly retryMs: number;
  /** Our member znode's name (not path), once created in the current session. */
  private mine: string | undefined;
  private currentRole: ElectionRole = 'candidate';
  private running = false;
  /** Bumped on every (re)join: callbacks of an older round are ignored. */
  private round = 0;
  private readonly steps: SerialSteps;
  private readonly onSession = (): void => {
    // A new session: our ephemeral znode belongs to the old one and is gone (or will be soon).
    this.mine = undefined;
    this.token = randomBytes(6).toString('hex');
    this.round++;
    this.setRole('candidate', 'zookeeper session replaced');
    this.step();
  };

  constructor(private readonly opts: ZkElectionOptions) {
    super();
    this.log = opts.logger ?? silentLogger;
    this.retryMs = opts.retryMs ?? 1000;
    this.steps = new SerialSteps({
      work: () => this.runRound(),
      active: () => this.running,
      retryMs: this.retryMs,
      onRetry: (e, retryMs) => this.log.warn(`cluster-state election: ${e.message}; trying again in ${retryMs} ms`, { member: this.opts.member }),
    });
  }

  get role(): ElectionRole {
    return this.currentRole;
  }

  get isLeader(): boolean {
    return this.currentRole === 'leader';
  }

  /** Our member znode's name in the current session (tests, logs). */
  get memberNode(): string | undefined {
    return this.mine;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.opts.session.on('session', this.onSession);
    this.step();
  }

  /** Leaves the election: deletes our znode (best effort; it would die with the session anyway). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.round++;
    this.opts.session.off('session', this.onSession);
    this.steps.cancel();
    const mine = this.mine;
    this.mine = undefined;
    this.setRole('candidate', 'stopped');
    if (mine) {
      try {
        await this.opts.session.multi([{ op: 'remove', path: `${this.opts.path}/${mine}`, version: -1 }], this.opts.operationTimeoutMs);
      } catch {
        // gone already, or ZooKeeper unreachable: the session's end removes it
      }
    }
  }

  private setRole(role: ElectionRole, why: string): void {
    if (role === this.currentRole) return;
    const from = this.currentRole;
    this.currentRole = role;
    this.log.info(`cluster-state election: ${from} → ${role} (${why})`, { member: this.opts.member, znode: this.mine });
    this.emit('role', role);
  }

  /** One run of the recipe at a time; a request meanwhile runs it once more afterwards (steps.ts). */
  private step(): void {
    this.steps.request();
  }

  /** A failure of an older round (the session changed meanwhile) is not retried: the new round runs. */
  private async runRound(): Promise<void> {
    const round = this.round;
    try {
      await this.runOnce(round);
    } catch (e) {
      if (round === this.round) throw e;
    }
  }

  private async runOnce(round: number): Promise<void> {
    const { session, path, operationTimeoutMs: t } = this.opts;
    if (this.mine === undefined) {
      await ensurePath(this.opts.session, this.opts.path, this.opts.operationTimeoutMs);
      this.mine = await this.join();
      if (round !== this.round) return;
    }
    for (;;) {
      const children = await session.getChildren(path, t);
      if (round !== this.round || !this.running) return;
      const next = electionStep(children, this.mine);
      if (next.kind === 'absent') {
        // Our znode went without a session event (removed by hand, or the session changed while
        // we listed): join again.
        this.mine = undefined;
        this.setRole('candidate', 'member znode gone');
        await ensurePath(this.opts.session, this.opts.path, this.opts.operationTimeoutMs);
        this.mine = await this.join();
        continue;
      }
      // Our own znode is watched too: if it goes without a session event (deleted by hand, or it
      // was an old session's), nobody else would tell us, and we would be out of the election.
      const own = await session.exists(`${path}/${this.mine}`, t, () => {
        if (round === this.round) this.step();
      });
      if (round !== this.round || !this.running) return;
      if (!own) continue;
      if (next.kind === 'lead') {
        this.setRole('leader', 'lowest member');
        return;
      }
      // Watch only the predecessor; if it is already gone, list again.
      const stat = await session.exists(`${path}/${next.predecessor}`, t, () => {
        if (round === this.round) this.step();
      });
      if (round !== this.round || !this.running) return;
      if (stat) {
        this.setRole('follower', `after ${next.predecessor}`);
        return;
      }
    }
  }

  /** Creates our member znode; after a lost answer, finds it by its token instead of making a second. */
  private async join(): Promise<string> {
    const { session, path, operationTimeoutMs: t } = this.opts;
    const prefix = `m-${this.token}-`;
    try {
      const created = await session.createEphemeralSequential(`${path}/${prefix}`, Buffer.from(this.opts.member), t);
      return created.slice(created.lastIndexOf('/') + 1);
    } catch (e) {
      if (!isTransient(e)) throw e;
      const found = (await session.getChildren(path, t)).find((c) => c.startsWith(prefix));
      if (found) return found;
      throw e;
    }
  }
}
