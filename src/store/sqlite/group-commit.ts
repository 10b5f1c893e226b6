/**
 * The SQLite store's group commit: adds that arrive while no commit is running (concurrent API
 * requests in one event-loop turn), or while one is running, share the next transaction and so one
 * fsync; each promise resolves only after that commit. A lone add waits for nothing but its own
 * commit. The store runs each group's write (sqlite-store.ts): each call in it runs in its own
 * savepoint, so a call that fails on bad stored data (a corrupt row) is answered with its own
 * failure and rolled back alone; any other failure fails the whole group and acknowledges none of it.
 */

/**
 * Group commits in flight at once. On the write thread the next group is posted while one
 * commits, so the thread starts it the moment the first is durable instead of idling until the
 * event loop (busy with a pass for milliseconds, or a burst of requests) takes the answer and posts
 * again. The thread runs them
 * in order and answers in order, so the list cache still takes each group's change in commit order
 * (afterWrite). Here (inline) a commit ends before the next starts; with a WalSync its group then
 * waits for the disk off the loop, and WAL_GROUPS_IN_FLIGHT apply.
 */
export const GROUPS_IN_FLIGHT = 2;

/**
 * Group commits in flight when commits here wait for a WalSync (the sidecar): a group that has
 * committed costs nothing while it waits, and every group committed during a sync shares the
 * next one. With two, the adds that arrived during a sync were committed only after it, and so
 * waited for the sync after next: two or three syncs per request where one or two suffice.
 */
export const WAL_GROUPS_IN_FLIGHT = 8;

/** One call's part of a group's answer: its own result, or the failure that failed it alone. */
export type CallAnswer<R> = { kind: 'done'; value: R } | { kind: 'failed'; error: Error };

/**
 * How a group is written. `concurrent`: it carries several calls; `lone`: it is the only write in
 * flight (no other group committing or waiting), so its sync may run on the loop (WalSync.durable).
 */
export interface GroupShape {
  concurrent: boolean;
  lone: boolean;
}

/**
 * Commits one group (the calls in arrival order) and resolves once it is durable with one answer
 * per call, in the same order; rejects when the whole group failed (every call gets that error).
 */
export type CommitGroup<C, R> = (calls: C[], shape: GroupShape) => Promise<CallAnswer<R>[]>;

interface Waiting<C, R> {
  call: C;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

export class GroupCommit<C, R> {
  private pending: Waiting<C, R>[] = [];
  /** Group commits running (at most groupsInFlight): calls that arrive meanwhile form the next group. */
  private inFlight = 0;
  private readonly groupsInFlight: number;

  /** `walSync`: commits wait for a WalSync after they committed (WAL_GROUPS_IN_FLIGHT apply). */
  constructor(
    private readonly commit: CommitGroup<C, R>,
    opts: { walSync: boolean },
  ) {
    this.groupsInFlight = opts.walSync ? WAL_GROUPS_IN_FLIGHT : GROUPS_IN_FLIGHT;
  }

  /** Resolves with the call's answer once the group it joined is durable. */
  add(call: C): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ call, resolve, reject });
      if (this.pending.length === 1 && this.inFlight < this.groupsInFlight) setImmediate(() => void this.commitPending());
    });
  }

  /** No group is committing or waiting to: a write besides the groups would be the only one in flight. */
  get quiet(): boolean {
    return this.inFlight === 0 && this.pending.length === 0;
  }

  /** Resolves once every call added so far has been answered. */
  async drained(): Promise<void> {
    while (this.pending.length > 0 || this.inFlight > 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private async commitPending(): Promise<void> {
    if (this.inFlight >= this.groupsInFlight || this.pending.length === 0) return;
    const group = this.pending;
    this.pending = [];
    this.inFlight++;
    try {
      const concurrent = group.length > 1;
      // Lone: this group is the only one committing (it counts itself) and nothing waits behind it.
      const lone = !concurrent && this.inFlight === 1 && this.pending.length === 0;
      let answers: CallAnswer<R>[];
      try {
        answers = await this.commit(
          group.map((g) => g.call),
          { concurrent, lone },
        );
      } catch (e) {
        for (const g of group) g.reject(e);
        return;
      }
      group.forEach((g, i) => {
        const a = answers[i];
        if (a.kind === 'done') g.resolve(a.value);
        else g.reject(a.error);
      });
    } finally {
      this.inFlight--;
      // What arrived during this commit goes now: it has waited one commit already.
      if (this.pending.length > 0) void this.commitPending();
    }
  }
}
