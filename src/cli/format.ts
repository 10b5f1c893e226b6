/**
 * Terminal output: colours (only on a TTY, never with NO_COLOR or TERM=dumb), aligned tables,
 * human times ("in 42m", "never"), and the -o json|yaml switch. Pure apart from reading
 * process.stdout/env in `useColor`.
 */
import YAML from 'yaml';
import { humanizeMs } from '../model/duration';
import { LONG_MAX_TEXT } from '../model/item';

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name';

export function useColor(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env, flag?: boolean): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  return !!stream.isTTY;
}

export interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const sgr = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const plain = (s: string) => s;

export function paint(on: boolean): Paint {
  return on
    ? { bold: sgr('1'), dim: sgr('2'), red: sgr('31'), green: sgr('32'), yellow: sgr('33'), cyan: sgr('36') }
    : { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
export const visibleWidth = (s: string): number => [...s.replace(ANSI, '')].length;

/** Left-aligned columns separated by two spaces (kubectl style); cells may carry colour codes. */
export function table(header: string[], rows: string[][], p: Paint): string {
  const widths = header.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - visibleWidth(c))))
      .join('  ')
      .trimEnd();
  return [p.bold(line(header)), ...rows.map(line)].join('\n') + '\n';
}

/** Epoch ms from the wire's string of digits; Long.MAX (permanent) becomes Infinity. */
export function wireMs(ts: string | number | undefined): number {
  if (ts === undefined) return NaN;
  if (ts === LONG_MAX_TEXT || (typeof ts === 'number' && ts >= 2 ** 63)) return Infinity;
  return Number(ts);
}

/** ISO 8601 in UTC to the second: "2026-12-01T06:00:00Z"; "never" for permanent. */
export function isoTime(ms: number): string {
  if (!Number.isFinite(ms)) return 'never';
  // Display only: seconds are enough to read; the wire and -o json keep the exact milliseconds.
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** "in 42m" / "5m ago" / "never". */
export function relative(ms: number, now: number): string {
  if (!Number.isFinite(ms)) return 'never';
  const d = ms - now;
  return d >= 0 ? `in ${humanizeMs(d)}` : `${humanizeMs(-d)} ago`;
}

/** "42m" since a past instant. */
export function age(ms: number, now: number): string {
  return Number.isFinite(ms) ? humanizeMs(Math.max(0, now - ms)) : '-';
}

/** Seconds as the CLI shows a timeout: "10m", "forever", "0s (at once)". */
export function timeoutText(seconds: number | undefined): string {
  if (seconds === undefined) return 'default';
  if (seconds < 0) return 'forever';
  if (seconds === 0) return 'at once';
  return humanizeMs(seconds * 1000);
}

export function shortAction(action: string): string {
  return action === 'MARK_BLOCKED_AND_EVACUATE_TASKS' ? 'EVACUATE' : action === 'MARK_BLOCKED' ? 'BLOCK' : action;
}

export function toJson(v: unknown): string {
  return JSON.stringify(v, null, 2) + '\n';
}

export function toYaml(v: unknown): string {
  return YAML.stringify(v);
}

/** Truncates to n visible characters with an ellipsis (table cells only; -o wide shows all). */
export function clip(s: string, n: number): string {
  const chars = [...s];
  return chars.length <= n ? s : chars.slice(0, n - 1).join('') + '…';
}
