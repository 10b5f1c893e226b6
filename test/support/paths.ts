/**
 * Where things are when tests run from compiled output: `distRoot` is the tsc outDir (dist/ for
 * `npm test`, any other folder for a private build), `repoRoot` is the checkout (cwd by default).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export const distRoot = path.resolve(__dirname, '..', '..');
export const repoRoot = process.env.BLOCKLIST_REPO_ROOT ?? process.cwd();
/** The compiled `blocklist` executable's entry point. */
export const cliMain = path.join(distRoot, 'src', 'cli', 'main.js');

const made: string[] = [];

/**
 * A fresh temporary folder, removed when the test process exits (a full run made about 120 and
 * left them all in /tmp). Here, not in sidecar.ts, so pure tests need not load the sidecar.
 */
export function tempDir(prefix = 'blocklist-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  if (made.push(dir) === 1) process.once('exit', removeTempDirs);
  return dir;
}

/** Best effort: a throw in an exit handler would change the run's exit status. */
function removeTempDirs(): void {
  for (const dir of made) {
    try {
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch (e) {
      console.error(`could not remove the test's temp dir ${dir}: ${(e as Error).message}`);
    }
  }
}
