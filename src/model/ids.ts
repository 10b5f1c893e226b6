/**
 * Identifier grammar: YARN host names and YARN's application / attempt / container ids.
 * Pure parsing, strict: what YARN itself would not produce is refused with a reason.
 *
 * YARN formats (ApplicationId, ApplicationAttemptId, ContainerId#toString in hadoop-yarn-api):
 *   application_<clusterTimestamp>_<id, at least 4 digits>
 *   appattempt_<clusterTimestamp>_<appId, ≥4 digits>_<attemptId, ≥6 digits>
 *   container_[e<epoch>_]<clusterTimestamp>_<appId ≥4>_<attemptId ≥2>_<containerId ≥6>
 */

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

export interface ApplicationId {
  clusterTimestamp: string;
  id: number;
}
export interface AttemptId {
  application: ApplicationId;
  attempt: number;
}
export interface ContainerId {
  epoch?: number;
  application: ApplicationId;
  attempt: number;
  container: number;
}

/** The id grammars as regular-expression sources, for the API's document (src/api/openapi-contract.ts). */
export const APPLICATION_ID_PATTERN = 'application_([0-9]{10,19})_([0-9]{4,})';
export const CONTAINER_ID_PATTERN = 'container_(?:e([0-9]+)_)?([0-9]{10,19})_([0-9]{4,})_([0-9]{2,})_([0-9]{6,})';
const APP_RE = new RegExp(`^${APPLICATION_ID_PATTERN}$`);
const ATTEMPT_RE = /^appattempt_(\d{10,19})_(\d{4,})_(\d{6,})$/;
const CONTAINER_RE = new RegExp(`^${CONTAINER_ID_PATTERN}$`);

export function parseApplicationId(s: string): ParseResult<ApplicationId> {
  const m = APP_RE.exec(s);
  if (!m) return { ok: false, error: `'${s}' is not a YARN application id (expected application_<clusterTimestamp>_<NNNN>)` };
  return { ok: true, value: { clusterTimestamp: m[1], id: Number(m[2]) } };
}

export function parseAttemptId(s: string): ParseResult<AttemptId> {
  const m = ATTEMPT_RE.exec(s);
  if (!m) return { ok: false, error: `'${s}' is not a YARN application attempt id (expected appattempt_<clusterTimestamp>_<NNNN>_<NNNNNN>)` };
  return { ok: true, value: { application: { clusterTimestamp: m[1], id: Number(m[2]) }, attempt: Number(m[3]) } };
}

export function parseContainerId(s: string): ParseResult<ContainerId> {
  const m = CONTAINER_RE.exec(s);
  if (!m) {
    return {
      ok: false,
      error: `'${s}' is not a YARN container id (expected container_[e<epoch>_]<clusterTimestamp>_<app>_<attempt>_<container>)`,
    };
  }
  const value: ContainerId = {
    application: { clusterTimestamp: m[2], id: Number(m[3]) },
    attempt: Number(m[4]),
    container: Number(m[5]),
  };
  if (m[1] !== undefined) value.epoch = Number(m[1]);
  return { ok: true, value };
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

export function formatApplicationId(a: ApplicationId): string {
  return `application_${a.clusterTimestamp}_${pad(a.id, 4)}`;
}
export function formatAttemptId(a: AttemptId): string {
  return `appattempt_${a.application.clusterTimestamp}_${pad(a.application.id, 4)}_${pad(a.attempt, 6)}`;
}
export function formatContainerId(c: ContainerId): string {
  const epoch = c.epoch !== undefined ? `e${pad(c.epoch, 2)}_` : '';
  return `container_${epoch}${c.application.clusterTimestamp}_${pad(c.application.id, 4)}_${pad(c.attempt, 2)}_${pad(c.container, 6)}`;
}

/** The application id a container id belongs to (how the sidecar finds its app from CONTAINER_ID). */
export function applicationOfContainer(containerId: string): ParseResult<string> {
  const p = parseContainerId(containerId);
  if (!p.ok) return p;
  return { ok: true, value: formatApplicationId(p.value.application) };
}

export const HOST_MAX = 255;
/**
 * Dot-separated labels of letters, digits, '-' and '_' (RFC 1123, with the '_' real clusters use),
 * each 1-63 characters, not starting or ending with '-': no empty label ('a..b'), no trailing dot.
 */
const LABEL = '[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?';
export const HOST_NAME_PATTERN = `${LABEL}(?:\\.${LABEL})*`;
const HOST_RE = new RegExp(`^${HOST_NAME_PATTERN}$`);

/**
 * A node id is the NodeManager host name as the RM names it (nodeHostName, no port) — what Flink's
 * YarnResourceManagerDriver sends to AMRMClient#updateBlacklist. Refused with a reason:
 *  - "*": YARN's ANY; the RM rejects the whole allocate call ("Cannot add * to the blacklist!");
 *  - "/rack" paths: YARN would match a whole rack, which a node block must never do silently;
 *  - "host:port": a NodeId, not a host. Refused rather than silently normalised, so an operator
 *    copying `id` from the RM's node list learns the right form (the message says it).
 */
export const RACK_SEGMENT_PATTERN = '[A-Za-z0-9][A-Za-z0-9._-]*';
const RACK_SEGMENT = new RegExp(`^${RACK_SEGMENT_PATTERN}$`);

/**
 * A rack path as YARN names it (NetworkTopology: `/default-rack`, `/dc1/rack7`): '/'-separated
 * segments of letters, digits, '.', '-', '_', at most 255 characters.
 */
export function validateRackPath(raw: string): ParseResult<string> {
  if (!raw.startsWith('/')) return { ok: false, error: `rack '${raw}' must be a rack path as YARN names it, starting with '/', e.g. /default-rack` };
  if (raw.length > HOST_MAX) return { ok: false, error: `rack path is longer than ${HOST_MAX} characters` };
  const segments = raw.slice(1).split('/');
  if (segments.some((s) => !RACK_SEGMENT.test(s))) return { ok: false, error: `rack '${raw}' is not a rack path: '/'-separated names of letters, digits, '.', '-', '_' (e.g. /dc1/rack7), no empty part or trailing '/'` };
  return { ok: true, value: raw };
}

export function validateHostName(raw: string): ParseResult<string> {
  if (raw.length === 0) return { ok: false, error: 'node id must not be empty' };
  if (raw === '*') return { ok: false, error: "node id '*' is YARN's ANY and cannot be blocked (the RM rejects it: \"Cannot add * to the blacklist!\")" };
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { ok: false, error: 'node id contains control characters' };
  if (raw.length > HOST_MAX) return { ok: false, error: `node id is longer than ${HOST_MAX} characters` };
  if (raw.startsWith('/')) return { ok: false, error: `node id '${raw}' looks like a rack path; block a rack under /blocklist/racks (blocklist block-rack)` };
  const colon = /^(.*):(\d+)$/.exec(raw);
  if (colon) return { ok: false, error: `node id '${raw}' has a port; use the host name '${colon[1]}' (YARN's nodeHostName)` };
  if (!HOST_RE.test(raw)) return { ok: false, error: `node id '${raw}' is not a host name (dot-separated labels of letters, digits, '-', '_', each 1-63 long, none empty)` };
  return { ok: true, value: raw };
}
