/**
 * What the dashboard's and the alert rules' expressions read: the metric names in a PromQL
 * expression (not functions, aggregations, keywords, label names or Grafana's variables). A
 * tokenizer of PromQL's lexical rules, enough for names; promtool checks the syntax itself.
 */

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'offset', 'bool', 'inf', 'nan', 'atan2']);

/** Grafana's variables as a query sees them after interpolation (a range, a regex that matches all). */
export function interpolate(expr: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$\{?[A-Za-z_]\w*\}?/g, '.*');
}

export function metricNames(expr: string): string[] {
  const s = interpolate(expr)
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""') // strings
    .replace(/#[^\n]*/g, ' ') // comments (after the strings, which may hold a '#')
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges and subqueries
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/(^|[^\w:])\d[\w.]*/g, '$1 '); // numbers and durations (5m, 0.99, 1e3)
  const names = new Set<string>();
  for (const m of s.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const rest = s.slice((m.index ?? 0) + m[0].length);
    if (/^\s*\(/.test(rest) || KEYWORDS.has(m[0].toLowerCase())) continue; // a function or an aggregation
    names.add(m[0]);
  }
  return [...names].sort();
}

/** The names a /metrics text exposes, with a histogram's and a summary's own series names. */
export function exposedNames(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
    const [, name, type] = m;
    out.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) out.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) out.add(name + s);
  }
  return out;
}
