/**
 * The YARN simulator in a process of its own, for the throughput bench: in production the AMRM
 * proxy lives in the AM, not in the sidecar, so its CPU (sorting and sending back the whole
 * blacklist on every update) must not be charged to the sidecar's event loop. Prints
 * {"url": "..."} on stdout once listening; exits when stdin closes (the parent died or is done).
 *
 *   node dist/bench/lib/sim-child.js '<SimulatorOptions as JSON>'
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { SimulatorOptions, startSimulator } from '../../src/sim/server';

export interface SimChild {
  url: string;
  close(): Promise<void>;
}

/** Starts the simulator child and waits for its URL (bounded). */
export function startSimChild(opts: SimulatorOptions): Promise<SimChild> {
  return new Promise((resolve, reject) => {
    const p: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'sim-child.js'), JSON.stringify(opts)], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error('simulator child did not start within 20 s'));
    }, 20_000);
    p.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      const url = (JSON.parse(line) as { url: string }).url;
      resolve({
        url,
        close: () =>
          new Promise<void>((done) => {
            if (p.exitCode !== null) return done();
            p.once('exit', () => done());
            p.stdin?.end();
          }),
      });
    });
    p.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`simulator child exited ${code}`));
    });
  });
}

if (require.main === module) {
  const opts = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions;
  startSimulator({ port: 0, seed: 7, tickMs: 0, ...opts }).then(
    (sim) => {
      process.stdout.write(JSON.stringify({ url: sim.url }) + '\n');
      process.stdin.resume();
      process.stdin.on('end', () => void sim.close().then(() => process.exit(0)));
    },
    (e: unknown) => {
      process.stderr.write(`${String(e)}\n`);
      process.exit(1);
    },
  );
}
