/**
 * Read-only client of the real Hadoop ResourceManager REST API (ResourceManagerRest.md):
 * /ws/v1/cluster/info, /nodes, /apps/{appid}, /apps/{appid}/appattempts and
 * /apps/{appid}/appattempts/{attemptid}/containers. How each GET reaches an RM (HA list, standby
 * redirects, simple auth, Kerberos) is rm-transport.ts; here:
 *  - Errors come as {"RemoteException":{"exception","message","javaClassName"}}
 *    (WebServicesIntro.md, "Response Errors"); they become YarnCallError with that text.
 *  - Every body is validated (rm-json.ts) before use: a broken RM yields a YarnCallError, never a
 *    TypeError in the caller.
  */
import * as https from 'node:https';
import { parseApplicationId, parseAttemptId } from '../model/ids';
import { Clock, systemClock } from '../core/clock';
import { Logger, silentLogger } from '../core/logger';
import { RmAuthenticator } from './rm-auth';
import { excerpt } from './http-errors';
import { PeerFailure } from './peer-http';
import { RmShapeError, parseApplication, parseAttempts, parseClusterInfo, parseClusterMetrics, parseContainers, parseNode } from './rm-json';
import { OFF_THREAD_BYTES, releaseIdleWorker } from './off-thread';
import { caText, parseHere } from './rm-answer';
import { RmTransport, normaliseBaseUrl } from './rm-transport';
import { parseConfAnswer } from './rm-conf';
import {
  AppContainer,
  ApplicationInfo,
  AttemptSummary,
  ClusterInfo,
  ClusterMetrics,
  ClusterNode,
  NodeState,
  ResourceManagerReader,
  YarnCallError,
} from './types';

export interface RmClientOptions {
  /** RM web addresses in HA order: `host:port` or `http(s)://host:port`; a comma-separated string is split. */
  addresses: string | string[];
  /** Simple-auth user sent as `?user.name=`; empty or absent = none. */
  user?: string;
  /** Deadline of each HTTP request (one RM, one hop), connect to last byte, ms. */
  timeoutMs?: number;
  /** Times the deadlines (default: the system clock). */
  clock?: Clock;
  /**
   * Largest answer accepted from the RM's lists (the node list, an application's attempts, an
   * attempt's containers), bytes; default RM_MAX_LIST_BYTES. Its other answers are bounded by
   * RM_MAX_SMALL_BYTES.
   */
  maxListBytes?: number;
  /** Told of every call that got no complete answer, by kind (a metric). */
  onFailure?: (failure: PeerFailure) => void;
  /** 307 hops followed per call before giving up (a redirect loop between two standbys). */
  maxRedirects?: number;
  logger?: Logger;
  /** For https:// RMs: trusts the configured CA bundle (cluster.resource-blocklist.yarn.ssl.ca-file). */
  httpsAgent?: https.Agent;
  /** SPNEGO (Kerberos) for a secured RM; absent = no Authorization header. */
  auth?: RmAuthenticator;
  /**
   * The node list is fetched and parsed by a worker thread (default true). False: on the event
   * loop, as every other call (the bench's baseline; also a way out should the worker misbehave).
   */
  offThread?: boolean;
}

/**
 * The RM's lists at 10,000 nodes: a real Hadoop 3.5 RM writes ~1.8 KB of JSON per node (resource
 * informations of three kinds, utilisation, attributes): ~18 MB, with room for longer host names
 * and more resource types (docs/operations.md).
 */
export const RM_MAX_LIST_BYTES = 32 * 1024 * 1024;
/** /cluster/info, /cluster/metrics and one application: kilobytes (an application's diagnostics are capped by YARN at 64 K characters). */
export const RM_MAX_SMALL_BYTES = 4 * 1024 * 1024;
export const RM_MAX_LIST_KEY = 'cluster.resource-blocklist.yarn.max-answer-size';
export const REQUEST_TIMEOUT_KEY = 'cluster.resource-blocklist.yarn.request-timeout';

export { hostOf, normaliseBaseUrl } from './rm-transport';

export class ResourceManagerClient implements ResourceManagerReader {
  readonly addresses: string[];
  private readonly transport: RmTransport;
  private readonly offThread: boolean;
  /**
   * Whether the last node list was big enough for the worker (undefined: none read yet, so the
   * worker is tried). A small cluster's list (< OFF_THREAD_BYTES, ~700 nodes) is read here and
   * the worker, whose own heap costs the process tens of megabytes, is stopped.
   */
  private bigNodeList: boolean | undefined;
  /** Nodes the RM counted last (clusterMetrics): before any list is read, a small count keeps the first read here too. */
  private nodeCount: number | undefined;

  constructor(opts: RmClientOptions) {
    const list = (Array.isArray(opts.addresses) ? opts.addresses : opts.addresses.split(',')).map((s) => s.trim()).filter((s) => s !== '');
    if (list.length === 0) throw new YarnCallError('no RM web address configured (yarn.resourcemanager.webapp.address)', undefined, false);
    this.addresses = list.map(normaliseBaseUrl);
    this.offThread = opts.offThread ?? true;
    const timeoutMs = opts.timeoutMs ?? 10_000;
    this.transport = new RmTransport({
      addresses: this.addresses,
      user: opts.user ? opts.user : undefined,
      clock: opts.clock ?? systemClock,
      listLimits: { deadlineMs: timeoutMs, deadlineKey: REQUEST_TIMEOUT_KEY, maxBytes: opts.maxListBytes ?? RM_MAX_LIST_BYTES, maxBytesKey: RM_MAX_LIST_KEY },
      smallLimits: { deadlineMs: timeoutMs, deadlineKey: REQUEST_TIMEOUT_KEY, maxBytes: RM_MAX_SMALL_BYTES },
      onFailure: opts.onFailure,
      maxRedirects: opts.maxRedirects ?? 3,
      log: opts.logger ?? silentLogger,
      auth: opts.auth,
      httpsAgent: opts.httpsAgent,
      ca: caText(opts.httpsAgent),
    });
  }

  /** The RM base URL tried first on the next call. */
  get activeAddress(): string {
    return this.transport.activeAddress;
  }

  async clusterInfo(): Promise<ClusterInfo> {
    return this.shaped('cluster info', await this.transport.get('/ws/v1/cluster/info', 'small'), parseClusterInfo);
  }

  async clusterMetrics(): Promise<ClusterMetrics> {
    const m = this.shaped('cluster metrics', await this.transport.get('/ws/v1/cluster/metrics', 'small'), parseClusterMetrics);
    this.nodeCount = Math.max(m.totalNodes, m.activeNodes + m.decommissioningNodes + m.decommissionedNodes + m.lostNodes + m.unhealthyNodes + m.rebootedNodes + m.shutdownNodes);
    return m;
  }

  /**
   * Nodes, all of them or those in `states`. Without `states` the RM answers every state
   * (RMWebServices#getNodes uses EnumSet.allOf(NodeState)); naming states lets the RM filter,
   * which matters at 10,000 nodes — but only name states every supported RM knows, since an older
   * RM fails NodeState.valueOf on one it lacks.
   */
  async nodes(states?: readonly NodeState[]): Promise<ClusterNode[]> {
    const query = states && states.length ? `?states=${states.join(',')}` : '';
    return this.nodesAt(`/ws/v1/cluster/nodes${query}`);
  }

  /**
   * The node list is the RM's biggest answer (megabytes at 10,000 nodes): a worker thread makes
   * the request, receives and parses the body (off-thread.ts), so the event loop holds neither the
   * megabytes nor the 60-250 ms a JSON.parse of them takes on a busy machine. Which RM, the
   * redirects and the Kerberos header and checks stay here (getFrom), the same as for every call.
   */
  private async nodesAt(path: string): Promise<ClusterNode[]> {
    // About 350 bytes of JSON per node: below OFF_THREAD_BYTES the worker costs more than it saves.
    const expectBig = this.bigNodeList ?? (this.nodeCount === undefined || this.nodeCount * 350 >= OFF_THREAD_BYTES);
    const a = await this.transport.getAnswer(path, this.offThread && expectBig ? 'nodes' : 'list');
    const got = a.nodes ?? parseHere(a.text);
    const big = (a.bytes ?? Buffer.byteLength(a.text)) >= OFF_THREAD_BYTES;
    if (this.offThread && big !== this.bigNodeList) {
      this.bigNodeList = big;
      if (!big && a.bytes !== undefined) void releaseIdleWorker();
    }
    if (got.ok) return got.nodes;
    if (got.notJson) throw new YarnCallError(`RM GET ${path}: 200 but the body is not JSON: ${excerpt(got.error)}`, 200, true);
    return this.shaped('nodes', undefined, () => {
      throw new RmShapeError(got.error);
    });
  }

  /** One node (a kilobyte or two, against megabytes for the list at 10,000 nodes); undefined on the RM's 404. */
  async node(nodeId: string): Promise<ClusterNode | undefined> {
    if (!/^(\[[0-9A-Fa-f:.]+\]|[^\s/?#:[\]%]+):\d{1,5}$/.test(nodeId)) throw new YarnCallError(`'${nodeId}' is not a NodeId (host:port)`, undefined, false);
    let body: unknown;
    try {
      body = await this.transport.get(`/ws/v1/cluster/nodes/${nodeId}`, 'small');
    } catch (e) {
      if (e instanceof YarnCallError && e.status === 404) return undefined;
      throw e;
    }
    return this.shaped(`node ${nodeId}`, body, (b) => parseNode(typeof b === 'object' && b !== null ? (b as { node?: unknown }).node : undefined, 'node'));
  }

  async application(appId: string): Promise<ApplicationInfo> {
    this.checkApp(appId);
    const body = await this.transport.get(`/ws/v1/cluster/apps/${appId}`, 'small');
    return this.shaped(`application ${appId}`, body, (b) => parseApplication(b, appId));
  }

  async attempts(appId: string): Promise<AttemptSummary[]> {
    this.checkApp(appId);
    const body = await this.transport.get(`/ws/v1/cluster/apps/${appId}/appattempts`, 'list');
    return this.shaped(`attempts of ${appId}`, body, (b) => parseAttempts(b, appId));
  }

  async containers(appId: string, attemptId: string): Promise<AppContainer[]> {
    this.checkApp(appId);
    const a = parseAttemptId(attemptId);
    if (!a.ok) throw new YarnCallError(a.error, undefined, false);
    const app = parseApplicationId(appId);
    if (app.ok && (a.value.application.clusterTimestamp !== app.value.clusterTimestamp || a.value.application.id !== app.value.id)) {
      throw new YarnCallError(`attempt ${attemptId} does not belong to ${appId}`, undefined, false);
    }
    const body = await this.transport.get(`/ws/v1/cluster/apps/${appId}/appattempts/${attemptId}/containers`, 'list');
    return this.shaped(`containers of ${attemptId}`, body, parseContainers);
  }

  /**
   * One key of the RM's own configuration (its /conf servlet, rm-conf.ts); undefined when the RM
   * holds no value for it (404). Other failures (403 with instrumentation access for admins only,
   * an unreachable RM) throw.
   */
  async confValue(key: string): Promise<string | undefined> {
    const path = `/conf?name=${encodeURIComponent(key)}`;
    try {
      return parseConfAnswer((await this.transport.getAnswer(path, 'small')).text, key);
    } catch (e) {
      if (e instanceof YarnCallError && e.status === 404) return undefined;
      throw e;
    }
  }

  private checkApp(appId: string): void {
    const p = parseApplicationId(appId);
    if (!p.ok) throw new YarnCallError(p.error, undefined, false);
  }

  private shaped<T>(what: string, body: unknown, parse: (b: unknown) => T): T {
    try {
      return parse(body);
    } catch (e) {
      if (e instanceof RmShapeError) {
        throw new YarnCallError(`RM answered ${what} with an unusable body: ${e.message}`, 200, true);
      }
      throw e;
    }
  }
}
