/**
 * One benchmark figure next to the limit measured in the same run. The ratio is what the goals
 * are written against (docs/benchmarks.md): absolute times on a shared 2-core machine mean little, but
 * "p99 is 3× one loopback round trip plus one fsync'd commit" travels between machines.
 */
export interface Row {
  section: string;
  figure: string;
  /** The measured value, in `unit`. */
  value: number;
  unit: string;
  /** The limit it is compared to, in `limitUnit` (usually the same unit). */
  limit: number;
  limitUnit: string;
  /** How the limit was obtained, in a few words. */
  limitWhat: string;
  /** value / limit (or limit / value for rates: always "how the figure compares", see `goal`). */
  ratio: number;
  /** The goal in words, e.g. "≤ 5×". */
  goal: string;
  /** undefined = no goal for this row (context only). */
  met: boolean | undefined;
  note?: string;
}

/** The design's memory budget for a sidecar holding 100,000 items (MB). */
export const RSS_BUDGET_MB = 250;

/** A latency figure (ms) against the 100 ms goal of an answer while the sidecar is busy. */
export function latencyGoalRow(section: string, figure: string, ms: number, note?: string): Row {
  return { section, figure, value: ms, unit: 'ms', limit: 100, limitUnit: 'ms', limitWhat: 'the 100 ms goal', ratio: ms / 100, goal: '≤ 100 ms (≤ 1×)', met: ms <= 100, ...(note ? { note } : {}) };
}

/** A resident-memory figure (MB) against RSS_BUDGET_MB. */
export function rssBudgetRow(section: string, figure: string, mb: number): Row {
  return { section, figure, value: mb, unit: 'MB', limit: RSS_BUDGET_MB, limitUnit: 'MB', limitWhat: `the ${RSS_BUDGET_MB} MB budget`, ratio: mb / RSS_BUDGET_MB, goal: `≤ ${RSS_BUDGET_MB} MB (≤ 1×)`, met: mb <= RSS_BUDGET_MB };
}

/** A section that could not run here (e.g. no ZooKeeper), with the reason. */
export interface Skipped {
  section: string;
  figure: string;
  reason: string;
}

export interface SectionResult {
  rows: Row[];
  skipped: Skipped[];
  /** Free-form lines printed under the table (sample counts, settings). */
  notes: string[];
}

export const emptyResult = (): SectionResult => ({ rows: [], skipped: [], notes: [] });

export function fmt(v: number, unit: string): string {
  if (!Number.isFinite(v)) return String(v);
  const abs = Math.abs(v);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return `${v.toFixed(digits)} ${unit}`.trim();
}

const metText = (m: boolean | undefined): string => (m === undefined ? '–' : m ? 'yes' : '**no**');

/** The table of docs/benchmarks.md: figure, limit, ratio, goal, met. */
export function markdownTable(rows: readonly Row[], skipped: readonly Skipped[]): string {
  const out = ['| section | figure | value | limit (same run) | ratio | goal | met |', '|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    const limit = `${fmt(r.limit, r.limitUnit)} (${r.limitWhat})`;
    out.push(`| ${r.section} | ${r.figure}${r.note ? ` — ${r.note}` : ''} | ${fmt(r.value, r.unit)} | ${limit} | ${r.ratio.toFixed(2)}× | ${r.goal} | ${metText(r.met)} |`);
  }
  for (const s of skipped) out.push(`| ${s.section} | ${s.figure} | skipped | – | – | – | skipped: ${s.reason} |`);
  return out.join('\n');
}
