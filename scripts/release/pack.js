// The tarball itself: reproducible (sorted names, owner 0, one mtime, gzip without a timestamp),
// written under a temporary name and renamed, with its SHA-256 beside it in `sha256sum -c` form.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { must, sha256 } = require('./cache');
const { kerberosBuildable } = require('./modules');

// Everything the tarball is made from; a change to any of them makes it stale.
const INPUTS = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'bin', 'src', 'console', 'conf', 'deploy/flink', 'docs/deploy.md', 'scripts/dist.js', 'scripts/release', 'scripts/launch-in-am.sh', 'am-proxy/pom.xml'];

function inputsStamp(root, runtime) {
  const parts = [JSON.stringify(runtime), String(kerberosBuildable()), process.arch];
  for (const file of INPUTS.flatMap((p) => filesUnder(path.join(root, p))).sort()) {
    parts.push(path.relative(root, file), sha256(fs.readFileSync(file)));
  }
  return sha256(parts.join('\n'));
}

function filesUnder(p) {
  if (!fs.existsSync(p)) return [];
  if (!fs.statSync(p).isDirectory()) return [p];
  return fs.readdirSync(p, { withFileTypes: true }).flatMap((e) => filesUnder(path.join(p, e.name)));
}

/** Fixed time for every entry: the last commit's, so two builds of one commit give one tarball. */
function entryTime(root) {
  if (process.env.SOURCE_DATE_EPOCH) return process.env.SOURCE_DATE_EPOCH;
  const r = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() ? r.stdout.trim() : String(Math.floor(Date.now() / 1000));
}

function packTarball(stage, out) {
  const tmp = `${out.tarball}.tmp`;
  must('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--hard-dereference', `--mtime=@${entryTime(path.dirname(out.dir))}`, '-I', 'gzip -n -6', '-cf', tmp, '-C', stage.dir, out.top]);
  const digest = sha256(fs.readFileSync(tmp));
  fs.renameSync(tmp, out.tarball);
  fs.writeFileSync(out.sha256, `${digest}  ${path.basename(out.tarball)}\n`);
  return { bytes: fs.statSync(out.tarball).size, sha256: digest };
}

module.exports = { inputsStamp, packTarball };
