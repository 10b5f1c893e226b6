/**
 * The YARN simulator as a real HTTP server on 127.0.0.1: one port serving the RM REST face
 * (/ws/v1/cluster/…), the AMRM proxy face (/amrm/v1/…) and the control API (/sim/v1/…).
 *
 * In-process use (tests, benchmarks):
 *   const sim = await startSimulator({ port: 0, nodes: 50, containers: 100, seed: 7, tickMs: 0 });
 *   new ResourceManagerClient({ addresses: sim.url }); new AmrmProxyClient({ address: sim.url });
 *   sim.cluster.allocate();  // one allocation round now, no sleeping
 *   await sim.close();
 */
import Fastify, { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AddressInfo } from 'node:net';
import { Clock } from '../core/clock';
import { Logger, silentLogger } from '../core/logger';
import { registerAmrmRoutes, sendErrors } from './amrm-routes';
import { SimCluster } from './cluster';
import { ClusterOptions } from './cluster-types';
import { registerControlRoutes } from './control-routes';
import { Face, FaultInjector } from './faults';
import { RmContainersShape, RmFaceSettings, registerRmRoutes, sendRemoteException } from './rm-routes';
import { FlinkVersion, SimFlink } from './flink-jobs';
import { registerFlinkRoutes } from './flink-routes';
import { FlinkRuntimeOptions, SimFlinkRuntime } from './flink-runtime';

export interface SimulatorOptions extends Partial<Omit<ClusterOptions, 'clock'>> {
  /** 0 = any free port. */
  port?: number;
  /** Bind address; loopback by default (services listen on 127.0.0.1 only). */
  host?: string;
  /** Allocation tick (an AM heartbeat), ms; 0 = only on POST /sim/v1/allocate or cluster.allocate(). */
  tickMs?: number;
  rmContainersShape?: RmContainersShape;
  /** The shape the Flink JobManager face answers in (default 1.18). */
  flinkVersion?: FlinkVersion;
  /** The simulated Flink's slots, failovers and checkpoints (flink-runtime.ts); false: none (the detector's face only). */
  flinkRuntime?: FlinkRuntimeOptions | false;
  clock?: Clock;
  logger?: Logger;
}

export interface RunningSimulator {
  /** Base URL of everything: http://127.0.0.1:<port>. */
  url: string;
  /** Same server; named for the face (RM addresses take it as is). */
  rmUrl: string;
  /** Same server; the proxy's paths start with /amrm/v1. */
  amrmUrl: string;
  port: number;
  /** Direct access to the simulated cluster (state, counters, allocate(), setNodeState(), …). */
  cluster: SimCluster;
  /** The simulated Flink JobManager (its REST face is on the same port: /jobs/…, /config). */
  flink: SimFlink;
  faults: FaultInjector;
  settings: RmFaceSettings;
  setTick(ms: number): void;
  close(): Promise<void>;
}

import { DEFAULT_TICK_MS } from './options';
export { DEFAULT_TICK_MS };

function faceOf(url: string): Face | undefined {
  if (url.startsWith('/ws/')) return 'rm';
  if (url.startsWith('/amrm/')) return 'amrm';
  return undefined;
}

function sendFaceError(face: Face | undefined, reply: FastifyReply, status: number, message: string): FastifyReply {
  if (face === 'rm') {
    const exception = status === 404 ? 'NotFoundException' : status === 400 ? 'BadRequestException' : 'WebApplicationException';
    const pkg = status === 404 || status === 400 ? 'org.apache.hadoop.yarn.webapp.' : 'javax.ws.rs.';
    return sendRemoteException(reply, status, exception, message, pkg + exception);
  }
  return sendErrors(reply, status, message);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The RM's web proxy of the application's tracking URL (Hadoop's WebAppProxyServlet), in front of
 * the Flink face: GET passes through, POST is refused as the servlet does (it has no doPost).
 */
function registerWebProxy(app: FastifyInstance, applicationId: string): void {
  const prefix = `/proxy/${applicationId}`;
  app.get(`${prefix}/*`, async (req, reply) => {
    const res = await app.inject({ method: 'GET', url: req.url.slice(prefix.length) || '/' });
    return reply.code(res.statusCode).header('content-type', res.headers['content-type'] ?? 'application/json').send(res.body);
  });
  app.post(`${prefix}/*`, async (_req, reply) => reply.code(405).header('content-type', 'text/html').send('<html><body><h2>HTTP ERROR 405 HTTP method POST is not supported by this URL</h2></body></html>'));
}

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const log = opts.logger ?? silentLogger;
  const cluster = simulatedCluster(opts);
  const faults = new FaultInjector(opts.seed ?? 1);
  const settings: RmFaceSettings = { rmContainersShape: opts.rmContainersShape ?? 'real' };
  let tickMs = opts.tickMs ?? DEFAULT_TICK_MS;
  const tick = {
    get: () => tickMs,
    set: (ms: number) => {
      tickMs = ms;
      cluster.startTicking(ms);
    },
  };
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 32 * 1024 * 1024, forceCloseConnections: true });
  // Bodiless POSTs (curl -X POST, axios.post(url)) arrive with a form or no content type; the control
  // calls take none, and a non-JSON body to the proxy is refused by its own validation with a 400.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    done(null, body === '' ? undefined : body);
  });
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => countAndFault(req, reply, cluster, faults));
  answerErrorsAsTheFaces(app, log);
  registerRmRoutes(app, cluster, settings);
  registerAmrmRoutes(app, cluster);
  const flink = new SimFlink(cluster, cluster.clock, opts.flinkVersion ?? '1.18');
  if (opts.flinkRuntime !== false) flink.runtime = new SimFlinkRuntime(cluster, opts.flinkRuntime ?? {});
  registerFlinkRoutes(app, flink);
  registerWebProxy(app, cluster.applicationId);
  registerControlRoutes(app, { cluster, faults, settings, tick });

  await app.listen({ port: opts.port ?? 0, host: opts.host ?? '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const hostPart = (opts.host ?? '127.0.0.1').includes(':') ? `[${opts.host}]` : (opts.host ?? '127.0.0.1');
  const url = `http://${hostPart}:${port}`;
  settings.selfAddress = `${hostPart}:${port}`;
  cluster.startTicking(tickMs);
  log.info('YARN simulator listening', { url, nodes: cluster.nodes.length, containers: cluster.target, app: cluster.applicationId });
  let closed = false;
  return {
    url,
    rmUrl: url,
    amrmUrl: url,
    port,
    cluster,
    flink,
    faults,
    settings,
    setTick: tick.set,
    async close() {
      if (closed) return;
      closed = true;
      cluster.stopTick();
      await app.close();
    },
  };
}

/** An unknown path or a failed request answered as the face it was meant for answers (RemoteException for the RM, Flink's errors otherwise). */
function answerErrorsAsTheFaces(app: FastifyInstance, log: Logger): void {
  app.setNotFoundHandler((req, reply) => {
    const face = faceOf(req.url);
    void sendFaceError(face, reply, 404, `no such resource: ${req.method} ${req.url.split('?')[0]}`);
  });
  app.setErrorHandler((err: { statusCode?: number; message: string }, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) log.error('simulator request failed', { url: req.url, error: err.message });
    void sendFaceError(faceOf(req.url), reply, status, err.message);
  });
}

function simulatedCluster(opts: SimulatorOptions): SimCluster {
  return new SimCluster({
    nodes: opts.nodes ?? 20,
    containers: opts.containers ?? 40,
    ...(opts.racks !== undefined ? { racks: opts.racks } : {}),
    seed: opts.seed ?? 1,
    ...(opts.slotsPerNode !== undefined ? { slotsPerNode: opts.slotsPerNode } : {}),
    ...(opts.clusterTimestamp !== undefined ? { clusterTimestamp: opts.clusterTimestamp } : {}),
    ...(opts.appNumber !== undefined ? { appNumber: opts.appNumber } : {}),
    ...(opts.epoch !== undefined ? { epoch: opts.epoch } : {}),
    ...(opts.newAttemptBlacklist !== undefined ? { newAttemptBlacklist: opts.newAttemptBlacklist } : {}),
    ...(opts.keepContainersAcrossAttempts !== undefined ? { keepContainersAcrossAttempts: opts.keepContainersAcrossAttempts } : {}),
    ...(opts.clock !== undefined ? { clock: opts.clock } : {}),
  });
}

/** Every RM and AMRM request: counted (by path, for the RM), then delayed, failed or cut off as the injected faults say. */
async function countAndFault(req: FastifyRequest, reply: FastifyReply, cluster: SimCluster, faults: FaultInjector): Promise<FastifyReply | undefined> {
  const face = faceOf(req.url);
  if (!face) return undefined;
  if (face === 'rm') {
    cluster.counters.rmRequests++;
    const query = req.query as Record<string, unknown> | undefined;
    const states = query?.states;
    const p = req.url.split('?')[0] + (typeof states === 'string' ? `?states=${states}` : '');
    cluster.counters.rmRequestsByPath[p] = (cluster.counters.rmRequestsByPath[p] ?? 0) + 1;
    const user = query?.['user.name'];
    if (typeof user === 'string') cluster.counters.rmLastUser = user;
  } else {
    cluster.counters.amrmRequests++;
  }
  const latency = faults.latency(face);
  if (latency > 0) await sleep(latency);
  const d = faults.decide(face);
  if (d.kind === 'pass') return undefined;
  cluster.counters.faultsInjected[face]++;
  if (d.kind === 'reset') {
    reply.hijack();
    req.raw.socket.destroy();
    return reply;
  }
  return sendFaceError(face, reply, d.status, d.status === 503 ? 'simulated outage' : 'simulated failure');
}
