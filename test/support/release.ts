/**
 * The release tarball (`npm run dist`) as the suites use it: built when stale, unpacked the way YARN
 * unpacks a `yarn.ship-archives` entry, and a PATH that has no `node` on it (a NodeManager host
 * needs none). The Flink-on-YARN rig ships the same file (releaseTarball()).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { repoRoot, tempDir } from './paths';

/** The top-level folder of the tarball (scripts/release/stage.js). */
export const RELEASE_TOP = 'flink-yarn-blocklist';

/** The tarball's absolute path; builds it first when any of its inputs changed. */
export function releaseTarball(): string {
  return execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'dist.js'), '--print-path'], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

export interface Unpacked {
  /** The release's home: <dir>/flink-yarn-blocklist. */
  home: string;
  /** Wall time of the unpack with tar, as a NodeManager's localizer runs it. */
  unpackMs: number;
}

/** Unpacks `tarball` into a fresh folder (or `into`). */
export function unpackRelease(tarball: string, into: string = tempDir('blocklist-release-')): Unpacked {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('tar', ['-xzf', tarball, '-C', into], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tar -xzf ${tarball}: ${r.stderr}`);
  return { home: path.join(into, RELEASE_TOP), unpackMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

/**
 * A folder of symbolic links to the few host tools the release's shell scripts call, and nothing
 * else: with PATH set to it, a script that reached for a `node` of the host would fail.
 */
export function pathWithoutNode(): string {
  const dir = tempDir('blocklist-path-');
  for (const tool of ['bash', 'sh', 'dirname', 'readlink', 'sleep', 'cat', 'tar', 'gzip', 'env']) {
    const found = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((f) => fs.existsSync(f));
    if (found) fs.symlinkSync(found, path.join(dir, tool));
  }
  return dir;
}
