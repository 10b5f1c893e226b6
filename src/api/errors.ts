/**
 * Errors as Flink's REST API writes them: `{"errors": ["message", …]}` with the right 4xx code.
 * Anything a client can send maps to a 4xx with a message that names the problem; a store that
 * cannot be reached is a 503; only a bug is a 500 (logged with its stack).
 */
import { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { StoreUnavailableError } from '../store/store';
import { CorruptItemError } from '../store/codec';
import { Logger } from '../core/logger';

export class ApiError extends Error {
  constructor(readonly status: number, readonly errors: string[]) {
    super(errors.join('; '));
  }
}

export const badRequest = (errors: string[]) => new ApiError(400, errors);

export function sendErrors(reply: FastifyReply, status: number, errors: string[]): FastifyReply {
  return reply.code(status).type('application/json').send({ errors });
}

interface AjvError {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
  keyword?: string;
}

/** ajv's errors in words a person reads: "body.cause must be string", "unknown field 'foo'". */
function describeValidation(errors: AjvError[], context: string): string[] {
  const out = new Set<string>();
  for (const e of errors) {
    const at = `${context}${(e.instancePath ?? '').replace(/\//g, '.')}`;
    if (e.keyword === 'additionalProperties' && e.params?.additionalProperty) out.add(`unknown field '${String(e.params.additionalProperty)}' in ${at}`);
    else if (e.keyword === 'required' && e.params?.missingProperty) out.add(`${at}.${String(e.params.missingProperty)} is required`);
    else if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)) out.add(`${at} must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`);
    else if (e.keyword === 'anyOf') continue; // its branches already said what was wrong
    else out.add(`${at} ${e.message ?? 'is invalid'}`);
  }
  return out.size ? [...out] : [`${context} is invalid`];
}

/**
 * Errors Fastify raises before a route runs (a URL that does not decode, say): the same body as
 * every other refusal. Passed as the `frameworkErrors` option of the Fastify constructor.
 */
export function frameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const bad = err.code === 'FST_ERR_BAD_URL' ? [`the URL is not valid percent-encoding: ${err.message}`] : [err.message];
  void sendErrors(reply, err.statusCode && err.statusCode < 500 ? err.statusCode : 400, bad);
}

/** How much of a refused body is read and dropped so the client can read its 413, and for how long. */
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
export const DRAIN_MAX_MS = 10_000;

/**
 * Reads and drops what is left of a request body, within bounds. A client that writes its whole
 * body before it reads (Python's urllib, many scripts) gets a connection reset instead of the
 * answer when the server closes while the body is still arriving; once the body is read the
 * answer and an orderly close reach it. Past the bounds the connection is closed anyway.
 */
function drainBody(req: FastifyRequest): Promise<void> {
  const raw = req.raw;
  if (raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let read = 0;
    const done = () => {
      clearTimeout(timer);
      raw.removeListener('data', onData);
      raw.removeListener('end', done);
      raw.removeListener('error', done);
      raw.removeListener('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      read += chunk.length;
      if (read > DRAIN_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MAX_MS);
    raw.on('data', onData).once('end', done).once('error', done).once('close', done);
    raw.resume();
  });
}

export const errorHandling = fp(async (app: FastifyInstance, opts: { logger: Logger }) => {
  const { logger } = opts;
  app.setErrorHandler(async (err: FastifyError | ApiError | StoreUnavailableError | Error, req, reply) => {
    if (err instanceof ApiError) return sendErrors(reply, err.status, err.errors);
    if (err instanceof CorruptItemError) {
      // A quarantined row: the request is fine, the stored data is not. Say how to clear it.
      return reply
        .code(409)
        .type('application/json')
        .send({ errors: [`${err.message}; it is quarantined (not enforced): DELETE it (blocklist unblock) to remove it, then block again`], code: 'quarantined' });
    }
    if (err instanceof StoreUnavailableError) {
      logger.warn(`store unavailable during ${req.method} ${req.url}: ${err.message}`);
      return sendErrors(reply, 503, [`blocklist store unavailable: ${err.message}; nothing was changed, retry later`]);
    }
    const fe = err as FastifyError & { validation?: AjvError[]; validationContext?: string };
    if (fe.validation) return sendErrors(reply, 400, describeValidation(fe.validation, fe.validationContext ?? 'body'));
    const status = fe.statusCode;
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      await drainBody(req);
      reply.header('connection', 'close');
    }
    if (status && status >= 400 && status < 500) {
      const msg =
        fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? `request body is larger than the limit of ${app.initialConfig.bodyLimit} bytes`
          : fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
            ? `unsupported content type '${String(req.headers['content-type'])}'; send application/json`
            : fe.message;
      return sendErrors(reply, status, [msg]);
    }
    logger.error(`internal error on ${req.method} ${req.url}: ${err.stack ?? err.message}`);
    return sendErrors(reply, 500, ['internal error; see the sidecar log']);
  });
  const routes = routeMethods(app);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    // A path that exists under other methods: 405 with Allow (RFC 9110 §15.5.6), not a 404.
    const allow = routes.allowed(path);
    if (allow.length) return sendErrors(reply.header('allow', allow.join(', ')), 405, [`${req.method} is not allowed on ${path}; it answers ${allow.join(', ')}`]);
    return sendErrors(reply, 404, [`no such endpoint: ${req.method} ${path}`]);
  });
}, { name: 'error-handling' });

/** The methods each registered route path answers, learnt as routes are added (onRoute). */
function routeMethods(app: FastifyInstance): { allowed(path: string): string[] } {
  const byUrl = new Map<string, { re: RegExp; methods: Set<string> }>();
  app.addHook('onRoute', (r) => {
    let entry = byUrl.get(r.url);
    if (!entry) {
      const source = r.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*$/, '.*').replace(/:[A-Za-z_]\w*/g, '[^/]+');
      byUrl.set(r.url, (entry = { re: new RegExp(`^${source}$`), methods: new Set() }));
    }
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) entry.methods.add(m);
  });
  return {
    allowed(path) {
      const out = new Set<string>();
      for (const { re, methods } of byUrl.values()) if (re.test(path)) for (const m of methods) out.add(m);
      return [...out].sort();
    },
  };
}
