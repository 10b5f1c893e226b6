/**
 * The evacuation launcher of am-proxy (EvacuationLauncher: a Flink MiniCluster whose task managers
 * are released as YARN would, a checkpointed streaming job that counts its replays, optionally a
 * running batch job), started per use with a handle for its stdin commands. For test/real/ and the
 * evacuation-flink bench.
 */
import { spawn, ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FLINK_LAUNCHERS, FlinkLine } from './real-flink';
import { repoRoot } from './paths';

export interface EvacuationFlink {
  rest: string;
  stream: string;
  batch?: string;
  flinkVersion: string;
  taskManagers: string[];
  log: string;
  /** Sends a command and waits for its answer (the line carrying `key`). */
  send(command: string, key: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The launcher's next line carrying `key` (a replacement's `started`). */
  next(key: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export interface EvacuationFlinkOptions {
  tms?: number;
  slots?: number;
  parallelism?: number;
  intervalMs?: number;
  sleepMs?: number;
  replaceMs?: number;
  batch?: boolean;
}

export async function startEvacuationFlink(line: FlinkLine, o: EvacuationFlinkOptions = {}): Promise<EvacuationFlink> {
  const t = path.join(repoRoot, 'am-proxy', FLINK_LAUNCHERS[line], 'target');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-evac-flink-'));
  const log = path.join(dir, 'launcher.log');
  const cp = [path.join(t, 'classes'), fs.readFileSync(path.join(t, 'runtime-classpath.txt'), 'utf8').trim()].join(path.delimiter);
  const args = ['-Xmx512m', '-XX:TieredStopAtLevel=1', `-Djava.io.tmpdir=${dir}`, '-cp', cp, 'io.github.flinkyarnblocklist.flink.EvacuationLauncher'];
  const num = (k: string, v: number | undefined): string[] => (v !== undefined ? [k, String(v)] : []);
  args.push(...num('--tms', o.tms), ...num('--slots', o.slots), ...num('--parallelism', o.parallelism), ...num('--interval-ms', o.intervalMs), ...num('--sleep-ms', o.sleepMs), ...num('--replace-ms', o.replaceMs), ...(o.batch ? ['--batch'] : []));
  const proc = spawn('java', args, { stdio: ['pipe', 'pipe', fs.openSync(log, 'a')], cwd: dir });
  const lines = new LineQueue(proc);
  const stop = async (): Promise<void> => {
    proc.stdin?.end();
    await new Promise<void>((resolve) => {
      const t2 = setTimeout(() => (proc.kill('SIGKILL'), resolve()), 15_000);
      proc.once('exit', () => (clearTimeout(t2), resolve()));
      if (proc.exitCode !== null) resolve();
    });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', () => proc.kill('SIGKILL'));
  const ready = await lines.next('rest', 180_000).catch((e: Error) => {
    throw new Error(`${e.message}\n--- ${log} (tail) ---\n${tail(log)}`);
  });
  return {
    ...(ready as Omit<EvacuationFlink, 'log' | 'send' | 'next' | 'stop'>),
    log,
    send(command, key, timeoutMs = 20_000) {
      proc.stdin?.write(`${command}\n`);
      return lines.next(key, timeoutMs);
    },
    next: (key, timeoutMs = 20_000) => lines.next(key, timeoutMs),
    stop,
  };
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '';
  }
}

/** The launcher's JSON lines, taken by the key they carry. */
class LineQueue {
  private buffer = '';
  private readonly seen: Record<string, unknown>[] = [];
  private readonly waiting: { key: string; resolve: (o: Record<string, unknown>) => void }[] = [];

  constructor(proc: ChildProcess) {
    proc.stdout?.setEncoding('utf8');
    proc.stdout?.on('data', (d: string) => {
      this.buffer += d;
      for (let nl = this.buffer.indexOf('\n'); nl >= 0; nl = this.buffer.indexOf('\n')) {
        const text = this.buffer.slice(0, nl).trim();
        this.buffer = this.buffer.slice(nl + 1);
        if (text.startsWith('{')) this.take(JSON.parse(text) as Record<string, unknown>);
      }
    });
  }

  next(key: string, timeoutMs: number): Promise<Record<string, unknown>> {
    const at = this.seen.findIndex((o) => key in o);
    if (at >= 0) return Promise.resolve(this.seen.splice(at, 1)[0]);
    return new Promise((resolve, reject) => {
      const w = { key, resolve: (o: Record<string, unknown>) => (clearTimeout(timer), resolve(o)) };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(w), 1);
        reject(new Error(`the evacuation launcher said nothing with "${key}" within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiting.push(w);
    });
  }

  private take(o: Record<string, unknown>): void {
    const w = this.waiting.findIndex((x) => x.key in o);
    if (w >= 0) this.waiting.splice(w, 1)[0].resolve(o);
    else this.seen.push(o);
  }
}
