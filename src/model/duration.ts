/**
 * Durations in Flink's style (org.apache.flink.util.TimeUtils#parseDuration): a number and a unit,
 * with or without a space: "500 ms", "30 s", "1 min", "2h", "10m", "1 d". A bare number is
 * milliseconds, as in Flink. Negative values only where the caller allows them ("-1 s" = forever).
 */

const UNITS: readonly (readonly [readonly string[], number])[] = [
  [['ms', 'milli', 'millis', 'millisecond', 'milliseconds'], 1],
  [['s', 'sec', 'secs', 'second', 'seconds'], 1000],
  [['m', 'min', 'mins', 'minute', 'minutes'], 60_000],
  [['h', 'hour', 'hours'], 3_600_000],
  [['d', 'day', 'days'], 86_400_000],
];
const UNIT_MS: ReadonlyMap<string, number> = new Map<string, number>(UNITS.flatMap(([names, ms]) => names.map((n) => [n, ms] as [string, number])));

export function parseDuration(raw: string | number, opts: { allowNegative?: boolean } = {}): number {
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) throw new Error(`'${raw}' is not a whole number of milliseconds`);
    if (raw < 0 && !opts.allowNegative) throw new Error(`'${raw}' must not be negative`);
    return raw;
  }
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(raw);
  if (!m) throw new Error(`'${raw}' is not a duration (examples: 500 ms, 30 s, 1 min, 2 h)`);
  const unit = m[2].toLowerCase();
  const mult = unit === '' ? 1 : UNIT_MS.get(unit);
  if (mult === undefined) throw new Error(`'${raw}' has an unknown time unit '${m[2]}' (use ms, s, min, h or d)`);
  const ms = Math.round(Number(m[1]) * mult);
  if (ms < 0 && !opts.allowNegative) throw new Error(`'${raw}' must not be negative`);
  return ms;
}

/** The shortest exact Flink-style text for a number of milliseconds: 90000 → "90 s", 3600000 → "1 h". */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  for (const [unit, mult] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) {
    if (a >= mult && a % mult === 0) return `${sign}${a / mult} ${unit}`;
  }
  return `${sign}${a} ms`;
}

/** Human, approximate, for tables: "in 42m", "3h 5m", "never". */
export function humanizeMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'never';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? ` ${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? ` ${m % 60}m` : ''}`;
  const d = Math.floor(h / 24);
  return `${d}d${h % 24 ? ` ${h % 24}h` : ''}`;
}
