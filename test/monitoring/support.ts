/** promtool (Debian's `prometheus` package; scripts/ensure-promtool.sh installs it in CI) and the deploy/ files. */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { repoRoot } from '../support/paths';

export const PROMETHEUS_DIR = path.join(repoRoot, 'deploy', 'prometheus');
export const RULES_FILE = path.join(PROMETHEUS_DIR, 'blocklist-alerts.yml');
export const RULES_TEST_FILE = path.join(PROMETHEUS_DIR, 'blocklist-alerts.test.yml');
export const DASHBOARD_FILE = path.join(repoRoot, 'deploy', 'grafana', 'flink-yarn-blocklist.json');

/** Skips without promtool outside CI; in CI its absence fails the suite. */
export function requirePromtool(ctx: Mocha.Context): void {
  const r = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  if (!r.error && r.status === 0) return;
  if (process.env.CI === 'true') throw new Error('promtool is missing in CI (scripts/ensure-promtool.sh installs Debian prometheus)');
  console.log('      (skipped: promtool not installed; apt-get install prometheus)');
  ctx.skip();
}

export function promtool(args: string[], cwd = PROMETHEUS_DIR): { ok: boolean; output: string } {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8', timeout: 60_000 });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export function alertRules(): AlertRule[] {
  const doc = parse(fs.readFileSync(RULES_FILE, 'utf8')) as { groups: { rules: AlertRule[] }[] };
  return doc.groups.flatMap((g) => g.rules);
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string; refId: string }[];
  gridPos: { x: number; y: number; w: number; h: number };
}

export function dashboard(): { uid: string; title: string; panels: DashboardPanel[]; templating: { list: { name: string; query?: unknown }[] } } {
  return JSON.parse(fs.readFileSync(DASHBOARD_FILE, 'utf8'));
}
