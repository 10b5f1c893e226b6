/**
 * Watches the application's containers through the proxy: the targets of evacuations and the
 * `taskManagers` of the API. Read policy `max-age` (`yarn.refresh-interval`), and demanded by the
 * pass while an evacuation is in progress (a release must act on this pass's list). The list is
 * indexed once per read: a pass and GET /blocklist look containers up many times.
 */
import { AmrmProxy, AppContainer } from '../yarn/types';
import { Cached, READ_OK, ReadOutcome, ReadPolicy, message } from './cache';

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
  readonly cache: Cached<ContainerIndex>;

  constructor(
    private readonly deps: { proxy: AmrmProxy },
    policy: ReadPolicy,
  ) {
    this.cache = new Cached<ContainerIndex>("the application's containers", policy);
  }

  async refresh(now: number, demanded: boolean): Promise<ReadOutcome> {
    if (!this.cache.due(now, demanded)) return READ_OK;
    try {
      this.cache.set(indexContainers(await this.deps.proxy.containers()), now);
      return READ_OK;
    } catch (e) {
      return { ok: false, error: message(e) };
    }
  }
}
