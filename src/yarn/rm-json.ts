/**
 * Validating parsers for the ResourceManager REST API's JSON (Hadoop's ResourceManagerRest.md).
 * Pure functions: a body in, domain records out, or a RmShapeError saying what was wrong and where.
 * A broken or unexpected RM must never crash the sidecar with a TypeError deep in the sync engine.
 *
 * What real RMs send and the docs do not say (hence the tolerance here):
 *  - Jersey's JAXB/Jettison JSON writes a one-element list as a bare object and, on some versions and
 *    endpoints, every scalar as a string ("numContainers":"3"). We accept both.
 *  - An empty collection is written as null: `{"nodes":null}`, `{"appAttempts":null}`.
 *  - The attempt-containers endpoint (RMWebServices#getContainers → server-common ContainersInfo,
 *    @XmlRootElement "containers", one field `container`) arrives either unwrapped,
 *    `{"container":[…]}`, or in the documented wrapper `{"containers":{"container":[…]}}`.
 *  - Older RMs' appAttempt has only the numeric `id`; newer ones add `appAttemptId`, `appAttemptState`
 *    and `blacklistedNodes` (a ", "-joined string; RM AppAttemptInfo).
 */
import {
  formatAttemptId,
  parseApplicationId,
  parseAttemptId,
  parseContainerId,
  validateHostName,
} from '../model/ids';
import { AppContainer, ApplicationInfo, AttemptSummary, ClusterInfo, ClusterMetrics, ClusterNode, NODE_STATES, NodeState } from './types';

/** The RM answered 200 with a body we cannot use. */
export class RmShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RmShapeError';
  }
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, where: string): Json {
  if (!isObject(v)) throw new RmShapeError(`${where}: expected a JSON object, got ${describe(v)}`);
  return v;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`;
  return typeof v;
}

/** A string field; numbers are accepted and written back in decimal (Jettison may send either). */
function optStr(o: Json, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  throw new RmShapeError(`${where}.${key}: expected a string, got ${describe(v)}`);
}

function reqStr(o: Json, key: string, where: string): string {
  const v = optStr(o, key, where);
  if (v === undefined || v === '') throw new RmShapeError(`${where}.${key} is missing`);
  return v;
}

/** A numeric field; decimal strings are accepted (the string-valued real-RM variant). */
function optNum(o: Json, key: string, where: string): number | undefined {
  const v = o[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v.trim());
  throw new RmShapeError(`${where}.${key}: expected a number, got ${describe(v)}`);
}

/** A JAXB collection: an array, a single bare object, or null/absent for "none". */
function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v;
  if (isObject(v)) return [v];
  throw new RmShapeError(`${where}: expected a list of objects, got ${describe(v)}`);
}

/** Host part of a NodeId (host:port); a NodeId without a port is taken as a host. */
export function hostOfNodeId(nodeId: string): string {
  const m = /^(.*):(\d+)$/.exec(nodeId);
  return m ? m[1] : nodeId;
}

function host(raw: string, where: string): string {
  const h = validateHostName(raw);
  if (!h.ok) throw new RmShapeError(`${where}: ${h.error}`);
  return h.value;
}

/** GET /ws/v1/cluster/info → {"clusterInfo":{id, state, haState, resourceManagerVersion, …}}. */
export function parseClusterInfo(body: unknown): ClusterInfo {
  const o = obj(obj(body, 'cluster info').clusterInfo, 'clusterInfo');
  const info: ClusterInfo = { state: reqStr(o, 'state', 'clusterInfo') };
  const id = optStr(o, 'id', 'clusterInfo');
  if (id !== undefined) info.id = id;
  const ha = optStr(o, 'haState', 'clusterInfo');
  if (ha !== undefined) info.haState = ha;
  const v = optStr(o, 'resourceManagerVersion', 'clusterInfo');
  if (v !== undefined) info.resourceManagerVersion = v;
  return info;
}

/**
 * GET /ws/v1/cluster/nodes → {"nodes":{"node":[{rack, state, id, nodeHostName, nodeHTTPAddress,
 * healthReport, numContainers, …}]}}; `{"nodes":null}` when the RM knows no node.
 */
/** The counts of ClusterMetricsInfo the sidecar uses; each a number or a numeric string (real RMs send both). */
const METRIC_FIELDS = ['activeNodes', 'decommissioningNodes', 'decommissionedNodes', 'lostNodes', 'unhealthyNodes', 'rebootedNodes', 'shutdownNodes', 'totalNodes'] as const;

/** GET /ws/v1/cluster/metrics → {"clusterMetrics":{activeNodes, …}}. A count an older RM lacks reads as 0. */
export function parseClusterMetrics(body: unknown): ClusterMetrics {
  const o = obj(obj(body, 'cluster metrics').clusterMetrics, 'clusterMetrics');
  if (optNum(o, 'activeNodes', 'clusterMetrics') === undefined) throw new RmShapeError('clusterMetrics: no "activeNodes" count');
  const out = {} as ClusterMetrics;
  for (const k of METRIC_FIELDS) {
    const v = optNum(o, k, 'clusterMetrics') ?? 0;
    if (!Number.isInteger(v) || v < 0) throw new RmShapeError(`clusterMetrics.${k} is not a count: ${v}`);
    out[k] = v;
  }
  return out;
}

export function parseNodes(body: unknown): ClusterNode[] {
  const root = obj(body, 'nodes list');
  if (!('nodes' in root)) throw new RmShapeError('nodes list: no "nodes" field');
  if (root.nodes === null) return [];
  const items = list(obj(root.nodes, 'nodes').node, 'nodes.node');
  return items.map((raw, i) => parseNode(raw, `nodes.node[${i}]`));
}

export function parseNode(raw: unknown, where = 'node'): ClusterNode {
  const o = obj(raw, where);
  const id = reqStr(o, 'id', where);
  const nodeHostName = optStr(o, 'nodeHostName', where) ?? hostOfNodeId(id);
  const state = reqStr(o, 'state', where).toUpperCase();
  if (!(NODE_STATES as readonly string[]).includes(state)) {
    throw new RmShapeError(`${where}.state '${state}' is not a YARN NodeState (${NODE_STATES.join(', ')})`);
  }
  const node: ClusterNode = {
    id,
    host: host(nodeHostName, `${where}.nodeHostName`),
    rack: optStr(o, 'rack', where) ?? '',
    state: state as NodeState,
    healthReport: optStr(o, 'healthReport', where) ?? '',
    numContainers: optNum(o, 'numContainers', where) ?? 0,
  };
  const http = optStr(o, 'nodeHTTPAddress', where);
  if (http) node.nodeHTTPAddress = http;
  return node;
}

/** GET /ws/v1/cluster/apps/{appid} → {"app":{id, state, name, user, queue, …}}. */
export function parseApplication(body: unknown, expectedId: string): ApplicationInfo {
  const o = obj(obj(body, 'application').app, 'app');
  const id = reqStr(o, 'id', 'app');
  if (id !== expectedId) throw new RmShapeError(`app.id '${id}' is not the application asked for ('${expectedId}')`);
  const app: ApplicationInfo = { id, state: reqStr(o, 'state', 'app') };
  for (const k of ['name', 'user', 'queue', 'trackingUrl', 'amRPCAddress'] as const) {
    const v = optStr(o, k, 'app');
    if (v !== undefined && v !== '') app[k] = v;
  }
  // Only links are made of it: anything but a non-empty string is left out, not a broken answer.
  if (typeof o.trackingUrl === 'string' && o.trackingUrl !== '') app.trackingUrl = o.trackingUrl;
  const current = optStr(o, 'currentAppAttemptId', 'app');
  if (current) {
    if (!parseAttemptId(current).ok) throw new RmShapeError(`app.currentAppAttemptId '${current}' is not a YARN attempt id`);
    app.currentAppAttemptId = current;
  }
  return app;
}

/**
 * GET /ws/v1/cluster/apps/{appid}/appattempts → {"appAttempts":{"appAttempt":[{id, appAttemptId?,
 * containerId, nodeId, startTime, appAttemptState?, blacklistedNodes?, …}]}}. Sorted by attempt number,
 * so the last element is the current attempt.
 */
export function parseAttempts(body: unknown, appId: string): AttemptSummary[] {
  const app = parseApplicationId(appId);
  if (!app.ok) throw new RmShapeError(app.error);
  const root = obj(body, 'attempts list');
  if (root.appAttempts === null || root.appAttempts === undefined) return [];
  const items = list(obj(root.appAttempts, 'appAttempts').appAttempt, 'appAttempts.appAttempt');
  const out = items.map((raw, i): { n: number; a: AttemptSummary } => {
    const where = `appAttempts.appAttempt[${i}]`;
    const o = obj(raw, where);
    let attemptId = optStr(o, 'appAttemptId', where);
    let n: number;
    if (attemptId) {
      const p = parseAttemptId(attemptId);
      if (!p.ok) throw new RmShapeError(`${where}.appAttemptId: ${p.error}`);
      if (p.value.application.clusterTimestamp !== app.value.clusterTimestamp || p.value.application.id !== app.value.id) {
        throw new RmShapeError(`${where}.appAttemptId '${attemptId}' does not belong to ${appId}`);
      }
      n = p.value.attempt;
    } else {
      // Older RMs: only the attempt number (AppAttemptInfo.id); the id string is derived from it.
      const num = optNum(o, 'id', where);
      if (num === undefined || !Number.isInteger(num) || num < 1) throw new RmShapeError(`${where} has neither appAttemptId nor a numeric id`);
      n = num;
      attemptId = formatAttemptId({ application: app.value, attempt: n });
    }
    const a: AttemptSummary = { appAttemptId: attemptId };
    const cid = optStr(o, 'containerId', where);
    if (cid) {
      const p = parseContainerId(cid);
      if (!p.ok) throw new RmShapeError(`${where}.containerId: ${p.error}`);
      a.containerId = cid;
    }
    const nodeId = optStr(o, 'nodeId', where);
    if (nodeId) a.nodeId = nodeId;
    const start = optNum(o, 'startTime', where);
    if (start !== undefined) a.startTime = start;
    const state = optStr(o, 'appAttemptState', where);
    if (state) a.state = state;
    const bl = optStr(o, 'blacklistedNodes', where);
    if (bl !== undefined) a.blacklistedNodes = bl.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    return { n, a };
  });
  return out.sort((x, y) => x.n - y.n).map((x) => x.a);
}

/**
 * GET /ws/v1/cluster/apps/{appid}/appattempts/{attemptid}/containers: the live containers of the
 * attempt, each {containerId, assignedNodeId|nodeId, nodeHttpAddress?, containerState, …} with values
 * possibly strings. See the file comment for the three accepted envelopes.
 */
export function parseContainers(body: unknown): AppContainer[] {
  const root = obj(body, 'containers list');
  let items: unknown[];
  if ('containers' in root) {
    const wrapper = root.containers;
    items = wrapper === null || wrapper === '' ? [] : list(obj(wrapper, 'containers').container, 'containers.container');
  } else if ('container' in root) {
    items = list(root.container, 'container');
  } else if (Object.keys(root).length === 0) {
    items = []; // an empty ContainersInfo serialises as {} on some Jersey versions
  } else {
    throw new RmShapeError(`containers list: neither "containers" nor "container" in ${Object.keys(root).slice(0, 5).join(', ')}`);
  }
  return items.map((raw, i) => parseContainer(raw, `container[${i}]`));
}

export function parseContainer(raw: unknown, where = 'container'): AppContainer {
  const o = obj(raw, where);
  const containerId = reqStr(o, 'containerId', where);
  const p = parseContainerId(containerId);
  if (!p.ok) throw new RmShapeError(`${where}.containerId: ${p.error}`);
  const nodeId = optStr(o, 'assignedNodeId', where) || optStr(o, 'nodeId', where);
  if (!nodeId) throw new RmShapeError(`${where} (${containerId}) has no assignedNodeId or nodeId`);
  const c: AppContainer = {
    containerId,
    nodeId,
    host: host(hostOfNodeId(nodeId), `${where}.assignedNodeId`),
    state: (optStr(o, 'containerState', where) ?? optStr(o, 'state', where) ?? 'UNKNOWN').toUpperCase(),
  };
  const http = optStr(o, 'nodeHttpAddress', where);
  if (http) c.nodeHttpAddress = http;
  return c;
}
