/**
 * Flink JobManager REST bodies, parsed by feature rather than by version, for every shape Flink
 * 1.15 to 2.x serves (Flink's JobExceptionsInfoWithHistory and JobDetails):
 *  - `exceptionHistory.entries[]`, newest first: `exceptionName`, `stacktrace`, `timestamp`,
 *    `taskName`, `concurrentExceptions[]`, and the task manager's place: `location` only before 1.17;
 *    `taskManagerId` (the YARN container id) from 1.17; `endpoint` from 1.19 (`location` kept, equal,
 *    until 2.0 removed it). Global failures carry neither (fields absent: NON_NULL).
 *  - `location`/`endpoint` are "<host>:<data port>"; "(unassigned)" means no place.
 *  - The deprecated top-level members of 1.x (`root-exception`, `all-exceptions`, …) are ignored.
 *  - `/jobs/overview`: `{"jobs":[{"jid","name","state","last-modification",…}]}`.
 */

export interface FlinkJob {
  jid: string;
  name: string;
  state: string;
  lastModification: number;
}

export interface FlinkException {
  exceptionName: string;
  /** First line of the stack trace ("java.io.IOException: No space left on device"). */
  message: string;
  timestamp: number;
  taskName?: string;
  /** The YARN container id of the task manager (Flink 1.17+). */
  taskManagerId?: string;
  /** Host part of `endpoint` (1.19+) or `location` (before 2.0). */
  host?: string;
}

export interface FlinkHistoryEntry extends FlinkException {
  /** Global failures (checkpointing, coordinators) have no task manager and are never attributed. */
  global: boolean;
  concurrent: FlinkException[];
}

export interface FlinkExceptions {
  entries: FlinkHistoryEntry[];
  truncated: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Flink writes longs as numbers; a proxy may turn them into strings. */
function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^-?\d{1,16}$/.test(v)) return Number(v);
  return undefined;
}

export function parseJobsOverview(body: unknown): Parsed<FlinkJob[]> {
  if (!isObj(body) || !Array.isArray(body.jobs)) return { ok: false, error: 'jobs overview: expected {"jobs":[…]}' };
  const jobs: FlinkJob[] = [];
  for (const [i, raw] of body.jobs.entries()) {
    if (!isObj(raw) || typeof raw.jid !== 'string' || !/^[0-9a-f]{32}$/.test(raw.jid)) return { ok: false, error: `jobs overview: jobs[${i}].jid is not a 32-hex job id` };
    const lm = num(raw['last-modification']);
    jobs.push({ jid: raw.jid, name: typeof raw.name === 'string' ? raw.name : '', state: typeof raw.state === 'string' ? raw.state : 'UNKNOWN', lastModification: lm ?? 0 });
  }
  return { ok: true, value: jobs };
}

/** "host:port" → host; "(unassigned)", "" or junk → undefined. IPv6 in brackets keeps its brackets off. */
export function hostOfEndpoint(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (s === '' || s === '(unassigned)') return undefined;
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracket) return bracket[1];
  const m = /^([^:\s/]+)(?::\d+)?$/.exec(s);
  return m ? m[1] : undefined;
}

function parseOne(raw: unknown, where: string): Parsed<FlinkException> {
  if (!isObj(raw)) return { ok: false, error: `${where} is not an object` };
  const exceptionName = typeof raw.exceptionName === 'string' && raw.exceptionName !== '' ? raw.exceptionName : undefined;
  const stacktrace = typeof raw.stacktrace === 'string' ? raw.stacktrace : '';
  const timestamp = num(raw.timestamp);
  if (timestamp === undefined) return { ok: false, error: `${where}.timestamp is not a number` };
  const firstLine = stacktrace.split('\n', 1)[0].trim();
  const name = exceptionName ?? (/^([\w.$]+)(:|$)/.exec(firstLine)?.[1] ?? 'unknown');
  const out: FlinkException = { exceptionName: name, message: firstLine || name, timestamp };
  if (typeof raw.taskName === 'string' && raw.taskName !== '') out.taskName = raw.taskName;
  if (typeof raw.taskManagerId === 'string' && raw.taskManagerId !== '') out.taskManagerId = raw.taskManagerId;
  const host = hostOfEndpoint(raw.endpoint) ?? hostOfEndpoint(raw.location);
  if (host !== undefined) out.host = host;
  return { ok: true, value: out };
}

export function parseExceptions(body: unknown): Parsed<FlinkExceptions> {
  if (!isObj(body)) return { ok: false, error: 'exceptions: the body is not a JSON object' };
  const h = body.exceptionHistory;
  if (!isObj(h) || !Array.isArray(h.entries)) return { ok: false, error: 'exceptions: no exceptionHistory.entries (Flink before 1.13 is not supported)' };
  const entries: FlinkHistoryEntry[] = [];
  for (const [i, raw] of h.entries.entries()) {
    const where = `exceptionHistory.entries[${i}]`;
    const root = parseOne(raw, where);
    if (!root.ok) return root;
    const concurrent: FlinkException[] = [];
    const cs = isObj(raw) && Array.isArray(raw.concurrentExceptions) ? raw.concurrentExceptions : [];
    for (const [j, c] of cs.entries()) {
      const p = parseOne(c, `${where}.concurrentExceptions[${j}]`);
      if (!p.ok) return p;
      concurrent.push(p.value);
    }
    const global = root.value.taskManagerId === undefined && root.value.host === undefined && root.value.taskName === undefined;
    entries.push({ ...root.value, global, concurrent });
  }
  return { ok: true, value: { entries, truncated: h.truncated === true } };
}

/**
 * The shape of a failure message, for the job-fault contrast: the same failure on another host
 * reads the same once container ids, host names, addresses and numbers are blanked.
 */
export function signatureOf(exceptionName: string, message: string): string {
  const text = message.startsWith(exceptionName) ? message : `${exceptionName}: ${message}`;
  return text
    .replace(/container_(e\d+_)?\d+_\d+_\d+_\d+/g, '<container>')
    .replace(/\b(\d{1,3}\.){3}\d{1,3}(:\d+)?\b/g, '<ip>')
    .replace(/\b[a-z0-9-]+(\.[a-z0-9-]+)+:\d+\b/gi, '<host:port>')
    .replace(/\b[0-9a-f]{32}\b/g, '<id>')
    .replace(/\d+/g, '#')
    .slice(0, 300);
}
