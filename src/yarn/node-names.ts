/**
 * What YARN's scheduler matches a blacklist entry against. By default a node's name is its host
 * (SchedulerNode#getNodeName = the NodeManager's host), which is what a node item names. With
 * `yarn.scheduler.include-port-in-node-name=true` (pseudo-distributed clusters, several
 * NodeManagers per host) the name is `host:port` of the NodeManager's NodeId, and an entry that
 * names the host matches nothing: every block would silently do nothing.
 *
 * So the naming is detected at start (the RM's /conf, then the node ids) and, when the RM names
 * nodes by host:port, the proxy is wrapped: a pushed host becomes the NodeIds of that host, and a
 * read NodeId becomes its host again, so the sync engine keeps thinking in hosts. A host is read
 * back as blacklisted only when every NodeId it has now is on the list: a NodeManager that joins
 * later (or comes back on another port) makes the next pass push the host again.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { AmrmProxy, AppContainer, AttemptInfo, BlacklistChange, BlacklistReading, BlacklistVersion, BlacklistView, BlacklistWrite, ClusterNode, CompletedContainersPage, ReleaseResult, ResourceManagerReader } from './types';

export const INCLUDE_PORT_KEY = 'yarn.scheduler.include-port-in-node-name';

/** How the RM names nodes for the scheduler: by host (YARN's default) or by host:port. */
export type NodeNaming = 'host' | 'host-port';

export type NodeNamingSetting = 'auto' | 'true' | 'false';

export interface NamingDecision {
  naming: NodeNaming;
  /** Why, for the start-up log line. */
  why: string;
  /** The naming could not be read and may be wrong: say so loudly. */
  warning?: string;
}

/** Several NodeManagers of one host: what only include-port-in-node-name lets the scheduler tell apart. */
export function sharedHosts(nodes: readonly ClusterNode[]): string[] {
  const count = new Map<string, number>();
  for (const n of nodes) count.set(n.host, (count.get(n.host) ?? 0) + 1);
  return [...count].filter(([, c]) => c > 1).map(([h]) => h).sort();
}

/** The naming to push with: configured, or read from the RM (its /conf, else a hint from its node ids). */
export async function detectNodeNaming(rm: ResourceManagerReader, setting: NodeNamingSetting): Promise<NamingDecision> {
  if (setting !== 'auto') return { naming: setting === 'true' ? 'host-port' : 'host', why: `cluster.resource-blocklist.yarn.include-port-in-node-name is ${setting}` };
  let problem: string;
  if (!rm.confValue) problem = 'this RM reader cannot read the RM configuration';
  else {
    try {
      const v = (await rm.confValue(INCLUDE_PORT_KEY))?.trim().toLowerCase();
      return { naming: v === 'true' ? 'host-port' : 'host', why: `the RM's ${INCLUDE_PORT_KEY} is ${v ?? 'unset (false)'}` };
    } catch (e) {
      problem = `the RM's /conf could not be read (${(e as Error).message})`;
    }
  }
  let shared: string[] = [];
  try {
    shared = sharedHosts(await rm.nodes());
  } catch {
    // Nothing more to go on: the warning below says what to set.
  }
  const hint = shared.length ? `; ${shared.length} host(s) run several NodeManagers (${shared.slice(0, 3).join(', ')}), which suggests it is true` : '';
  return {
    naming: 'host',
    why: `${problem}: pushing host names (YARN's default)`,
    warning: `${problem}, so whether the RM names nodes host:port (${INCLUDE_PORT_KEY}) is unknown${hint}. If it does, every block does nothing: set cluster.resource-blocklist.yarn.include-port-in-node-name to true or false`,
  };
}

/** How long a node list read for the mapping is used before it is read again. */
const NODES_MAX_AGE_MS = 60_000;

/** The AMRM proxy as a scheduler that names nodes host:port sees it, in hosts for the engine. */
export class PortNamedProxy implements AmrmProxy {
  private nodes: { at: number; idsByHost: Map<string, string[]> } | undefined;
  /** Offered only when the proxy's client offers it (the engine then reads conditionally). */
  readonly blacklistSince?: (known: BlacklistVersion | undefined) => Promise<BlacklistReading>;

  constructor(
    private readonly proxy: AmrmProxy,
    private readonly rm: ResourceManagerReader,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    const since = proxy.blacklistSince?.bind(proxy);
    if (since) this.blacklistSince = async (known) => {
      const r = await since(known);
      return r.unchanged ? r : { ...r, view: await this.toHosts(r.view) };
    };
  }

  attempt(): Promise<AttemptInfo> {
    return this.proxy.attempt();
  }

  async blacklist(): Promise<BlacklistView> {
    return this.toHosts(await this.proxy.blacklist());
  }

  async updateBlacklist(change: BlacklistChange, owner?: string): Promise<BlacklistWrite | void> {
    const ids = await this.idsByHost(change.additions);
    const additions = change.additions.flatMap((h) => nodeNames(h, ids));
    // A removal takes every name the host may be on the list under: its NodeIds now, and the host itself.
    const removals = change.removals.flatMap((h) => [...new Set([h, ...nodeNames(h, ids)])]);
    return this.proxy.updateBlacklist({ additions, removals }, owner);
  }

  containers(): Promise<AppContainer[]> {
    return this.proxy.containers();
  }

  release(containerIds: string[]): Promise<ReleaseResult> {
    return this.proxy.release(containerIds);
  }

  completedContainers(after: number): Promise<CompletedContainersPage> {
    return this.proxy.completedContainers(after);
  }

  /** Each owner's NodeIds as hosts: a host only when all of its NodeIds are there. */
  private async toHosts(view: BlacklistView): Promise<BlacklistView> {
    const ids = await this.idsByHost([]);
    const owners: Record<string, string[]> = {};
    for (const [owner, names] of Object.entries(view.owners)) owners[owner] = hostsOf(names, ids);
    return { blacklist: hostsOf(view.blacklist, ids), owners };
  }

  /** NodeIds by host, from a node list at most a minute old (read again at once when a host to push is not on it). */
  private async idsByHost(needed: readonly string[]): Promise<Map<string, string[]>> {
    const now = this.clock.now();
    const n = this.nodes;
    const fresh = n !== undefined && now - n.at < NODES_MAX_AGE_MS && needed.every((h) => h.startsWith('/') || n.idsByHost.has(h));
    if (fresh) return n.idsByHost;
    try {
      const idsByHost = new Map<string, string[]>();
      for (const node of await this.rm.nodes()) {
        const list = idsByHost.get(node.host);
        if (list) list.push(node.id);
        else idsByHost.set(node.host, [node.id]);
      }
      this.nodes = { at: now, idsByHost };
      return idsByHost;
    } catch (e) {
      // The last list still names what it named; a host it lacks is pushed as itself.
      this.logger.warn(`include-port-in-node-name: the node list could not be read to name nodes host:port: ${(e as Error).message}`);
      return n?.idsByHost ?? new Map();
    }
  }
}

/** What YARN matches for one entry: a rack path or an unknown host as it is, a host as its NodeIds. */
function nodeNames(entry: string, idsByHost: ReadonlyMap<string, string[]>): string[] {
  if (entry.startsWith('/')) return [entry];
  return idsByHost.get(entry) ?? [entry];
}

/** Entries read from the proxy, as the hosts the engine pushed. */
function hostsOf(names: readonly string[], idsByHost: ReadonlyMap<string, string[]>): string[] {
  const present = new Set(names);
  const out = new Set<string>();
  for (const name of names) {
    const host = hostOfNodeName(name);
    // A host the node list names is there when all its NodeIds are (its bare name matches nothing);
    // one it does not name is there as pushed (itself).
    const ids = idsByHost.get(host);
    if (ids ? ids.every((id) => present.has(id)) : present.has(host) || host !== name) out.add(host);
  }
  return [...out].sort();
}

/** `host:port` → `host`; anything else as it is. */
export function hostOfNodeName(name: string): string {
  const colon = name.lastIndexOf(':');
  return colon > 0 && /^\d+$/.test(name.slice(colon + 1)) ? name.slice(0, colon) : name;
}

/**
 * The RM as the engine reads it when the scheduler names nodes host:port: an attempt's scheduler
 * blacklist (AppAttemptInfo.blacklistedNodes) names NodeIds, which the engine would take for hosts
 * nobody desires and remove (the very entries it pushed); here they are hosts again.
 */
export function hostNamedRm(rm: ResourceManagerReader): ResourceManagerReader {
  return Object.assign(Object.create(rm) as ResourceManagerReader, {
    attempts: async (appId: string) =>
      (await rm.attempts(appId)).map((a) => (a.blacklistedNodes ? { ...a, blacklistedNodes: [...new Set(a.blacklistedNodes.map(hostOfNodeName))] } : a)),
  });
}
