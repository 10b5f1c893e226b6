/** Small measurement helpers: high-resolution time, percentiles, CPU time. */
import { performance } from 'node:perf_hooks';

export const now = (): number => performance.now();

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1];
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? NaN : samples.reduce((a, b) => a + b, 0) / samples.length;
}

/** CPU time (user + system) of this process in ms; counts only work done, not waiting. */
export function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` n times and returns each wall time in ms. */
export async function timeEach(n: number, fn: (i: number) => Promise<unknown> | unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    await fn(i);
    out.push(now() - t0);
  }
  return out;
}

/** Resolves when `cond()` holds, polling every `everyMs`; rejects after `timeoutMs` (loops always end). */
export async function until(cond: () => boolean, timeoutMs: number, what: string, everyMs = 1): Promise<void> {
  const end = now() + timeoutMs;
  while (!cond()) {
    if (now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
