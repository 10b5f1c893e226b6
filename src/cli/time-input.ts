/**
 * Human time input → exact wire values. Durations take Flink's units ("2h", "10m", "30 s"); a bare
 * number is refused where Flink (ms) and YARN (seconds) would read it differently, so "600" never
 * silently means 0.6 s. Instants are ISO 8601 with an explicit zone, or epoch milliseconds.
 */
import { parseDuration } from '../model/duration';
import { MAX_BARE_EVACUATION_TIMEOUT_S, MIN_BARE_TIMEOUT_MS } from '../model/validate';
import { usage } from './errors';

/** --timeout: how long the block lasts → milliseconds (sent as the API's `timeout`). */
export function parseBlockTimeout(raw: string): number {
  const t = raw.trim();
  // Zero means the same in every unit, so it is refused for what it is (as --evacuation-timeout 0 is taken for what it is).
  if (/^0+$/.test(t)) throw usage(`--timeout ${raw} would end the block as it starts; omit --timeout for a permanent block, or give a length such as 30m`);
  if (/^\d+$/.test(t)) throw usage(`--timeout '${raw}' needs a unit: e.g. 30m, 2h, 1d (a bare number is ambiguous)`);
  let ms: number;
  try {
    ms = parseDuration(t);
  } catch (e) {
    throw usage(`--timeout ${(e as Error).message}`);
  }
  if (ms <= 0) throw usage(`--timeout '${raw}' must be longer than zero; omit it for a permanent block`);
  return ms;
}

/**
 * --until: an ISO 8601 instant with a zone ("2026-12-01T06:00Z", "2026-12-01T08:00+02:00"), a date
 * ("2026-12-01", midnight UTC), or epoch milliseconds. A time without a zone is refused: a block
 * that ends at a different hour on the operator's laptop and the server is worse than an error.
 */
export function parseUntil(raw: string): number {
  const t = raw.trim();
  if (/^\d{11,}$/.test(t)) return Number(t);
  const date = /^\d{4}-\d{2}-\d{2}$/.test(t);
  const zoned = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(t);
  if (!date && !zoned) {
    if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(t)) throw usage(`--until '${raw}' has no time zone; add Z (UTC) or an offset, e.g. ${t}Z`);
    throw usage(`--until '${raw}' is not a time; use ISO 8601 like 2026-12-01T06:00Z, a date like 2026-12-01, or epoch milliseconds`);
  }
  const ms = Date.parse(t.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  if (!Number.isFinite(ms)) throw usage(`--until '${raw}' is not a valid date`);
  return ms;
}

/**
 * --evacuation-timeout / -g: seconds, graceful-decommission style. Accepts a duration with a unit,
 * 0 (release at once), or a negative number / "forever" (wait forever, stored as -1).
 * `bareSeconds`: -g takes plain seconds, as `yarn rmadmin -refreshNodes -g` does.
 */
export function parseEvacuationTimeout(raw: string, flag: string, bareSeconds = false): number {
  const t = raw.trim().toLowerCase();
  if (t === 'forever' || t === 'never' || t === 'infinite') return -1;
  if (/^-\d+$/.test(t)) return -1;
  if (/^\d+$/.test(t)) {
    if (bareSeconds || t === '0') return Number(t);
    throw usage(`${flag} '${raw}' needs a unit: e.g. 600s, 10m, 0 (at once) or forever`);
  }
  let ms: number;
  try {
    ms = parseDuration(t, { allowNegative: true });
  } catch (e) {
    throw usage(`${flag} ${(e as Error).message}`);
  }
  if (ms < 0) return -1;
  if (ms % 1000 !== 0) throw usage(`${flag} '${raw}' must be whole seconds`);
  return ms / 1000;
}

/** Seconds of an evacuation timeout as the API takes them: a bare number up to a day, with a unit beyond (the API refuses a bare one). */
export function evacuationTimeoutWire(seconds: number): number | string {
  return seconds <= MAX_BARE_EVACUATION_TIMEOUT_S ? seconds : `${seconds} s`;
}

/** A block's length as the API takes it: bare milliseconds from a second on, with a unit below (the API refuses a bare one). */
export function timeoutWire(ms: number): string {
  return ms >= MIN_BARE_TIMEOUT_MS ? String(ms) : `${ms} ms`;
}
