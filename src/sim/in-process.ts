/**
 * The simulated cluster served in-process through the sync engine's own ports
 * (ResourceManagerReader and AmrmProxy), so engine tests and benchmarks run against the one YARN
 * model of this project without a socket. It is a thin adapter: every answer is the cluster's
 * (cluster.ts), shaped as the HTTP clients (src/yarn/*-client.ts) would return it after parsing
 * the faces in rm-routes.ts and amrm-routes.ts. Faults come from the same FaultInjector the HTTP
 * server uses (latency is ignored: nothing here sleeps).
 */
import { AmrmProxy, AppContainer, ApplicationInfo, AttemptInfo, AttemptSummary, BlacklistChange, BlacklistReading, BlacklistVersion, BlacklistView, BlacklistWrite, ClusterInfo, ClusterMetrics, ClusterNode, CompletedContainersPage, NodeState, ReleaseResult, ResourceManagerReader, YarnCallError } from '../yarn/types';
import { SimCluster } from './cluster';
import { proxyAttempt } from './proxy-attempt';
import { SimNode } from './cluster-types';
import { countNodeStates } from '../yarn/node-counts';
import { Face, FaultInjector } from './faults';
import { SimFlink } from './flink-jobs';
import { FlinkCallError, FlinkJobManager } from '../flink/types';
import { Parsed, parseCheckpointConfig, parseFlinkVersion, parseJobDetail, parseJobs, parseLatestCheckpoint, parseRestarts, parseTaskManagers, parseTriggerId, parseTriggeredCheckpoint, parseVertexTaskManagers } from '../flink/json';

/** Proxy calls whose answer can be lost after the cluster acted (a timeout after the AM acted). */
export type LosableCall = 'updateBlacklist' | 'release';

export interface InProcessYarn {
  rm: ResourceManagerReader;
  proxy: AmrmProxy;
  faults: FaultInjector;
  /** The next such call takes effect but its caller gets an error instead of the answer. */
  loseNextAnswer(call: LosableCall): void;
}

export function inProcessYarn(cluster: SimCluster, faults: FaultInjector = new FaultInjector()): InProcessYarn {
  const lose = new Set<LosableCall>();
  const enter = (face: Face): void => {
    if (face === 'rm') cluster.counters.rmRequests++;
    else cluster.counters.amrmRequests++;
    const d = faults.decide(face);
    if (d.kind === 'pass') return;
    cluster.counters.faultsInjected[face]++;
    if (d.kind === 'reset') throw new YarnCallError('socket hang up (simulated reset)');
    throw new YarnCallError(d.status === 503 ? `${d.status} simulated outage` : `${d.status} simulated failure`, d.status);
  };
  const answer = <T>(call: LosableCall, value: T): T => {
    if (lose.delete(call)) throw new YarnCallError(`socket hang up (simulated: the ${call} took effect, its answer was lost)`);
    return value;
  };
  return {
    rm: rmReader(cluster, () => enter('rm')),
    proxy: amrmProxy(cluster, () => enter('amrm'), answer),
    faults,
    loseNextAnswer: (call) => void lose.add(call),
  };
}

function clusterNode(n: SimNode): ClusterNode {
  return { id: n.nodeId, host: n.host, rack: n.rack, state: n.state, healthReport: n.healthReport, numContainers: n.containers.size, nodeHTTPAddress: n.httpAddress };
}

function rmReader(cluster: SimCluster, enter: () => void): ResourceManagerReader {
  const app = (appId: string): void => {
    if (appId !== cluster.applicationId) throw new YarnCallError(`app with id: ${appId} not found`, 404, false);
  };
  return {
    async clusterInfo(): Promise<ClusterInfo> {
      enter();
      return { id: String(cluster.clusterTimestamp), state: 'STARTED', haState: 'ACTIVE' };
    },
    async clusterMetrics(): Promise<ClusterMetrics> {
      enter();
      return countNodeStates(cluster.nodes);
    },
    async nodes(states?: readonly NodeState[]): Promise<ClusterNode[]> {
      enter();
      return cluster.nodes.filter((n) => !states || states.includes(n.state)).map(clusterNode);
    },
    async node(nodeId: string): Promise<ClusterNode | undefined> {
      enter();
      const n = cluster.nodeById(nodeId);
      return n ? clusterNode(n) : undefined;
    },
    async application(appId: string): Promise<ApplicationInfo> {
      enter();
      app(appId);
      // Flink registers the JobManager's REST port as the AM's RPC port; inProcessFlink answers for it.
      return { id: cluster.applicationId, state: 'RUNNING', currentAppAttemptId: cluster.currentAttempt.id, amRPCAddress: `${cluster.currentAttempt.amHost}:8081`, trackingUrl: `http://rm.sim.local:8088/proxy/${cluster.applicationId}/` };
    },
    async attempts(appId: string): Promise<AttemptSummary[]> {
      enter();
      app(appId);
      const current = cluster.currentAttempt;
      return cluster.attempts().map((a) => ({
        appAttemptId: a.id,
        containerId: a.amContainerId,
        nodeId: cluster.node(a.amHost)?.nodeId ?? '',
        startTime: a.startTime,
        state: a.state,
        blacklistedNodes: a === current ? cluster.schedulerBlacklistView() : [],
      }));
    },
    async containers(appId: string, attemptId: string): Promise<AppContainer[]> {
      enter();
      app(appId);
      if (attemptId !== cluster.currentAttempt.id) return [];
      return cluster.liveContainers().map((c) => container(cluster, c.id, c.host));
    },
  };
}

function amrmProxy(cluster: SimCluster, enter: () => void, answer: <T>(call: LosableCall, value: T) => T): AmrmProxy {
  return {
    async attempt(): Promise<AttemptInfo> {
      enter();
      return proxyAttempt(cluster);
    },
    async blacklist(): Promise<BlacklistView> {
      enter();
      return { blacklist: cluster.clientBlacklistView(), owners: cluster.ownersView() };
    },
    /** The HTTP face's conditional GET (amrm-routes.ts), by the same entity tag. */
    async blacklistSince(known: BlacklistVersion | undefined): Promise<BlacklistReading> {
      enter();
      const etag = cluster.blacklistEtag();
      if (known?.kind === 'etag' && known.etag === etag) return { unchanged: true };
      return { unchanged: false, view: { blacklist: cluster.clientBlacklistView(), owners: cluster.ownersView() }, version: { kind: 'etag', etag } };
    },
    async updateBlacklist(change: BlacklistChange, owner?: string): Promise<BlacklistWrite> {
      enter();
      const r = cluster.updateBlacklist(change.additions, change.removals, owner);
      if (!r.ok) throw new YarnCallError(r.error, 400, false);
      return answer('updateBlacklist', { etag: r.etag, previousEtag: r.previousEtag });
    },
    async containers(): Promise<AppContainer[]> {
      enter();
      return cluster.taskManagers().map((c) => container(cluster, c.id, c.host));
    },
    async release(ids: string[]): Promise<ReleaseResult> {
      enter();
      return answer('release', cluster.release(ids));
    },
    async completedContainers(after: number): Promise<CompletedContainersPage> {
      enter();
      const page = cluster.completedAfter(after);
      return { next: page.next, epoch: page.epoch, containers: page.containers.map((c) => ({ ...c, host: c.nodeId.split(':')[0] })) };
    },
  };
}

function container(cluster: SimCluster, id: string, host: string): AppContainer {
  const n = cluster.node(host);
  return { containerId: id, nodeId: n?.nodeId ?? host, host, nodeHttpAddress: n?.httpAddress ?? '', state: 'RUNNING' };
}

/**
 * The simulated JobManager through the engine's Flink port, without HTTP: every answer is the REST
 * body flink-routes.ts serves, parsed by the client's own parsers (src/flink/json.ts).
 */
export function inProcessFlink(flink: SimFlink, o: { canPost?: boolean; down?: () => boolean } = {}): FlinkJobManager {
  const answer = <T>(what: string, p: Parsed<T>): T => {
    if (o.down?.()) throw new FlinkCallError(`Flink JobManager GET ${what}: cannot reach the simulated JobManager (ECONNREFUSED)`);
    if (!p.ok) throw new FlinkCallError(`Flink sim: ${p.error}`);
    return p.value;
  };
  const jobOf = (jid: string): void => {
    if (jid !== flink.job.jid) throw new FlinkCallError(`Flink JobManager GET /jobs/${jid}: 404 Job ${jid} not found`, 404);
  };
  return {
    baseUrl: 'sim://flink',
    canPost: o.canPost ?? true,
    version: async () => parseFlinkVersion(flink.config()),
    taskManagers: async () => answer('/taskmanagers', parseTaskManagers(flink.taskManagersBody())),
    jobs: async () => answer('/jobs/overview', parseJobs(flink.overview())),
    job: async (jid) => (jobOf(jid), answer(`/jobs/${jid}`, parseJobDetail(flink.jobBody(), jid))),
    async checkpointConfig(jid) {
      jobOf(jid);
      const r = flink.checkpointConfigBody();
      return r.status === 404 ? {} : answer('checkpoints/config', parseCheckpointConfig(r.body));
    },
    latestCheckpoint: async (jid) => (jobOf(jid), answer('checkpoints', parseLatestCheckpoint(flink.checkpointsBody()))),
    restarts: async (jid) => (jobOf(jid), answer('metrics', parseRestarts(flink.restartsBody()))),
    async triggerCheckpoint(jid) {
      jobOf(jid);
      if (o.canPost === false) throw new FlinkCallError("the RM's web proxy passes no POST");
      if (flink.version === '1.16' || !flink.runtime) throw new FlinkCallError(`Flink JobManager POST /jobs/${jid}/checkpoints: 404 Not found`, 404);
      return answer('trigger', parseTriggerId({ 'request-id': flink.runtime.trigger() }));
    },
    async triggeredCheckpoint(jid, triggerId) {
      jobOf(jid);
      const body = flink.triggerBody(triggerId);
      if (body === undefined) throw new FlinkCallError(`Flink JobManager GET checkpoints/${triggerId}: 404 Operation not found`, 404);
      return answer('trigger status', parseTriggeredCheckpoint(body));
    },
    async vertexTaskManagers(jid, vertexId) {
      jobOf(jid);
      const body = flink.vertexTaskManagersBody(vertexId);
      if (body === undefined) throw new FlinkCallError(`Flink JobManager GET vertices/${vertexId}/taskmanagers: 404`, 404);
      return answer('vertex taskmanagers', parseVertexTaskManagers(body));
    },
  };
}
