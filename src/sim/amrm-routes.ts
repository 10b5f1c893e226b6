/**
 * The simulator's AMRM proxy face: the contract of docs/amrm-proxy.openapi.yaml, served over the
 * simulated AM's AMRMClient state (cluster.ts). Errors use {"errors":[…]}.
 */
import { FastifyInstance, FastifyReply } from 'fastify';
import { SimCluster } from './cluster';
import { DEFAULT_BLACKLIST_OWNER, ownerError } from './am-blacklist';

export function sendErrors(reply: FastifyReply, status: number, ...errors: string[]): FastifyReply {
  return reply.code(status).send({ errors });
}

/** A list of non-empty strings, or an error naming the field. */
function stringList(body: Record<string, unknown>, key: string, required: boolean): string[] | string {
  const v = body[key];
  if (v === undefined && !required) return [];
  if (!Array.isArray(v)) return `"${key}" must be an array of strings`;
  for (const x of v) {
    if (typeof x !== 'string' || x.length === 0) return `"${key}" must contain only non-empty strings`;
  }
  return v as string[];
}

/** The contract's host names: 1 to 255 characters, no space or control character (the interceptor's rule). */
const BLACKLIST_ENTRY = /^[^\x00-\x20\x7f]{1,255}$/;
/** The contract's ContainerId pattern. */
const CONTAINER_ID = /^container_(e\d+_)?\d{10,19}_\d{4,}_\d{2,}_\d{6,}$/;
/** Bodies of at most 1 MiB, as the interceptor takes them. */
export const AMRM_BODY_LIMIT = 1 << 20;

/** Each path of the contract and its methods; any other method is a 405 naming them (as the interceptor answers). */
export const AMRM_PATHS: Readonly<Record<string, readonly string[]>> = {
  '/amrm/v1/attempt': ['GET'],
  '/amrm/v1/blacklist': ['GET', 'POST'],
  '/amrm/v1/completed-containers': ['GET'],
  '/amrm/v1/containers': ['GET'],
  '/amrm/v1/containers/release': ['POST'],
};

function entriesError(key: string, hosts: string[]): string | undefined {
  const bad = hosts.find((h) => !BLACKLIST_ENTRY.test(h));
  return bad === undefined ? undefined : `${key}: '${bad.slice(0, 80)}' is not a host name (1 to 255 characters, no space or control character)`;
}

function registerMethodNotAllowed(app: FastifyInstance): void {
  const all = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;
  for (const [url, methods] of Object.entries(AMRM_PATHS)) {
    const others = all.filter((m) => !methods.includes(m));
    const allow = methods.join(', ');
    app.route({ method: [...others], url, handler: async (req, reply) => sendErrors(reply.header('Allow', allow), 405, `${req.method} is not allowed here; use ${allow}`) });
  }
}

/**
 * True when `If-None-Match` names the current tag (or is `*`): the GET answers 304. Weak comparison,
 * as RFC 9110 §13.1.2 asks for this header: `W/` is ignored on either side.
 */
export function ifNoneMatchFails(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (t: string): string => t.trim().replace(/^W\//, '');
  const current = opaque(etag);
  return header.split(',').some((t) => t.trim() === '*' || opaque(t) === current);
}

/** `Prefer: return=minimal` among the request's preferences (RFC 7240 §4.2). */
export function prefersMinimal(header: string | string[] | undefined): boolean {
  const all = Array.isArray(header) ? header.join(',') : (header ?? '');
  return all.split(',').some((p) => p.split(';')[0].trim().toLowerCase().replace(/\s+/g, '') === 'return=minimal');
}

export function registerAmrmRoutes(app: FastifyInstance, cluster: SimCluster): void {
  registerMethodNotAllowed(app);
  app.get('/amrm/v1/attempt', { exposeHeadRoute: false }, async () => {
    const a = cluster.currentAttempt;
    return { applicationId: cluster.applicationId, appAttemptId: a.id, registered: a.registered, amContainerId: a.amContainerId };
  });
  registerBlacklistRoutes(app, cluster);
  registerContainerRoutes(app, cluster);
}

/** The AM's blacklist: read (versioned), and one owner's change. */
function registerBlacklistRoutes(app: FastifyInstance, cluster: SimCluster): void {
  // Versioned by a strong ETag; a reader that sends the tag it holds gets 304 and no body while
  // nothing changed (RFC 9110 §8.8.3, §13.1.2, §15.4.5): megabytes at 100,000 hosts, every poll tick.
  app.get<{ Headers: { 'if-none-match'?: string } }>('/amrm/v1/blacklist', { exposeHeadRoute: false }, async (req, reply) => {
    const etag = cluster.blacklistEtag();
    reply.header('ETag', etag).header('Cache-Control', 'no-cache');
    cluster.counters.blacklistReads++;
    if (ifNoneMatchFails(req.headers['if-none-match'], etag)) {
      cluster.counters.blacklistReadsNotModified++;
      return reply.code(304).send();
    }
    return { blacklist: cluster.clientBlacklistView(), owners: cluster.ownersView() };
  });

  app.post<{ Body: unknown }>('/amrm/v1/blacklist', { bodyLimit: AMRM_BODY_LIMIT }, async (req, reply) => {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendErrors(reply, 400, 'body must be {"owner"?: "…", "blacklistAdditions":[…],"blacklistRemovals":[…]}');
    }
    const o = body as Record<string, unknown>;
    const owner = o.owner === undefined ? DEFAULT_BLACKLIST_OWNER : o.owner;
    if (typeof owner !== 'string') return sendErrors(reply, 400, '"owner" must be a string');
    const badOwner = ownerError(owner);
    if (badOwner !== undefined) return sendErrors(reply, 400, badOwner);
    const additions = stringList(o, 'blacklistAdditions', false);
    const removals = stringList(o, 'blacklistRemovals', false);
    if (typeof additions === 'string') return sendErrors(reply, 400, additions);
    if (typeof removals === 'string') return sendErrors(reply, 400, removals);
    const badEntry = entriesError('blacklistAdditions', additions) ?? entriesError('blacklistRemovals', removals);
    if (badEntry !== undefined) return sendErrors(reply, 400, badEntry);
    const r = cluster.updateBlacklist(additions, removals, owner);
    if (!r.ok) return sendErrors(reply, 400, r.error);
    reply.header('ETag', r.etag);
    // RFC 7240's `Prefer: return=minimal`: only the two tags, not the whole list back.
    if (prefersMinimal(req.headers.prefer)) {
      reply.header('Preference-Applied', 'return=minimal');
      return { etag: r.etag, previousEtag: r.previousEtag };
    }
    return { blacklist: r.blacklist, owners: r.owners, etag: r.etag, previousEtag: r.previousEtag };
  });

}

/** The job's containers: those that completed (paged by seq), those running, and a release. */
function registerContainerRoutes(app: FastifyInstance, cluster: SimCluster): void {
  app.get<{ Querystring: Record<string, unknown> }>('/amrm/v1/completed-containers', { exposeHeadRoute: false }, async (req, reply) => {
    const raw = req.query.after;
    let after = 0;
    if (raw !== undefined) {
      if (typeof raw !== 'string' || !/^\d{1,15}$/.test(raw)) return sendErrors(reply, 400, '"after" must be a non-negative integer (a seq from an earlier answer)');
      after = Number(raw);
    }
    return cluster.completedAfter(after);
  });

  app.get('/amrm/v1/containers', { exposeHeadRoute: false }, async () => ({
    containers: cluster.taskManagers().map((c) => {
      const n = cluster.node(c.host);
      return { containerId: c.id, nodeId: n?.nodeId ?? c.host, nodeHttpAddress: n?.httpAddress ?? '', state: 'RUNNING' };
    }),
  }));

  app.post<{ Body: unknown }>('/amrm/v1/containers/release', { bodyLimit: AMRM_BODY_LIMIT }, async (req, reply) => {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return sendErrors(reply, 400, 'body must be {"containerIds":[…]}');
    }
    const ids = stringList(body as Record<string, unknown>, 'containerIds', true);
    if (typeof ids === 'string') return sendErrors(reply, 400, ids);
    const badId = ids.find((id) => !CONTAINER_ID.test(id));
    if (badId !== undefined) return sendErrors(reply, 400, `containerIds: '${badId.slice(0, 80)}' is not a YARN container id`);
    return cluster.release(ids);
  });
}
