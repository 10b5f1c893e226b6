/**
 * The simulator's control API (/sim/v1/…), for tests and demos: change nodes, kill containers, fail
 * over the AM, run an allocation round now, inject and stop faults, read and reset counters.
 * Never faulted. Documented in docs/yarn-simulator.md.
 */
import { FastifyInstance } from 'fastify';
import { NODE_STATES, NodeState } from '../yarn/types';
import { NEW_ATTEMPT_BLACKLIST_MODES, NewAttemptBlacklist, SimCluster } from './cluster';
import { ownerError } from './am-blacklist';
import { FACES, Face, FaultInjector, FaultSpec } from './faults';
import { sendErrors } from './amrm-routes';
import { RM_CONTAINERS_SHAPES, RmContainersShape, RmFaceSettings } from './rm-routes';

export interface ControlContext {
  cluster: SimCluster;
  faults: FaultInjector;
  settings: RmFaceSettings;
  /** Current tick interval (ms, 0 = no automatic ticks) and a way to change it. */
  tick: { get(): number; set(ms: number): void };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function registerControlRoutes(app: FastifyInstance, ctx: ControlContext): void {
  registerClusterRoutes(app, ctx);
  registerNodeRoutes(app, ctx);
  registerJobRoutes(app, ctx);
  registerOptionRoutes(app, ctx);
  registerFaultRoutes(app, ctx);
}

/** The cluster as a whole: its state, an RM restart, the counters. */
function registerClusterRoutes(app: FastifyInstance, ctx: ControlContext): void {
  const { cluster } = ctx;
  app.get('/sim/v1/state', async () => simState(ctx));

  // A work-preserving RM restart: new containers are numbered from 1 again under the next epoch.
  app.post('/sim/v1/rm/restart', async () => cluster.rmRestart());

  app.get('/sim/v1/counters', async () => cluster.counters);

  app.post('/sim/v1/counters/reset', async () => {
    cluster.resetCounters();
    return cluster.counters;
  });
}

/** One node or container: read a node, change its state, kill a container. */
function registerNodeRoutes(app: FastifyInstance, ctx: ControlContext): void {
  const { cluster } = ctx;
  app.get<{ Params: { host: string } }>('/sim/v1/nodes/:host', async (req, reply) => {
    const n = cluster.node(req.params.host);
    if (!n) return sendErrors(reply, 404, `no node ${req.params.host}`);
    return { host: n.host, nodeId: n.nodeId, rack: n.rack, state: n.state, healthReport: n.healthReport, containers: [...n.containers], blacklisted: cluster.isPlaceBlacklisted(n) };
  });

  app.put<{ Params: { host: string }; Body: unknown }>('/sim/v1/nodes/:host/state', async (req, reply) => {
    const b = req.body;
    const state = isObj(b) && typeof b.state === 'string' ? b.state.toUpperCase() : undefined;
    if (!state || !(NODE_STATES as readonly string[]).includes(state)) {
      return sendErrors(reply, 400, `body must be {"state": one of ${NODE_STATES.join(', ')}, "healthReport"?: string}`);
    }
    if (!cluster.node(req.params.host)) return sendErrors(reply, 404, `no node ${req.params.host}`);
    const healthReport = isObj(b) && typeof b.healthReport === 'string' ? b.healthReport : undefined;
    const before = cluster.counters.containersLost;
    const n = cluster.setNodeState(req.params.host, state as NodeState, healthReport);
    return { host: n.host, state: n.state, containersLost: cluster.counters.containersLost - before };
  });

  app.post<{ Params: { id: string }; Body: unknown }>('/sim/v1/containers/:id/kill', async (req, reply) => {
    const b = isObj(req.body) ? req.body : {};
    if (b.exitStatus !== undefined && (typeof b.exitStatus !== 'number' || !Number.isInteger(b.exitStatus))) {
      return sendErrors(reply, 400, '"exitStatus" must be an integer (a process exit code or a Hadoop ContainerExitStatus)');
    }
    if (b.diagnostics !== undefined && typeof b.diagnostics !== 'string') return sendErrors(reply, 400, '"diagnostics" must be a string');
    if (!cluster.killContainer(req.params.id, b.exitStatus as number | undefined, b.diagnostics as string | undefined)) {
      return sendErrors(reply, 404, `no live container ${req.params.id}`);
    }
    return { killed: req.params.id };
  });
}

/** The job on the cluster: another owner's blacklist, a new AM attempt, an allocation round, the containers it wants. */
function registerJobRoutes(app: FastifyInstance, ctx: ControlContext): void {
  const { cluster } = ctx;
  // Another owner of the AM's blacklist (e.g. Flink's own blocklist, owner "am"): replaces its set.
  app.put<{ Params: { owner: string }; Body: unknown }>('/sim/v1/blacklist/owners/:owner', async (req, reply) => {
    const bad = ownerError(req.params.owner);
    if (bad !== undefined) return sendErrors(reply, 400, bad);
    const b = req.body;
    if (!isObj(b) || !Array.isArray(b.hosts) || !b.hosts.every((h) => typeof h === 'string' && h !== '')) {
      return sendErrors(reply, 400, 'body must be {"hosts": [non-empty host names]}');
    }
    const r = cluster.setOwnerBlacklist(req.params.owner, b.hosts as string[]);
    if (!r.ok) return sendErrors(reply, 400, r.error);
    return { blacklist: r.blacklist, owners: r.owners };
  });

  app.post<{ Body: unknown }>('/sim/v1/attempts', async (req, reply) => {
    const b = isObj(req.body) ? req.body : {};
    const mode = b.blacklist;
    if (mode !== undefined && !(NEW_ATTEMPT_BLACKLIST_MODES as readonly unknown[]).includes(mode)) {
      return sendErrors(reply, 400, `"blacklist" must be one of ${NEW_ATTEMPT_BLACKLIST_MODES.join(', ')}`);
    }
    const a = cluster.newAttempt(mode as NewAttemptBlacklist | undefined);
    return { appAttemptId: a.id, amContainerId: a.amContainerId, amHost: a.amHost };
  });

  app.post('/sim/v1/allocate', async () => {
    const r = cluster.allocate();
    return { placed: r.placed, pending: r.pending, runningContainers: cluster.taskManagerCount };
  });

  app.put<{ Body: unknown }>('/sim/v1/app', async (req, reply) => {
    const b = req.body;
    if (!isObj(b) || typeof b.containers !== 'number' || !Number.isInteger(b.containers) || b.containers < 0) {
      return sendErrors(reply, 400, 'body must be {"containers": non-negative integer}');
    }
    cluster.setTarget(b.containers);
    return { targetContainers: cluster.target, runningContainers: cluster.taskManagerCount };
  });
}

/** How the simulated cluster behaves: new attempts, the RM's container shape, tick interval. */
function registerOptionRoutes(app: FastifyInstance, ctx: ControlContext): void {
  const { cluster } = ctx;
  app.put<{ Body: unknown }>('/sim/v1/options', async (req, reply) => {
    const b = req.body;
    if (!isObj(b)) return sendErrors(reply, 400, 'body must be an object');
    if (b.newAttemptBlacklist !== undefined && !(NEW_ATTEMPT_BLACKLIST_MODES as readonly unknown[]).includes(b.newAttemptBlacklist)) {
      return sendErrors(reply, 400, `"newAttemptBlacklist" must be one of ${NEW_ATTEMPT_BLACKLIST_MODES.join(', ')}`);
    }
    if (b.rmContainersShape !== undefined && !(RM_CONTAINERS_SHAPES as readonly unknown[]).includes(b.rmContainersShape)) {
      return sendErrors(reply, 400, `"rmContainersShape" must be one of ${RM_CONTAINERS_SHAPES.join(', ')}`);
    }
    if (b.keepContainersAcrossAttempts !== undefined && typeof b.keepContainersAcrossAttempts !== 'boolean') {
      return sendErrors(reply, 400, '"keepContainersAcrossAttempts" must be a boolean');
    }
    if (b.tickMs !== undefined && (typeof b.tickMs !== 'number' || !(b.tickMs >= 0))) {
      return sendErrors(reply, 400, '"tickMs" must be a number ≥ 0 (0 = no automatic allocation)');
    }
    if (b.newAttemptBlacklist !== undefined) cluster.newAttemptBlacklist = b.newAttemptBlacklist as NewAttemptBlacklist;
    if (b.rmContainersShape !== undefined) ctx.settings.rmContainersShape = b.rmContainersShape as RmContainersShape;
    if (b.keepContainersAcrossAttempts !== undefined) cluster.keepContainersAcrossAttempts = b.keepContainersAcrossAttempts as boolean;
    if (b.tickMs !== undefined) ctx.tick.set(b.tickMs as number);
    return { newAttemptBlacklist: cluster.newAttemptBlacklist, rmContainersShape: ctx.settings.rmContainersShape, keepContainersAcrossAttempts: cluster.keepContainersAcrossAttempts, tickMs: ctx.tick.get() };
  });
}

/** Faults injected into the RM and AMRM faces, and stopped. */
function registerFaultRoutes(app: FastifyInstance, ctx: ControlContext): void {
  const { faults } = ctx;
  app.get('/sim/v1/faults', async () => faults.all());

  app.put<{ Params: { face: string }; Body: unknown }>('/sim/v1/faults/:face', async (req, reply) => {
    const face = req.params.face as Face;
    if (!FACES.includes(face)) return sendErrors(reply, 404, `no face ${req.params.face} (rm, amrm)`);
    if (!isObj(req.body)) return sendErrors(reply, 400, 'body must be {"latencyMs"?, "errorRate"?, "outage"?: "unavailable"|"reset"|null}');
    try {
      return { [face]: faults.set(face, req.body as FaultSpec) };
    } catch (e) {
      return sendErrors(reply, 400, (e as Error).message);
    }
  });

  app.delete<{ Params: { face: string } }>('/sim/v1/faults/:face', async (req, reply) => {
    const face = req.params.face as Face;
    if (!FACES.includes(face)) return sendErrors(reply, 404, `no face ${req.params.face} (rm, amrm)`);
    faults.clear(face);
    return faults.all();
  });

  app.delete('/sim/v1/faults', async () => {
    faults.clear();
    return faults.all();
  });
}

/** GET /sim/v1/state: the cluster, the job, the blacklists and the options at a glance. */
function simState(ctx: ControlContext): Record<string, unknown> {
  const { cluster, faults } = ctx;
  return {
    applicationId: cluster.applicationId,
    appAttemptId: cluster.currentAttempt.id,
    attempts: cluster.attempts().length,
    nodes: cluster.nodes.length,
    nodeStates: cluster.nodeStateCounts(),
    racks: new Set(cluster.nodes.map((n) => n.rack)).size,
    slotsPerNode: cluster.slotsPerNode,
    targetContainers: cluster.target,
    runningContainers: cluster.taskManagerCount,
    pendingContainers: cluster.pending,
    amContainerId: cluster.currentAttempt.amContainerId,
    amHost: cluster.currentAttempt.amHost,
    clientBlacklist: cluster.clientBlacklistView(),
    blacklistOwners: cluster.ownersView(),
    schedulerBlacklist: cluster.schedulerBlacklistView(),
    pendingBlacklist: cluster.pendingBlacklistDelta(),
    options: {
      tickMs: ctx.tick.get(),
      newAttemptBlacklist: cluster.newAttemptBlacklist,
      keepContainersAcrossAttempts: cluster.keepContainersAcrossAttempts,
      rmContainersShape: ctx.settings.rmContainersShape,
    },
    faults: faults.all(),
  };
}
