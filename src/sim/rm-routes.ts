/**
 * The simulator's ResourceManager face: the read endpoints of Hadoop's ResourceManagerRest.md with
 * the JSON shapes real RMs send (see src/yarn/rm-json.ts for the variants).
 *
 * Attempt containers come in one of two shapes (`rmContainersShape`):
 *  - 'real' (default): what RMWebServices#getContainers gives on the RMs we have seen — unwrapped
 *    `{"container":[…]}`, every scalar a string, and a one-element list as a bare object (Jettison);
 *  - 'documented': the wrapper `{"containers":{"container":[…]}}` with numbers.
 */
import { FastifyInstance, FastifyReply } from 'fastify';
import { parseApplicationId, parseAttemptId } from '../model/ids';
import { NODE_STATES, NodeState } from '../yarn/types';
import { countNodeStates } from '../yarn/node-counts';
import { SimCluster } from './cluster';
import { SimAttempt, SimContainer, SimNode } from './cluster-types';

import { RmContainersShape } from './options';
export { RM_CONTAINERS_SHAPES } from './options';
export type { RmContainersShape } from './options';

export interface RmFaceSettings {
  rmContainersShape: RmContainersShape;
  /**
   * The simulator's own `host:port` once it listens: the Flink JobManager the app report names
   * (`amRPCAddress`, Flink's REST port) and the RM's web proxy of it (`trackingUrl`).
   */
  selfAddress?: string;
}

const TM_MB = 4096;
const TM_VCORES = 1;
const NODE_MB = 65536;
const NODE_VCORES = 32;

/** {"RemoteException":{…}} as the RM's GenericExceptionHandler writes it. */
export function sendRemoteException(reply: FastifyReply, status: number, exception: string, message: string, javaClassName: string): FastifyReply {
  return reply.code(status).send({ RemoteException: { exception, message, javaClassName } });
}

const notFound = (reply: FastifyReply, message: string): FastifyReply =>
  sendRemoteException(reply, 404, 'NotFoundException', `java.lang.Exception: ${message}`, 'org.apache.hadoop.yarn.webapp.NotFoundException');
const badRequest = (reply: FastifyReply, message: string): FastifyReply =>
  sendRemoteException(reply, 400, 'BadRequestException', `java.lang.Exception: ${message}`, 'org.apache.hadoop.yarn.webapp.BadRequestException');

function nodeJson(n: SimNode): Record<string, unknown> {
  const tms = n.containers.size;
  // RMWebServices#getNodes blanks the HTTP address of inactive nodes.
  const inactive = n.state === 'LOST' || n.state === 'DECOMMISSIONED' || n.state === 'REBOOTED' || n.state === 'SHUTDOWN';
  return {
    rack: n.rack,
    state: n.state,
    id: n.nodeId,
    nodeHostName: n.host,
    nodeHTTPAddress: inactive ? '' : n.httpAddress,
    lastHealthUpdate: n.lastHealthUpdate,
    version: '3.3.6',
    healthReport: n.healthReport,
    numContainers: tms,
    usedMemoryMB: tms * TM_MB,
    availMemoryMB: Math.max(0, NODE_MB - tms * TM_MB),
    usedVirtualCores: tms * TM_VCORES,
    availableVirtualCores: Math.max(0, NODE_VCORES - tms * TM_VCORES),
    numQueuedContainers: 0,
    decommissioningTimeout: n.state === 'DECOMMISSIONING' ? 3600 : undefined,
  };
}

function containerJson(cluster: SimCluster, c: SimContainer, asStrings: boolean): Record<string, unknown> {
  const n = cluster.node(c.host);
  const now = cluster.clock.now();
  const o: Record<string, unknown> = {
    containerId: c.id,
    allocatedMB: c.isAm ? 2048 : TM_MB,
    allocatedVCores: TM_VCORES,
    assignedNodeId: n?.nodeId ?? c.host,
    priority: c.isAm ? 0 : 1,
    startedTime: c.startedTime,
    finishedTime: 0,
    elapsedTime: Math.max(0, now - c.startedTime),
    diagnosticsInfo: '',
    logUrl: `http://${n?.httpAddress ?? c.host}/node/containerlogs/${c.id}/flink`,
    containerExitStatus: 0,
    containerState: 'RUNNING',
    nodeHttpAddress: `http://${n?.httpAddress ?? c.host}`,
  };
  if (asStrings) for (const k of Object.keys(o)) o[k] = String(o[k]);
  return o;
}

export function registerRmRoutes(app: FastifyInstance, cluster: SimCluster, settings: RmFaceSettings): void {
  registerClusterRoutes(app, cluster);
  registerNodeRoutes(app, cluster);
  registerAppRoutes(app, cluster, settings);
}

/** The cluster's info and metrics (the node counts the sidecar reads). */
function registerClusterRoutes(app: FastifyInstance, cluster: SimCluster): void {
  app.get('/ws/v1/cluster', async () => ({ clusterInfo: clusterInfo(cluster) }));
  app.get('/ws/v1/cluster/info', async () => ({ clusterInfo: clusterInfo(cluster) }));

  // ClusterMetricsInfo: the node counts the sidecar reads, beside a few of the app and container
  // counts a real RM sends in the same object (about 1 KB, whatever the cluster's size).
  app.get('/ws/v1/cluster/metrics', async () => ({
    clusterMetrics: {
      appsSubmitted: 1,
      appsCompleted: 0,
      appsPending: 0,
      appsRunning: 1,
      appsFailed: 0,
      appsKilled: 0,
      containersAllocated: cluster.taskManagerCount + 1,
      containersReserved: 0,
      containersPending: 0,
      ...countNodeStates(cluster.nodes),
    },
  }));

}

/** The node list (filtered by state, as RMWebServices does) and one node. */
function registerNodeRoutes(app: FastifyInstance, cluster: SimCluster): void {
  app.get<{ Querystring: { states?: string } }>('/ws/v1/cluster/nodes', async (req, reply) => {
    let accepted: Set<string> | undefined;
    if (req.query.states !== undefined) {
      accepted = new Set();
      for (const raw of req.query.states.split(',')) {
        const s = raw.trim().toUpperCase();
        // RMWebServices does NodeState.valueOf(...) and lets the IllegalArgumentException out.
        if (!(NODE_STATES as readonly string[]).includes(s)) {
          return badRequest(reply, `No enum constant org.apache.hadoop.yarn.api.records.NodeState.${s}`);
        }
        accepted.add(s as NodeState);
      }
    }
    const nodes = cluster.nodes.filter((n) => !accepted || accepted.has(n.state)).map((n) => nodeJson(n));
    // JAXB writes an empty NodesInfo as null.
    return { nodes: nodes.length === 0 ? null : { node: nodes } };
  });

  app.get<{ Params: { nodeId: string } }>('/ws/v1/cluster/nodes/:nodeId', async (req, reply) => {
    const n = cluster.nodeById(req.params.nodeId);
    if (!n) return notFound(reply, `nodeId, ${req.params.nodeId}, is not found`);
    return { node: nodeJson(n) };
  });

}

/** The application, its attempts and an attempt's containers. */
function registerAppRoutes(app: FastifyInstance, cluster: SimCluster, settings: RmFaceSettings): void {
  app.get<{ Params: { appId: string } }>('/ws/v1/cluster/apps/:appId', async (req, reply) => {
    const err = checkApp(cluster, req.params.appId, reply);
    if (err) return err;
    return { app: appJson(cluster, settings) };
  });

  app.get<{ Params: { appId: string } }>('/ws/v1/cluster/apps/:appId/appattempts', async (req, reply) => {
    const err = checkApp(cluster, req.params.appId, reply);
    if (err) return err;
    return { appAttempts: { appAttempt: cluster.attempts().map((a) => attemptJson(cluster, a)) } };
  });

  app.get<{ Params: { appId: string; attemptId: string } }>('/ws/v1/cluster/apps/:appId/appattempts/:attemptId/containers', async (req, reply) => {
    const err = checkApp(cluster, req.params.appId, reply);
    if (err) return err;
    const p = parseAttemptId(req.params.attemptId);
    if (!p.ok) return badRequest(reply, `Invalid AppAttemptId: ${req.params.attemptId}`);
    const attempt = cluster.attempts().find((a) => a.id === req.params.attemptId);
    if (!attempt) return notFound(reply, `appAttempt with id: ${req.params.attemptId} not found`);
    // Live containers belong to the current attempt (kept ones are transferred to it).
    const live = attempt === cluster.currentAttempt ? cluster.liveContainers() : [];
    if (settings.rmContainersShape === 'documented') {
      return { containers: { container: live.map((c) => containerJson(cluster, c, false)) } };
    }
    const items = live.map((c) => containerJson(cluster, c, true));
    return { container: items.length === 1 ? items[0] : items };
  });
}

/** One attempt as AppAttemptInfo writes it. */
function attemptJson(cluster: SimCluster, a: SimAttempt): Record<string, unknown> {
  const am = cluster.node(a.amHost);
  return {
    id: a.number,
    startTime: a.startTime,
    finishedTime: a.finishedTime,
    containerId: a.amContainerId,
    nodeHttpAddress: am?.httpAddress ?? '',
    nodeId: am?.nodeId ?? '',
    logsLink: `http://${am?.httpAddress ?? ''}/node/containerlogs/${a.amContainerId}/flink`,
    // AppAttemptInfo joins the scheduler attempt's blacklist with ", ".
    blacklistedNodes: a === cluster.currentAttempt ? cluster.schedulerBlacklistView().join(', ') : '',
    nodesBlacklistedBySystem: '',
    appAttemptId: a.id,
    appAttemptState: a.state,
  };
}

function checkApp(cluster: SimCluster, appId: string, reply: FastifyReply): FastifyReply | undefined {
  if (!parseApplicationId(appId).ok) return badRequest(reply, `Invalid ApplicationId: ${appId}`);
  if (appId !== cluster.applicationId) return notFound(reply, `app with id: ${appId} not found`);
  return undefined;
}

function clusterInfo(cluster: SimCluster): Record<string, unknown> {
  return {
    id: cluster.clusterTimestamp,
    startedOn: cluster.clusterTimestamp,
    state: 'STARTED',
    haState: 'ACTIVE',
    rmStateStoreName: 'org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore',
    resourceManagerVersion: '3.3.6',
    resourceManagerBuildVersion: '3.3.6 from flink-yarn-blocklist yarn-sim',
    resourceManagerVersionBuiltOn: '2023-06-18T08:22Z',
    hadoopVersion: '3.3.6',
    hadoopBuildVersion: '3.3.6 from flink-yarn-blocklist yarn-sim',
    hadoopVersionBuiltOn: '2023-06-18T08:22Z',
    haZooKeeperConnectionState: 'Could not find leader elector. Verify both HA and automatic failover are enabled.',
  };
}

function appJson(cluster: SimCluster, settings: RmFaceSettings): Record<string, unknown> {
  const a = cluster.currentAttempt;
  const am = cluster.node(a.amHost);
  const now = cluster.clock.now();
  const live = cluster.liveContainers().length;
  return {
    id: cluster.applicationId,
    user: 'flink',
    name: 'Flink session cluster',
    queue: 'default',
    state: 'RUNNING',
    finalStatus: 'UNDEFINED',
    progress: 100,
    trackingUI: 'ApplicationMaster',
    trackingUrl: `http://${settings.selfAddress ?? 'rm.sim.local:8088'}/proxy/${cluster.applicationId}/`,
    diagnostics: '',
    clusterId: cluster.clusterTimestamp,
    applicationType: 'Apache Flink',
    applicationTags: '',
    priority: 0,
    startedTime: cluster.startedOn,
    finishedTime: 0,
    elapsedTime: Math.max(0, now - cluster.startedOn),
    amContainerLogs: `http://${am?.httpAddress ?? ''}/node/containerlogs/${a.amContainerId}/flink`,
    amHostHttpAddress: am?.httpAddress ?? '',
    // Flink registers its AM with the JobManager's host and REST port (YarnResourceManagerDriver).
    amRPCAddress: settings.selfAddress ?? `${a.amHost}:0`,
    allocatedMB: cluster.taskManagerCount * TM_MB + 2048,
    allocatedVCores: live * TM_VCORES,
    runningContainers: live,
    memorySeconds: 0,
    vcoreSeconds: 0,
    unmanagedApplication: false,
    applicationPriority: 0,
    appNodeLabelExpression: '',
    amNodeLabelExpression: '',
    // No currentAppAttemptId: the RM's AppInfo has none (Hadoop 3.5.0, test/fixtures/rm/real/app.json);
    // the attempt comes from /appattempts.
  };
}
