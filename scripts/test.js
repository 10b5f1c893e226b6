#!/usr/bin/env node
// The test suite: type-check and build, check the layering rule, start what the suites need, run
// the lanes, and print ONE closing line `N passed, N failed` that covers everything run.
//
//   node scripts/test.js                 layering + unit lane + integration lane (npm test)
//   node scripts/test.js unit            the unit lane only: dist/test/**/*.unit.test.js (npm run test:unit)
//   node scripts/test.js integration     every other *.test.js (npm run test:integration)
//   node scripts/test.js -- <mocha args> mocha on what you name, e.g. dist/test/model/merge.unit.test.js
//
// The integration lane is two mocha processes side by side, one per core: `cluster` runs the files
// that start a real YARN or Flink (CLUSTER_FILES: one such cluster at a time, as before), `rest`
// everything else. The builds (the Java module, the release tarball) run while the unit lane does.
// The end shows each phase's time and the slowest files.
//
// With CI=true a skipped test counts as failed (test/support/reporter.ts) and so does a lane that
// ran no test at all.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ci = process.env.CI === 'true';
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const seconds = (ms) => (ms / 1000).toFixed(1);
const tStart = Date.now();

const UNIT = 'dist/test/**/*.unit.test.js';
const ALL = 'dist/test/**/*.test.js';
/**
 * The files that start a MiniYARNCluster, a Flink cluster or another launcher of am-proxy/: the
 * `cluster` half of the integration lane (both halves start after the Java build). A file of the `rest` half that starts one
 * fails at once (test/support/java-launcher.ts, BLOCKLIST_TEST_NO_CLUSTERS), naming this list.
 */
const CLUSTER_FILES = ['dist/test/real/**/*.test.js', 'dist/test/detect/real-flink-source.test.js'];

const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
const mochaArgs = sep >= 0 ? argv.slice(sep + 1) : [];
const words = sep >= 0 ? argv.slice(0, sep) : argv;
// `npm test -- dist/test/x.test.js` (no lane word) still runs just what is named.
const mode = words[0] === 'unit' || words[0] === 'integration' ? words[0] : words.length ? 'files' : mochaArgs.length ? 'files' : 'all';
const named = mode === 'files' ? [...words, ...mochaArgs] : mochaArgs;

let passed = 0;
let failed = 0;
/** Each phase's wall time, and each test file's (from the reporter), for the closing tables. */
const phases = [];
const files = [];
const children = new Set();

/** Ends the run with the closing line; `why`: what failed outside any test (it counts as one failure). */
function finish(why) {
  if (why) failed++;
  for (const c of children) c.kill('SIGTERM');
  if (phases.length > 1 || files.length) timingTables();
  console.log(`\n${passed} passed, ${failed} failed${why ? `  (${why})` : ''}`);
  process.exit(failed > 0 ? 1 : 0);
}

function timingTables() {
  console.log(`\nwhere the time went (wall clock; phases side by side overlap): ${seconds(Date.now() - tStart)} s in all`);
  for (const p of phases) console.log(`  ${seconds(p.ms).padStart(7)} s  ${p.name}`);
  const slow = [...files].sort((a, b) => b.ms - a.ms).slice(0, 15);
  if (slow.length) {
    console.log(`slowest files (hooks included; ${files.length} files ran):`);
    for (const f of slow) console.log(`  ${seconds(f.ms).padStart(7)} s  ${String(f.tests).padStart(4)} tests  ${f.file}  [${f.lane}]`);
  }
}

/**
 * A child process as a promise of its exit status. `log`: its output goes to that file (shown when
 * it ends) instead of this terminal, for a phase that runs beside another one printing there.
 */
function start(cmd, args, { env, log, quietStdout } = {}) {
  const out = log ? fs.openSync(log, 'a') : 'inherit';
  const c = spawn(cmd, args, { cwd: root, env: env ?? process.env, stdio: ['ignore', quietStdout ? 'ignore' : out, out] });
  children.add(c);
  return new Promise((resolve) => {
    c.once('error', (e) => {
      if (log) fs.appendFileSync(log, `${cmd}: ${e.message}\n`);
      resolve(127);
    });
    c.once('close', (code, signal) => {
      children.delete(c);
      if (log) fs.closeSync(out);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}

/** Runs `fn` as a phase of the closing table; `onMs` gets its time (phases may run side by side). */
async function timed(name, fn, onMs) {
  const t0 = Date.now();
  try {
    return await fn();
  } finally {
    phases.push({ name, ms: Date.now() - t0 });
    onMs?.(Date.now() - t0);
  }
}

const showLog = (log) => {
  if (!fs.existsSync(log)) return;
  process.stdout.write(fs.readFileSync(log, 'utf8'));
  fs.rmSync(log, { force: true });
};
const tmpLog = (what) => {
  const f = path.join(os.tmpdir(), `blocklist-test-${process.pid}-${what}.log`);
  fs.rmSync(f, { force: true });
  return f;
};

/**
 * One mocha run; its counts and per-file times come from the reporter through a stats file, not
 * from its output. `log`: run beside another lane, its output shown when it ends.
 */
async function lane(name, specs, extra, { nodeBin, log, env: laneEnv, mayBeEmpty, deferOutput } = {}) {
  const stats = path.join(os.tmpdir(), `blocklist-test-stats-${process.pid}-${name.replace(/\W+/g, '_')}.json`);
  const mocha = ['--config', '.mocharc.json', ...(log && process.stdout.isTTY ? ['--color'] : []), ...extra, ...specs];
  const env = { ...process.env, ...laneEnv, BLOCKLIST_TEST_STATS: stats, BLOCKLIST_TEST_LANE: name };
  let ms = 0;
  const status = await timed(`${name} lane`, () => start(nodeBin ?? process.execPath, [path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), ...mocha], { env, log }), (t) => (ms = t));
  let s;
  try {
    s = JSON.parse(fs.readFileSync(stats, 'utf8'));
    fs.unlinkSync(stats);
  } catch {
    s = { passes: 0, failures: 1, pending: 0, crashed: true }; // the reporter never finished
  }
  let f = s.failures;
  if (status !== 0 && f === 0) f = 1; // mocha itself failed (a load error, a crash)
  if (ci && !mayBeEmpty && s.passes + s.failures + s.pending === 0) f += 1; // a lane that ran nothing is not green in CI
  for (const x of s.files ?? []) files.push({ ...x, file: path.relative(root, x.file).replace(/^dist\//, '').replace(/\.js$/, '.ts'), lane: name });
  const line = `${name} lane: ${s.passes} passing, ${f} failing${s.pending ? `, ${s.pending} pending` : ''} in ${seconds(ms)} s${s.crashed ? ' (mocha did not finish)' : ''}`;
  passed += s.passes;
  failed += f;
  // Beside another lane: its output and its line when that one has ended (the caller's call).
  const show = () => {
    if (log) showLog(log);
    console.log(line);
  };
  if (!deferOutput) show();
  return show;
}

/** Real parts the suites need, installed from Debian's packages when CI=true (scripts/ensure-*.sh). */
async function realParts(log) {
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
    // Outside CI a missing part only skips its suites.
    if ((await start('bash', [file], { log })) !== 0 && ci) return `${what} could not be installed`;
  }
  return undefined;
}

/**
 * The Java module (am-proxy/: the AMRMProxy interceptor and the real-YARN/real-Flink launchers): a
 * JDK and Maven from Debian when missing, then a Maven build (skipped when its inputs are unchanged:
 * scripts/build-am-proxy.sh). The real suites skip when it is missing; in CI that fails the run.
 */
async function javaModule(log) {
  const ensureJava = path.join(root, 'scripts', 'ensure-java.sh');
  if (!fs.existsSync(ensureJava)) return undefined;
  let ok = (await start('bash', [ensureJava], { log })) === 0;
  if (ok) ok = (await start('bash', [path.join(root, 'scripts', 'build-am-proxy.sh')], { log })) === 0;
  return !ok && ci ? 'the Java module could not be built: JDK, Maven or a Java unit test' : undefined;
}

/**
 * The release tarball (npm run dist; test/deploy/release.test.ts unpacks and runs it), rebuilt only
 * when its inputs changed (seconds warm; a fresh machine compiles better-sqlite3 for the bundled
 * runtime once, about two minutes).
 */
async function tarball(log) {
  const t0 = Date.now();
  const status = await start(process.execPath, [path.join(root, 'scripts', 'dist.js'), '--print-path'], { log, quietStdout: true });
  const line = `release tarball: ${status === 0 ? 'ok' : 'FAILED'} (${seconds(Date.now() - t0)} s)\n`;
  if (log) fs.appendFileSync(log, line);
  else process.stdout.write(line);
  return status !== 0 && ci ? 'npm run dist failed' : undefined;
}

/** Node.js 24, the release's runtime, when this machine's node is older (else undefined). */
function node24Binary() {
  if (Number(process.versions.node.split('.')[0]) >= 24) return undefined;
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const runtime = pkg.distribution.runtimes[`${process.platform}-${process.arch}`];
  try {
    return { version: runtime.version, node: path.join(require('./release/runtime').runtimeDir(runtime, (m) => console.log(`node 24 lane: ${m}`)), 'bin', 'node') };
  } catch (e) {
    console.log(`node 24 lane: no runtime (${e.message})`);
    return { version: runtime.version, node: undefined };
  }
}

async function main() {
  const tsc = await timed('type check and build (tsc)', () => start(bin('tsc'), ['-p', 'tsconfig.json']));
  if (tsc !== 0) finish('type check failed: fix the errors above');
  pruneStale(path.join(root, 'dist', 'test'));

  if (mode === 'all') {
    // The layering rule (.dependency-cruiser.cjs, docs/architecture.md): imports in src/ point down.
    let ms = 0;
    const dc = await timed('layering check', () => start(bin('depcruise'), ['src', 'test', 'bench', '--config', '.dependency-cruiser.cjs', '--output-type', 'err-long']), (t) => (ms = t));
    console.log(`layering check: ${dc === 0 ? 'ok' : 'FAILED'} (${seconds(ms)} s)`);
    if (dc === 0) passed++;
    else failed++;
  }

  if (mode === 'files') {
    // Named files: the Java build only when one of them needs it (it takes a minute when stale).
    let why = await timed('real parts (ensure-*.sh)', () => realParts());
    if (!why && named.some((f) => /test\/real\/|real-flink-source|hadoop-hosts-file/.test(f))) why = await timed('Java module (build-am-proxy.sh)', () => javaModule());
    if (why) finish(why);
    await lane('selected', named.some((a) => a.endsWith('.js')) ? named : [ALL, ...named], []);
    finish();
  }

  // Beside the unit lane: the tarball's build, and the real parts then the Java build (each of
  // these two may install with apt-get: one after the other). Seconds on a warm machine, minutes
  // each on a fresh one. Their output is shown once the lanes before the integration lane printed theirs.
  const tarballLog = tmpLog('tarball');
  const javaLog = tmpLog('java');
  const tarballDone = mode === 'unit' ? Promise.resolve(undefined) : timed('release tarball (npm run dist)', () => tarball(tarballLog));
  const javaDone = mode === 'unit' ? Promise.resolve(undefined) : (async () => (await timed('real parts (ensure-*.sh)', () => realParts(javaLog))) ?? timed('Java module (build-am-proxy.sh)', () => javaModule(javaLog)))();
  if (mode === 'unit' || mode === 'all') await lane('unit', [UNIT], named);
  const tarballWhy = await tarballDone;
  // Node.js 24: the unit lane again on the tarball's bundled runtime (it keeps the code from using
  // what only the older runtime has), once the tarball's build fetched it; beside the Java build.
  const node24 = mode === 'all' && !tarballWhy ? node24Binary() : undefined;
  const node24Lane = node24?.node ? lane(`unit (node ${node24.version})`, [UNIT], named, { nodeBin: node24.node }) : Promise.resolve();
  if (node24 && !node24.node && ci) failed++;
  const buildWhy = tarballWhy ?? (await javaDone);
  await node24Lane;
  showLog(tarballLog);
  showLog(javaLog);
  if (buildWhy) finish(buildWhy);
  if (mode === 'unit') finish();

  // The integration lane's two halves side by side; the cluster half prints here as it runs.
  const restLog = tmpLog('rest');
  console.log(`\nintegration: the cluster half runs here; the rest runs beside it (its output follows when it ends: tail -f ${restLog})`);
  const [, showRest] = await Promise.all([
    lane('integration (cluster)', CLUSTER_FILES, named, { mayBeEmpty: named.length > 0 }),
    lane('integration (rest)', [ALL], ['--ignore', UNIT, ...CLUSTER_FILES.flatMap((g) => ['--ignore', g]), ...named], { log: restLog, env: { BLOCKLIST_TEST_NO_CLUSTERS: '1' }, mayBeEmpty: named.length > 0, deferOutput: true }),
  ]);
  showRest();
  finish();
}

// A renamed or deleted test leaves its old .js in dist/, which the globs would still run: drop
// every compiled test file whose source is gone.
function pruneStale(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) pruneStale(p);
    else if (/\.js$/.test(e.name)) {
      const src = path.join(root, path.relative(path.join(root, 'dist'), p)).replace(/\.js$/, '.ts');
      if (!fs.existsSync(src)) for (const f of [p, `${p}.map`]) fs.rmSync(f, { force: true });
    }
  }
}

main().catch((e) => {
  console.error(e);
  finish('scripts/test.js itself failed');
});
