/**
 * The simulator's Flink JobManager REST face (the few endpoints the detector reads), in the shape of
 * the selected Flink version, and its control calls under /sim/v1/flink. Errors are Flink's
 * {"errors":[…]}.
 */
import { FastifyInstance, FastifyReply } from 'fastify';
import { sendErrors } from './amrm-routes';
import { FLINK_VERSIONS, FlinkVersion, HostFailure, InjectResult, SimFlink } from './flink-jobs';
import { SimFlinkRuntime } from './flink-runtime';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Flink's JobExceptionsHandler default for maxExceptions. */
const MAX_EXCEPTIONS_DEFAULT = 20;

export function registerFlinkRoutes(app: FastifyInstance, flink: SimFlink): void {
  app.get('/config', async () => flink.config());
  app.get('/jobs/overview', async () => flink.overview());
  app.get<{ Params: { jid: string }; Querystring: Obj }>('/jobs/:jid/exceptions', async (req, reply) => {
    if (req.params.jid !== flink.job.jid) return sendErrors(reply, 404, `Job ${req.params.jid} not found`);
    let max = MAX_EXCEPTIONS_DEFAULT;
    const raw = req.query.maxExceptions;
    if (raw !== undefined) {
      if (typeof raw !== 'string' || !/^\d{1,6}$/.test(raw)) return sendErrors(reply, 400, `Cannot parse maxExceptions '${String(raw)}'`);
      max = Number(raw);
    }
    return flink.exceptions(max);
  });

  registerEvacuationFaces(app, flink);

  app.get('/sim/v1/flink', async () => ({ version: flink.version, job: { jid: flink.job.jid, state: flink.job.state, restarts: flink.job.restarts, history: flink.job.history.length } }));

  app.put<{ Body: unknown }>('/sim/v1/flink', async (req, reply) => {
    const b = req.body;
    if (!isObj(b) || !(FLINK_VERSIONS as readonly unknown[]).includes(b.version)) return sendErrors(reply, 400, `body must be {"version": one of ${FLINK_VERSIONS.join(', ')}}`);
    flink.version = b.version as FlinkVersion;
    return { version: flink.version };
  });

  app.post('/sim/v1/flink/failover', async () => {
    flink.failover();
    return { history: 0 };
  });

  app.post<{ Body: unknown }>('/sim/v1/flink/failures', async (req, reply) => {
    const r = injectFailure(flink, req.body);
    if (typeof r === 'string') return sendErrors(reply, 400, r);
    if (!r.ok) return sendErrors(reply, 400, r.error);
    return { timestamp: r.entry.timestamp, exceptionName: r.entry.exceptionName, containers: r.containers };
  });
}

/**
 * Failure injection, or what is wrong with the request:
 *  {"host": "node0007.sim.local", "exception"?: "java.io.IOException: No space left on device", "exitStatus"?: 137}
 *  {"hosts": ["…", "…"] | n, "exception": "java.lang.NullPointerException: …"}   one failure on many hosts
 *  {"global": true, "exception": "…"}                                              no task manager
 */
function injectFailure(flink: SimFlink, b: unknown): InjectResult | string {
  const usage = 'body must be {"host", "exception"?, "exitStatus"?} | {"hosts": [hosts] or a count, "exception"} | {"global": true, "exception"}';
  if (!isObj(b)) return usage;
  if (b.exception !== undefined && (typeof b.exception !== 'string' || b.exception.trim() === '')) return '"exception" must be a non-empty string';
  if (b.exitStatus !== undefined && (typeof b.exitStatus !== 'number' || !Number.isInteger(b.exitStatus))) return '"exitStatus" must be an integer';
  const exception = b.exception as string | undefined;
  if (b.global === true) return exception ? flink.failGlobal(exception) : 'a global failure needs "exception"';
  if (typeof b.host === 'string') {
    const f: HostFailure = { host: b.host };
    if (exception !== undefined) f.exception = exception;
    if (b.exitStatus !== undefined) f.exitStatus = b.exitStatus as number;
    return flink.failHost(f);
  }
  if (!Array.isArray(b.hosts) && typeof b.hosts !== 'number') return usage;
  if (!exception) return 'a job-wide failure needs "exception"';
  if (typeof b.hosts === 'number') {
    if (!Number.isInteger(b.hosts) || b.hosts < 1) return '"hosts" must be a positive count or a list of hosts';
    const hosts = flink.hostsWithTaskManagers().slice(0, b.hosts);
    if (hosts.length < b.hosts) return `only ${hosts.length} hosts run task managers`;
    return flink.failJobWide(hosts, exception);
  }
  if (!b.hosts.every((h) => typeof h === 'string' && h !== '')) return '"hosts" must list host names';
  return flink.failJobWide(b.hosts as string[], exception);
}

/** The endpoints evacuations read (flink-runtime.ts): task managers' slots, the job, checkpoints, restarts. */
function registerEvacuationFaces(app: FastifyInstance, flink: SimFlink): void {
  const job = <P extends { jid: string }>(params: P, reply: FastifyReply): boolean => {
    if (params.jid === flink.job.jid) return true;
    void sendErrors(reply, 404, `Job ${params.jid} not found`);
    return false;
  };
  app.get('/taskmanagers', async () => flink.taskManagersBody());
  app.get<{ Params: { jid: string } }>('/jobs/:jid', async (req, reply) => (job(req.params, reply) ? flink.jobBody() : reply));
  app.get<{ Params: { jid: string } }>('/jobs/:jid/checkpoints/config', async (req, reply) => {
    if (!job(req.params, reply)) return reply;
    const r = flink.checkpointConfigBody();
    return reply.code(r.status).send(r.body);
  });
  app.get<{ Params: { jid: string } }>('/jobs/:jid/checkpoints', async (req, reply) => (job(req.params, reply) ? flink.checkpointsBody() : reply));
  app.post<{ Params: { jid: string } }>('/jobs/:jid/checkpoints', async (req, reply) => {
    // Flink answers an unknown route 404 "Not found"; the trigger came with 1.17 (FLINK-27101).
    if (flink.version === '1.16' || !flink.runtime) return sendErrors(reply, 404, `Not found: ${req.url}`);
    if (!job(req.params, reply)) return reply;
    return reply.code(202).send({ 'request-id': flink.runtime.trigger() });
  });
  app.get<{ Params: { jid: string; trigger: string } }>('/jobs/:jid/checkpoints/:trigger', async (req, reply) => {
    if (!job(req.params, reply)) return reply;
    const body = flink.triggerBody(req.params.trigger);
    return body === undefined ? sendErrors(reply, 404, `Operation not found under key: ${req.params.trigger}`) : body;
  });
  app.get<{ Params: { jid: string }; Querystring: Obj }>('/jobs/:jid/metrics', async (req, reply) => (job(req.params, reply) ? (req.query.get === 'numRestarts' ? flink.restartsBody() : []) : reply));
  app.get<{ Params: { jid: string; vid: string } }>('/jobs/:jid/vertices/:vid/taskmanagers', async (req, reply) => {
    if (!job(req.params, reply)) return reply;
    const body = flink.vertexTaskManagersBody(req.params.vid);
    return body === undefined ? sendErrors(reply, 404, `JobVertex ${req.params.vid} not found`) : body;
  });
  app.put<{ Body: unknown }>('/sim/v1/flink/runtime', async (req, reply) => {
    const b = req.body;
    const rt = flink.runtime;
    if (!rt) return sendErrors(reply, 409, 'the simulator runs no Flink runtime (flinkRuntime: false)');
    if (!isObj(b)) return sendErrors(reply, 400, 'body must be {"triggerBehaviour"?: "complete"|"fail"|"never", "parallelism"?: n}');
    if (b.triggerBehaviour !== undefined) {
      if (b.triggerBehaviour !== 'complete' && b.triggerBehaviour !== 'fail' && b.triggerBehaviour !== 'never') return sendErrors(reply, 400, '"triggerBehaviour" must be complete, fail or never');
      rt.triggerBehaviour = b.triggerBehaviour;
    }
    if (b.parallelism !== undefined) {
      if (typeof b.parallelism !== 'number' || !Number.isInteger(b.parallelism) || b.parallelism < 0) return sendErrors(reply, 400, '"parallelism" must be a non-negative integer');
      rt.parallelism = b.parallelism;
    }
    return runtimeState(rt);
  });
  app.get('/sim/v1/flink/runtime', async (_req, reply) => (flink.runtime ? runtimeState(flink.runtime) : sendErrors(reply, 404, 'no Flink runtime')));
}

function runtimeState(rt: SimFlinkRuntime): unknown {
  return { state: rt.state, type: rt.type, parallelism: rt.parallelism, restarts: rt.restarts, triggerBehaviour: rt.triggerBehaviour, taskManagers: rt.taskManagers(), latestCheckpoint: rt.latestCheckpoint() ?? null };
}
