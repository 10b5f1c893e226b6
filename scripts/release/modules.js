// The tarball's node_modules: production dependencies only (`npm ci --omit=dev` from the lockfile),
// native ones (better-sqlite3, kerberos when MIT Kerberos' headers are there) compiled from source
// by node-gyp against the bundled runtime's own headers, never a prebuilt binary from elsewhere.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { cacheRoot, cached, must, sha256 } = require('./cache');

/** krb5-config on PATH: the optional `kerberos` package can be built (docs/security.md). */
const kerberosBuildable = () => spawnSync('krb5-config', ['--version']).status === 0;

/** A folder holding node_modules/ built for the runtime in `nodeDir`; cached by its inputs. */
function productionModules(root, nodeDir, log) {
  const pkgText = fs.readFileSync(path.join(root, 'package.json'), 'utf8');
  const lock = fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8');
  const nodeBin = path.join(nodeDir, 'bin', 'node');
  const nodeVersion = must(nodeBin, ['--version']).trim();
  const withKerberos = kerberosBuildable();
  const pkg = JSON.parse(pkgText);
  const key = sha256(JSON.stringify([pkg.dependencies, pkg.optionalDependencies, pkg.overrides, lock, nodeVersion, withKerberos, process.arch])).slice(0, 16);
  return cached(path.join(cacheRoot(), `modules-${key}`), (tmp) => {
    log(`installing production node_modules for Node ${nodeVersion}${withKerberos ? ' (with kerberos)' : ' (no krb5-config: kerberos left out)'}; native modules compile from source`);
    const t0 = Date.now();
    // No scripts of our own (prepare would compile the tree); the lockfile stays whole so npm ci accepts it.
    const { scripts: _scripts, ...bare } = pkg;
    fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify(bare, null, 2));
    fs.writeFileSync(path.join(tmp, 'package-lock.json'), lock);
    must('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: tmp,
      env: {
        ...process.env,
        // npm and node-gyp run on the bundled runtime, and node-gyp takes its headers from it.
        PATH: `${path.join(nodeDir, 'bin')}${path.delimiter}${process.env.PATH}`,
        npm_config_nodedir: nodeDir,
        npm_config_build_from_source: 'true',
        npm_config_update_notifier: 'false',
        JOBS: String(require('node:os').availableParallelism()),
      },
    });
    pruneBuildLeftovers(path.join(tmp, 'node_modules'));
    checkNative(nodeBin, tmp, withKerberos);
    log(`production node_modules ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });
}

/** What only the compiler needed (sources, object files): only the .node binaries are loaded. */
function pruneBuildLeftovers(modules) {
  for (const name of ['better-sqlite3', 'kerberos']) {
    const dir = path.join(modules, name);
    if (!fs.existsSync(dir)) continue;
    for (const sub of ['deps', 'src', 'build/Release/obj.target', 'build/Release/.deps', 'build/deps', 'build/Release/obj', 'build/Release/test_extension.node']) {
      fs.rmSync(path.join(dir, sub), { recursive: true, force: true });
    }
  }
}

/** The bundled runtime loads every native module it will need (an ABI mismatch shows here, not in a container). */
function checkNative(nodeBin, dir, withKerberos) {
  const probe = `const D=require('better-sqlite3');const d=new D(':memory:');d.prepare('select 1').get();d.close();${withKerberos ? "require('kerberos');" : ''}`;
  must(nodeBin, ['-e', probe], { cwd: dir });
  if (withKerberos && !fs.existsSync(path.join(dir, 'node_modules', 'kerberos'))) throw new Error('krb5-config is present but the kerberos package was not built');
}

module.exports = { productionModules, kerberosBuildable };
