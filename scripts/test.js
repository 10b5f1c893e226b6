#!/usr/bin/env node
// The test suite: type-check and build, check the layering rule, start what the suites need, run
// the two lanes, and print ONE closing line `N passed, N failed` that covers everything run.
//
//   node scripts/test.js                 layering + unit lane + integration lane (npm test)
//   node scripts/test.js unit            the unit lane only: dist/test/**/*.unit.test.js (npm run test:unit)
//   node scripts/test.js integration     every other *.test.js (npm run test:integration)
//   node scripts/test.js -- <mocha args> mocha on what you name, e.g. dist/test/model/merge.unit.test.js
//
// With CI=true a skipped test counts as failed (test/support/reporter.ts) and so does a lane that
// ran no test at all.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ci = process.env.CI === 'true';
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const seconds = (t0) => ((Date.now() - t0) / 1000).toFixed(1);

const UNIT = 'dist/test/**/*.unit.test.js';
const ALL = 'dist/test/**/*.test.js';

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
const mochaArgs = sep >= 0 ? argv.slice(sep + 1) : [];
const words = sep >= 0 ? argv.slice(0, sep) : argv;
// `npm test -- dist/test/x.test.js` (no lane word) still runs just what is named.
const mode = words[0] === 'unit' || words[0] === 'integration' ? words[0] : words.length ? 'files' : mochaArgs.length ? 'files' : 'all';
const named = mode === 'files' ? [...words, ...mochaArgs] : mochaArgs;

function finish(passed, failed, why) {
  console.log(`\n${passed} passed, ${failed} failed${why ? `  (${why})` : ''}`);
  process.exit(failed > 0 ? 1 : 0);
}

const tsc = run(bin('tsc'), ['-p', 'tsconfig.json']);
if (tsc.status !== 0) finish(0, 1, 'type check failed: fix the errors above');

// A renamed or deleted test leaves its old .js in dist/, which the globs would still run: drop
// every compiled test file whose source is gone.
(function pruneStale(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) pruneStale(p);
    else if (/\.js$/.test(e.name)) {
      const src = path.join(root, path.relative(path.join(root, 'dist'), p)).replace(/\.js$/, '.ts');
      if (!fs.existsSync(src)) for (const f of [p, `${p}.map`]) fs.rmSync(f, { force: true });
    }
  }
})(path.join(root, 'dist', 'test'));

let passed = 0;
let failed = 0;

if (mode === 'all') {
  // The layering rule (.dependency-cruiser.cjs, docs/architecture.md): imports in src/ point down.
  const t0 = Date.now();
  const dc = run(bin('depcruise'), ['src', 'test', 'bench', '--config', '.dependency-cruiser.cjs', '--output-type', 'err-long']);
  console.log(`layering check: ${dc.status === 0 ? 'ok' : 'FAILED'} (${seconds(t0)} s)`);
  if (dc.status === 0) passed++;
  else failed++;
}

if (mode !== 'unit') {
  // Real parts the suites need, installed from Debian's packages when CI=true (scripts/ensure-*.sh,
  // each a call of scripts/ensure-debian-packages.sh). Outside CI a missing part only skips its suites.
  const REAL_PARTS = [
    ['ensure-zookeeper.sh', 'ZooKeeper'],
    ['ensure-promtool.sh', 'promtool'],
    ['ensure-kerberos.sh', 'Kerberos (MIT KDC, httpd + mod_auth_gssapi, the kerberos npm package)'],
    ['ensure-chromium.sh', 'chromium (the console\'s browser suite)'],
    ['ensure-compose.sh', 'a Compose client (docker-compose.yml validated by `docker-compose config`)'],
  ];
  for (const [script, what] of REAL_PARTS) {
    const file = path.join(root, 'scripts', script);
    if (!fs.existsSync(file)) continue;
    const r = run('bash', [file]);
    if (r.status !== 0 && ci) finish(passed, failed + 1, `${what} could not be installed`);
  }
  // The Java module (am-proxy/: the AMRMProxy interceptor and the real-YARN/real-Flink launchers):
  // a JDK and Maven from Debian when missing (scripts/ensure-java.sh), then a Maven build. The real
  // suites (test/real/) skip when it is missing; in CI that fails the run.
  const ensureJava = path.join(root, 'scripts', 'ensure-java.sh');
  // Running named files: only when one of them is a real suite (the build takes a minute).
  const wantJava = mode !== 'files' || named.some((f) => f.includes('test/real/'));
  if (wantJava && fs.existsSync(ensureJava)) {
    let ok = run('bash', [ensureJava]).status === 0;
    if (ok) ok = run('bash', [path.join(root, 'scripts', 'build-am-proxy.sh')]).status === 0;
    if (!ok && ci) finish(passed, failed + 1, 'the Java module could not be built: JDK, Maven or a Java unit test');
  }
}

// The release tarball (npm run dist; test/deploy/release.test.ts unpacks and runs it): built here,
// before the lanes, so its time shows apart (seconds warm; a fresh machine compiles better-sqlite3
// for the bundled runtime once, about two minutes).
if (mode === 'all' || mode === 'integration') {
  const t0 = Date.now();
  const r = run(process.execPath, [path.join(root, 'scripts', 'dist.js'), '--print-path'], { stdio: ['ignore', 'ignore', 'inherit'] });
  console.log(`release tarball: ${r.status === 0 ? 'ok' : 'FAILED'} (${seconds(t0)} s)`);
  if (r.status !== 0 && ci) finish(passed, failed + 1, 'npm run dist failed');
}

/** One mocha run; its counts come from the reporter through a stats file, not from its output. */
function lane(name, specs, extra, nodeBin) {
  const stats = path.join(os.tmpdir(), `blocklist-test-stats-${process.pid}-${name}.json`);
  const t0 = Date.now();
  const mocha = ['--config', '.mocharc.json', ...extra, ...specs];
  const r = run(nodeBin ?? bin('mocha'), nodeBin ? [path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), ...mocha] : mocha, {
    env: { ...process.env, BLOCKLIST_TEST_STATS: stats, BLOCKLIST_TEST_LANE: name },
  });
  let s;
  try {
    s = JSON.parse(fs.readFileSync(stats, 'utf8'));
    fs.unlinkSync(stats);
  } catch {
    s = { passes: 0, failures: 1, pending: 0, crashed: true }; // the reporter never finished
  }
  let f = s.failures;
  if (r.status !== 0 && f === 0) f = 1; // mocha itself failed (a load error, a crash)
  if (ci && s.passes + s.failures + s.pending === 0) f += 1; // a lane that ran nothing is not green in CI
  console.log(`${name} lane: ${s.passes} passing, ${f} failing${s.pending ? `, ${s.pending} pending` : ''} in ${seconds(t0)} s${s.crashed ? ' (mocha did not finish)' : ''}`);
  passed += s.passes;
  failed += f;
}

// Only options (say --grep x): over the whole suite.
if (mode === 'files') lane('selected', named.some((a) => a.endsWith('.js')) ? named : [ALL, ...named], []);
if (mode === 'unit' || mode === 'all') lane('unit', [UNIT], named);
if (mode === 'integration' || mode === 'all') lane('integration', [ALL], ['--ignore', UNIT, ...named]);
// Node.js 24, the release's runtime, when this machine's node is older: the unit lane again on the
// bundled runtime package (the tarball's smoke in test/deploy/release.test.ts already runs the
// sidecar, better-sqlite3 and the console on it). Seconds, and it keeps the code from using what
// only the older runtime has; the integration lane stays on one runtime to keep CI within its time.
if (mode === 'all' && Number(process.versions.node.split('.')[0]) < 24) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const runtime = pkg.distribution.runtimes[`${process.platform}-${process.arch}`];
  let node24;
  try {
    node24 = path.join(require('./release/runtime').runtimeDir(runtime, (m) => console.log(`node 24 lane: ${m}`)), 'bin', 'node');
  } catch (e) {
    console.log(`node 24 lane: no runtime (${e.message})`);
  }
  if (node24) lane(`unit (node ${runtime.version})`, [UNIT], named, node24);
  else if (ci) failed++;
}
finish(passed, failed);
