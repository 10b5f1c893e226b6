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

/** A fresh temporary folder (here, not in sidecar.ts, so pure tests need not load the sidecar). */
export function tempDir(prefix = 'blocklist-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
