/**
 * Watches the application's containers through the proxy: the targets of evacuations and the
 * `taskManagers` of the API. Read every pass while an evacuation is in progress (a release must act
 * on this pass's list), every `yarn.refresh-interval` while items are in force, never when nothing
 * is blocked (read-policy.ts). The list is
 * indexed once per read: a pass and GET /blocklist look containers up many times.
 */
import { AmrmProxy, AppContainer } from '../yarn/types';
import { Cached, READ_OK, ReadOutcome, message } from './cache';
import { ReadIntervals, containersDue } from './read-policy';

export interface ContainerIndex {
  list: readonly AppContainer[];
  byHost: ReadonlyMap<string, AppContainer[]>;
  byId: ReadonlyMap<string, AppContainer>;
}

export function indexContainers(list: readonly AppContainer[]): ContainerIndex {
  const byHost = new Map<string, AppContainer[]>();
  const byId = new Map<string, AppContainer>();
  for (const c of list) {
    const host = c.host || c.nodeId.split(':')[0];
    let l = byHost.get(host);
    if (!l) byHost.set(host, (l = []));
    l.push(c);
    byId.set(c.containerId, c);
  }
  return { list, byHost, byId };
}

export class ContainersWatcher {
  /** The policy lives in read-policy.ts (containersDue); the cache holds the value and its age. */
  readonly cache = new Cached<ContainerIndex>("the application's containers", { kind: 'on-demand' });

  constructor(
    private readonly deps: { proxy: AmrmProxy },
    private readonly intervals: ReadIntervals,
  ) {}

  stale(now: number, w: { evacuating: boolean; itemsInForce: boolean }): boolean {
    return containersDue(this.cache.readAt, now, w, this.intervals).due;
  }

  /** The read an in-flight caller waits for, so concurrent passes and answers share one. */
  private reading: Promise<ReadOutcome> | undefined;

  async refresh(now: number, w: { evacuating: boolean; itemsInForce: boolean }): Promise<ReadOutcome> {
    if (!containersDue(this.cache.readAt, now, w, this.intervals).due) return READ_OK;
    return this.read(now);
  }

  /**
   * For an answer that depends on the containers while nothing may be blocked (so no pass reads
   * them): as fresh as a pass with items in force keeps them, read once otherwise.
   */
  async forAnswer(now: number): Promise<ReadOutcome> {
    if (!containersDue(this.cache.readAt, now, { evacuating: false, itemsInForce: true }, this.intervals).due) return READ_OK;
    return this.reading ?? this.read(now);
  }

  private read(now: number): Promise<ReadOutcome> {
    const r: Promise<ReadOutcome> = this.deps.proxy
      .containers()
      .then((list): ReadOutcome => {
        this.cache.set(indexContainers(list), now);
        return READ_OK;
      })
      .catch((e: unknown): ReadOutcome => ({ ok: false, error: message(e) }))
      .finally(() => {
        if (this.reading === r) this.reading = undefined;
      });
    this.reading = r;
    return r;
  }
}
