/**
 * A real Flink for the test/real/ suites, started once per mocha run: am-proxy's FlinkLauncher (built
 * by scripts/build-am-proxy.sh) runs a Flink MiniCluster (3 task managers, 1 slot each) with its
 * real REST endpoint on 127.0.0.1 and two jobs that fail on purpose in chosen subtasks ("doomed":
 * subtasks 0 and 2 until the restart strategy gives up, FAILED; "flaky": subtask 1 twice, then
 * RUNNING). It prints one JSON line when both are there; it stops when the test process exits.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startJavaLauncher } from './java-launcher';
import { repoRoot } from './paths';

const isCI = process.env.CI === 'true';
/** The launcher built against each Flink line (one source, two Maven modules). */
export const FLINK_LAUNCHERS = { '2.x': 'flink-launcher', '1.20': 'flink-launcher-1.20' } as const;
export type FlinkLine = keyof typeof FLINK_LAUNCHERS;
const target = (line: FlinkLine): string => path.join(repoRoot, 'am-proxy', FLINK_LAUNCHERS[line], 'target');

export interface RealFlink {
  rest: string;
  jobs: { flaky: string; doomed: string };
  flinkVersion: string;
  startupMs: number;
  log: string;
}

export function realFlinkUnavailableReason(line: FlinkLine): string | undefined {
  const j = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if (j.error || j.status !== 0) return 'no java on PATH (scripts/ensure-java.sh installs one)';
  for (const f of ['runtime-classpath.txt', 'classes']) {
    if (!fs.existsSync(path.join(target(line), f))) return `am-proxy/${FLINK_LAUNCHERS[line]}/target/${f} is missing (npm test builds it: scripts/build-am-proxy.sh)`;
  }
  return undefined;
}

export function requireRealFlink(ctx: Mocha.Context, line: FlinkLine): void {
  const why = realFlinkUnavailableReason(line);
  if (!why) return;
  if (isCI) throw new Error(`real-Flink suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

const started = new Map<FlinkLine, Promise<RealFlink>>();

/** The MiniCluster of one Flink line, started on first use and shared by every file. */
export function realFlink(line: FlinkLine): Promise<RealFlink> {
  let p = started.get(line);
  if (!p) {
    p = launch(line);
    started.set(line, p);
  }
  return p;
}

async function launch(line: FlinkLine): Promise<RealFlink> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-real-flink-'));
  const log = path.join(dir, 'launcher.log');
  const t = target(line);
  const cp = [path.join(t, 'classes'), fs.readFileSync(path.join(t, 'runtime-classpath.txt'), 'utf8').trim()].join(path.delimiter);
  const ready = await startJavaLauncher<Omit<RealFlink, 'log'>>({
    what: 'the Flink launcher',
    args: ['-Xmx512m', '-XX:TieredStopAtLevel=1', `-Djava.io.tmpdir=${dir}`, '-cp', cp, 'io.github.flinkyarnblocklist.flink.FlinkLauncher'],
    dir,
    log,
    timeoutMs: 150_000,
  });
  return { ...ready, log };
}
