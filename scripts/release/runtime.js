// The Node.js runtime of the tarball: the npm registry's node-<platform> package (bin/node and the
// include/node headers that node-gyp builds native modules against), fetched with `npm pack`,
// checked against the integrity pinned in package.json, unpacked once into the cache.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { cacheRoot, cached, must } = require('./cache');

/** The unpacked runtime package (bin/node, include/node, LICENSE) for `runtime` of package.json. */
function runtimeDir(runtime, log) {
  const dir = path.join(cacheRoot(), `${runtime.package}-${runtime.version}`);
  return cached(dir, (tmp) => {
    log(`fetching ${runtime.package}@${runtime.version} from the npm registry`);
    const packed = JSON.parse(must('npm', ['pack', `${runtime.package}@${runtime.version}`, '--json', '--pack-destination', tmp], { cwd: tmp }))[0];
    if (runtime.integrity && packed.integrity !== runtime.integrity) {
      throw new Error(`${runtime.package}@${runtime.version}: integrity ${packed.integrity} is not the pinned ${runtime.integrity}`);
    }
    must('tar', ['-xzf', path.join(tmp, packed.filename), '-C', tmp]);
    fs.rmSync(path.join(tmp, packed.filename));
    for (const e of fs.readdirSync(path.join(tmp, 'package'))) fs.renameSync(path.join(tmp, 'package', e), path.join(tmp, e));
    fs.rmdirSync(path.join(tmp, 'package'));
    const v = must(path.join(tmp, 'bin', 'node'), ['--version']).trim();
    if (v !== `v${runtime.version}`) throw new Error(`${runtime.package}@${runtime.version} runs as ${v}`);
    if (!fs.existsSync(path.join(tmp, 'include', 'node', 'common.gypi'))) throw new Error(`${runtime.package}@${runtime.version} has no include/node headers for node-gyp`);
  });
}

module.exports = { runtimeDir };
