#!/usr/bin/env node
// The whole test suite: type-check and build, start what the suites need, run mocha.
// `npm test -- <mocha args>` passes args through (e.g. a single file: dist/test/model/merge.test.js).
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });

const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const tsc = run(bin('tsc'), ['-p', 'tsconfig.json']);
if (tsc.status !== 0) {
  console.log('\n0 passed, 1 failed  (type check failed: fix the errors above)');
  process.exit(1);
}

// Real parts the suites need, installed from Debian's packages when CI=true (scripts/ensure-*.sh,
// each a call of scripts/ensure-debian-packages.sh). Outside CI a missing part only skips its suites.
const REAL_PARTS = [
  ['ensure-zookeeper.sh', 'ZooKeeper'],
  ['ensure-promtool.sh', 'promtool'],
  ['ensure-kerberos.sh', 'Kerberos (MIT KDC, httpd + mod_auth_gssapi, the kerberos npm package)'],
  ['ensure-chromium.sh', 'chromium (the console\'s browser suite)'],
];
for (const [script, what] of REAL_PARTS) {
  const file = path.join(root, 'scripts', script);
  if (!fs.existsSync(file)) continue;
  const r = run('bash', [file]);
  if (r.status !== 0 && process.env.CI === 'true') {
    console.log(`\n0 passed, 1 failed  (${what} could not be installed)`);
    process.exit(1);
  }
}

// The Java module (am-proxy/: the AMRMProxy interceptor and the real-YARN/real-Flink launchers):
// a JDK and Maven from Debian when missing (scripts/ensure-java.sh), then a Maven build. The real
// suites (test/real/) skip when it is missing; in CI that fails the run.
const ensureJava = path.join(root, 'scripts', 'ensure-java.sh');
if (fs.existsSync(ensureJava)) {
  let ok = run('bash', [ensureJava]).status === 0;
  if (ok) ok = run('bash', [path.join(root, 'scripts', 'build-am-proxy.sh')]).status === 0;
  if (!ok && process.env.CI === 'true') {
    console.log('\n0 passed, 1 failed  (the Java module could not be built: JDK, Maven or a Java unit test)');
    process.exit(1);
  }
}

const stats = path.join(os.tmpdir(), `blocklist-test-stats-${process.pid}.json`);
const args = process.argv.slice(2);
const mocha = run(bin('mocha'), ['--config', '.mocharc.json', ...args], {
  env: { ...process.env, BLOCKLIST_TEST_STATS: stats },
});
let failed = mocha.status === 0 ? 0 : 1;
try {
  const s = JSON.parse(fs.readFileSync(stats, 'utf8'));
  failed = s.failures > 0 || mocha.status !== 0 ? 1 : 0;
  fs.unlinkSync(stats);
} catch {
  failed = 1; // the reporter never finished: treat as failure
}
process.exit(failed);
