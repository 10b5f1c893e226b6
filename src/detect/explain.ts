/**
 * The words of the detector: the cause written into an automatic block (what failed, how often,
 * the evidence) and the durations and times its reports show. Pure text.
 */
import { Incident } from './types';

/**
 * The cause of an automatic block: rule, count over window, what failed how often, the block's
 * length, and up to five pieces of evidence (time, source, failure, container). One line, no
 * control characters, within the item's cause limit.
 */
export function explain(host: string, counted: readonly Incident[], s: { windowMs: number }, durationMs: number, level: number): string {
  const tally = new Map<string, number>();
  for (const inc of counted) for (const sum of new Set(inc.failures.map((f) => f.summary))) tally.set(sum, (tally.get(sum) ?? 0) + 1);
  const what = [...tally.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${trim(k, 100)} ×${n}`)
    .join(', ');
  const head = `auto: ${counted.length} failures in ${shortDuration(s.windowMs)} on ${host} (${what}); blocked for ${shortDuration(durationMs)}${level > 0 ? ` (repeat offender ×${2 ** level})` : ''}`;
  const evidence = counted
    .flatMap((inc) => inc.failures.slice(0, 1))
    .slice(-5)
    .map((f) => `${new Date(f.at).toISOString().replace(/\.\d{3}Z$/, 'Z')} ${f.source}${f.job ? ` job ${f.job.slice(0, 8)}` : ''} ${trim(f.summary, 80)}${f.containerId ? ` ${f.containerId}` : ''}`);
  let text = clean(`${head}; evidence: ${evidence.join(' | ')}`);
  while (text.length > 1000 && evidence.length > 1) {
    evidence.shift();
    text = clean(`${head}; evidence: ${evidence.join(' | ')}`);
  }
  return text.length > 1000 ? `${text.slice(0, 999)}…` : text;
}

const trim = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
/* eslint-disable-next-line no-control-regex */
export const clean = (s: string): string => s.replace(/[\u0000-\u001f\u007f]+/g, ' ');
export const isoOrNever = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : 'never');

/** "10m", "1h", "90s", "1h30m". */
export function shortDuration(ms: number): string {
  if (ms % 86_400_000 === 0 && ms >= 86_400_000) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0 && ms >= 3_600_000) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms >= 60_000) return ms >= 3_600_000 ? `${Math.floor(ms / 3_600_000)}h${(ms % 3_600_000) / 60_000}m` : `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
