// The tree inside the tarball (its layout is in docs/deploy.md and /work's decisions: helper flink
// ships exactly this): one top-level folder whose name never changes, so paths in Flink's
// configuration survive an upgrade.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { linkTree, must } = require('./cache');

const TOP = 'flink-yarn-blocklist';

function layout(root, version, platform) {
  const dir = path.join(root, 'release');
  const name = `flink-yarn-blocklist-${version}-${platform}`;
  return { dir, name, top: TOP, tarball: path.join(dir, `${name}.tar.gz`), sha256: path.join(dir, `${name}.tar.gz.sha256`), stamp: path.join(dir, `.${name}.stamp`) };
}

// bin/blocklist of the release: the CLI on the Node.js beside it, whatever `node` the host has (or not).
const LAUNCHER = `#!/bin/sh
# The blocklist CLI and sidecar on the Node.js runtime bundled in this release (node/bin/node).
# BLOCKLIST_NODE_OPTIONS: flags for that runtime (V8 heap limits, as scripts/launch-in-am.sh sets).
self="$(readlink -f -- "$0")"
home="$(dirname -- "$(dirname -- "$self")")"
# shellcheck disable=SC2086 # the options are words, split on purpose
exec "$home/node/bin/node" \${BLOCKLIST_NODE_OPTIONS:-} "$home/bin/blocklist.js" "$@"
`;

/** Fills a fresh folder with the release's tree; returns it ({dir, home}). */
function stageTree(root, out, { pkg, runtime, node, modules }) {
  fs.mkdirSync(out.dir, { recursive: true });
  const dir = fs.mkdtempSync(path.join(out.dir, '.stage-'));
  const home = path.join(dir, TOP);
  fs.mkdirSync(path.join(home, 'bin'), { recursive: true });
  compile(root, home);
  fs.copyFileSync(path.join(root, 'bin', 'blocklist'), path.join(home, 'bin', 'blocklist.js'));
  fs.writeFileSync(path.join(home, 'bin', 'blocklist'), LAUNCHER, { mode: 0o755 });
  for (const sub of ['console', 'conf', 'deploy/flink']) copyIfThere(path.join(root, sub), path.join(home, sub));
  fs.mkdirSync(path.join(home, 'scripts'));
  fs.copyFileSync(path.join(root, 'scripts', 'launch-in-am.sh'), path.join(home, 'scripts', 'launch-in-am.sh'));
  fs.chmodSync(path.join(home, 'scripts', 'launch-in-am.sh'), 0o755);
  copyIfThere(path.join(root, 'docs', 'deploy.md'), path.join(home, 'DEPLOY.md'));
  fs.mkdirSync(path.join(home, 'node', 'bin'), { recursive: true });
  linkTree(path.join(node, 'bin', 'node'), path.join(home, 'node', 'bin', 'node'));
  fs.copyFileSync(path.join(node, 'LICENSE'), path.join(home, 'node', 'LICENSE'));
  linkTree(path.join(modules, 'node_modules'), path.join(home, 'node_modules'));
  const { name, version, description, license, dependencies, optionalDependencies } = pkg;
  fs.writeFileSync(path.join(home, 'package.json'), JSON.stringify({ name, version, description, license, private: true, bin: { blocklist: 'bin/blocklist' }, dependencies, optionalDependencies }, null, 2) + '\n');
  fs.writeFileSync(path.join(home, 'build-info.json'), JSON.stringify(buildInfo(root, pkg, runtime), null, 2) + '\n');
  return { dir, home };
}

/** The shipped code only (tsconfig.build.json), compiled straight into the release tree, no source maps. */
function compile(root, home) {
  const info = path.join(home, '.tsbuildinfo');
  must(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json', '--outDir', path.join(home, 'dist'), '--sourceMap', 'false', '--tsBuildInfoFile', info], { cwd: root });
  fs.rmSync(info, { force: true });
}

/** What `blocklist version` reports besides the running runtime: what this release was built from. */
function buildInfo(root, pkg, runtime) {
  const pom = fs.readFileSync(path.join(root, 'am-proxy', 'pom.xml'), 'utf8');
  const interceptor = /<artifactId>am-proxy-parent<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(pom);
  return { product: pkg.version, runtime: `${runtime.package}@${runtime.version}`, node: `v${runtime.version}`, interceptor: interceptor ? interceptor[1] : 'unknown', platform: 'linux-x64' };
}

function copyIfThere(from, to) {
  if (fs.existsSync(from)) fs.cpSync(from, to, { recursive: true });
}

module.exports = { layout, stageTree, TOP };
