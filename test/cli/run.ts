/**
 * Runs the real `blocklist` executable as a child process (never in-process: exit codes, stdout
 * and stderr are what an operator gets). Async, so a sidecar in the test process keeps serving.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { cliMain, tempDir } from '../support/paths';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A HOME with no CLI config file, so a developer's ~/.config never leaks into a test. */
const home = tempDir('blocklist-cli-home-');

export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), LANG: 'C.UTF-8' };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function runCli(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cliMain, ...args],
      { env: cliEnv(opts.env), cwd: opts.cwd ?? home, timeout: opts.timeoutMs ?? 20_000, maxBuffer: 10 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err && typeof (err as { code?: unknown }).code !== 'number') return reject(err);
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Fails with the whole output when the exit code is not the expected one. */
export function expectCode(r: CliResult, code: number, what: string): CliResult {
  if (r.code !== code) throw new Error(`${what}: exit ${r.code}, expected ${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}
