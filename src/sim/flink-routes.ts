/**
 * The simulator's Flink JobManager REST face (the few endpoints the detector reads), in the shape of
 * the selected Flink version, and its control calls under /sim/v1/flink. Errors are Flink's
 * {"errors":[…]}.
 */
import { FastifyInstance } from 'fastify';
import { sendErrors } from './amrm-routes';
import { FLINK_VERSIONS, FlinkVersion, HostFailure, InjectResult, SimFlink } from './flink-jobs';

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

  /**
   * Failure injection:
   *  {"host": "node0007.sim.local", "exception"?: "java.io.IOException: No space left on device", "exitStatus"?: 137}
   *  {"hosts": ["…", "…"] | n, "exception": "java.lang.NullPointerException: …"}   one failure on many hosts
   *  {"global": true, "exception": "…"}                                              no task manager
   */
  app.post<{ Body: unknown }>('/sim/v1/flink/failures', async (req, reply) => {
    const b = req.body;
    const usage = 'body must be {"host", "exception"?, "exitStatus"?} | {"hosts": [hosts] or a count, "exception"} | {"global": true, "exception"}';
    if (!isObj(b)) return sendErrors(reply, 400, usage);
    if (b.exception !== undefined && (typeof b.exception !== 'string' || b.exception.trim() === '')) return sendErrors(reply, 400, '"exception" must be a non-empty string');
    if (b.exitStatus !== undefined && (typeof b.exitStatus !== 'number' || !Number.isInteger(b.exitStatus))) return sendErrors(reply, 400, '"exitStatus" must be an integer');
    const exception = b.exception as string | undefined;
    let r: InjectResult;
    if (b.global === true) {
      if (!exception) return sendErrors(reply, 400, 'a global failure needs "exception"');
      r = flink.failGlobal(exception);
    } else if (typeof b.host === 'string') {
      const f: HostFailure = { host: b.host };
      if (exception !== undefined) f.exception = exception;
      if (b.exitStatus !== undefined) f.exitStatus = b.exitStatus as number;
      r = flink.failHost(f);
    } else if (Array.isArray(b.hosts) || typeof b.hosts === 'number') {
      if (!exception) return sendErrors(reply, 400, 'a job-wide failure needs "exception"');
      let hosts: string[];
      if (typeof b.hosts === 'number') {
        if (!Number.isInteger(b.hosts) || b.hosts < 1) return sendErrors(reply, 400, '"hosts" must be a positive count or a list of hosts');
        hosts = flink.hostsWithTaskManagers().slice(0, b.hosts);
        if (hosts.length < b.hosts) return sendErrors(reply, 400, `only ${hosts.length} hosts run task managers`);
      } else {
        if (!b.hosts.every((h) => typeof h === 'string' && h !== '')) return sendErrors(reply, 400, '"hosts" must list host names');
        hosts = b.hosts as string[];
      }
      r = flink.failJobWide(hosts, exception);
    } else {
      return sendErrors(reply, 400, usage);
    }
    if (!r.ok) return sendErrors(reply, 400, r.error);
    return { timestamp: r.entry.timestamp, exceptionName: r.entry.exceptionName, containers: r.containers };
  });
}
