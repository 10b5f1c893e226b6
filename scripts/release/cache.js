// Where `npm run dist` keeps what it can reuse across runs (the runtime package, production
// node_modules), and the small helpers its steps share.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

function cacheRoot() {
  const base = process.env.BLOCKLIST_DIST_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'flink-yarn-blocklist', 'dist');
  fs.mkdirSync(base, { recursive: true });
  return base;
}

const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

/** A command that must succeed; its output is shown only when it fails. */
function must(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1048576, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}\n${(r.stdout || '').slice(-4000)}${(r.stderr || '').slice(-4000)}`);
  return r.stdout;
}

/**
 * Fills a cache entry once: `make(tmp)` builds into a fresh temporary folder that becomes `dir`
 * only when it finished, so a build that died half-way is never taken for a good one.
 */
function cached(dir, make) {
  if (fs.existsSync(path.join(dir, '.complete'))) return dir;
  const tmp = fs.mkdtempSync(`${dir}.tmp-`);
  try {
    make(tmp);
    fs.writeFileSync(path.join(tmp, '.complete'), '');
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/** Hard links when the cache and the target share a file system (no copy of ~150 MB), else a copy. */
function linkTree(from, to) {
  const r = spawnSync('cp', ['-al', from, to]);
  if (r.status !== 0) {
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
}

module.exports = { cacheRoot, cached, linkTree, must, sha256 };
