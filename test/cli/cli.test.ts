/**
 * The `blocklist` executable end to end: spawned as a child process against a real sidecar (real
 * HTTP on 127.0.0.1, real SQLite file), and against a sidecar wired to the YARN simulator for
 * --wait. Assertions are batched per scenario to keep spawns few (each costs ~0.3 s).
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { TestSidecar, startTestSidecar, tempDir } from '../support/sidecar';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { CliResult, expectCode, runCli } from './run';
import { HADOOP_SAMPLE_XML } from './samples';

const TM = 'node3/container_e01_1652313600000_0001_01_000002';
const LONG_MAX = '9223372036854775807';

type Item = { id: string; kind: string; action: string; endTimestamp: string; cause: string; scope: string; evacuationTimeout?: number; dryRun?: Record<string, string[] | string> };

const json = <T>(r: CliResult): T => JSON.parse(r.stdout) as T;
const oneLine = (r: CliResult, what: string) => assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: error should be one line, got:\n${r.stderr}`);

describe('cli: the blocklist executable against a real sidecar', function () {
  this.timeout(60_000);
  let s: TestSidecar;
  let dir: string;
  let env: Record<string, string>;
  const cli = (...args: string[]) => runCli(args, { env, cwd: dir });
  const listJson = async () => json<Record<string, Item>>(expectCode(await cli('list', '-o', 'json'), 0, 'list -o json'));

  before(async () => {
    s = await startTestSidecar();
    dir = tempDir('blocklist-cli-');
    env = { BLOCKLIST_SERVER: s.url };
  });
  after(async () => {
    await s?.close();
  });

  it('block / block-tm: exact wire values, merge, conflict (exit 3), -o json parseable', async () => {
    const until = await cli('block', 'node1', '--cause', 'disk full', '--until', '2030-01-01T06:00Z', '-o', 'json');
    assert.equal(json<Item>(expectCode(until, 0, 'block --until')).endTimestamp, String(Date.UTC(2030, 0, 1, 6)));

    const again = expectCode(await cli('block', 'node1', '--cause', 'again'), 3, 'block twice');
    oneLine(again, 'conflict');
    assert.match(again.stderr, /already blocked; add --merge/);

    const merged = json<Item>(expectCode(await cli('block', 'node1', '--cause', 'nic', '--merge', '--evacuate', '--evacuation-timeout', '10m', '-o', 'json'), 0, 'merge'));
    assert.deepEqual([merged.cause, merged.action, merged.evacuationTimeout], ['disk full,nic', 'MARK_BLOCKED_AND_EVACUATE_TASKS', 600]);
    // A merge that adds nothing says so (the PUT's outcome), rather than "merged".
    const same = expectCode(await cli('block', 'node1', '--cause', 'nic', '--merge', '--until', '2030-01-01T06:00Z'), 0, 'merge adding nothing');
    assert.equal(same.stdout, 'nothing changed, already blocked so: node1 EVACUATE permanently, evacuation timeout 10m, cause "disk full,nic"\n');

    const before = Date.now();
    const [timedR, permR, tm, human] = await Promise.all([
      cli('block', 'node2', '--cause', 'hot', '--timeout', '2h', '-o', 'json'),
      cli('block', 'node4', '--cause', 'forever', '-o', 'json'),
      cli('block-tm', TM, '--cause', 'slow tm'),
      cli('block', 'node5', '--cause', 'x', '--timeout', '30m'),
    ]);
    const end = Number(json<Item>(expectCode(timedR, 0, 'block --timeout')).endTimestamp);
    assert.ok(end >= before + 7_200_000 && end <= Date.now() + 7_200_000, `end ${end} is now + 2h`);
    assert.equal(json<Item>(expectCode(permR, 0, 'permanent')).endTimestamp, LONG_MAX);
    assert.match(expectCode(tm, 0, 'block-tm').stdout, /^blocked task manager node3\/container_e01_1652313600000_0001_01_000002 BLOCK permanently, cause "slow tm"\n$/);
    assert.match(expectCode(human, 0, 'human block').stdout, /^blocked node node5 BLOCK until \S+Z \(in 30m\), cause "x"\n$/);
  });

  it('list and show in every output format, with filters', async () => {
    const map = await listJson();
    assert.deepEqual(Object.keys(map).sort(), ['node1', 'node2', TM, 'node4', 'node5']);
    const [yaml, names, table, wide, tms, evac, show, showJson] = await Promise.all([
      cli('list', '-o', 'yaml'),
      cli('list', '-o', 'name'),
      cli('list'),
      cli('list', '-o', 'wide'),
      cli('list', '--kind', 'taskmanager', '-o', 'name'),
      cli('list', '--action', 'evacuate', '-o', 'name'),
      cli('show', 'node1'),
      cli('show', TM, '-o', 'json'),
    ]);
    assert.deepEqual(Object.keys(YAML.parse(expectCode(yaml, 0, 'yaml').stdout) as object).sort(), Object.keys(map).sort());
    assert.equal((YAML.parse(yaml.stdout) as Record<string, Item>).node4.endTimestamp, LONG_MAX, 'YAML keeps Long.MAX as the exact string');
    assert.equal(expectCode(names, 0, 'name').stdout, ['node1', 'node2', TM, 'node4', 'node5'].join('\n') + '\n');
    const lines = expectCode(table, 0, 'table').stdout.trimEnd().split('\n');
    assert.match(lines[0], /^ID\s+KIND\s+ACTION\s+SCOPE\s+CAUSE\s+SINCE\s+ENDS\s+TMS\s+SYNC$/);
    assert.equal(lines.length, 6);
    assert.ok(!table.stdout.includes('\x1b['), 'no colour codes when stdout is not a terminal');
    const col = lines[0].indexOf('ENDS');
    assert.ok(lines.slice(1).every((l) => l.length > col && l[col - 1] === ' '), 'columns aligned');
    assert.match(lines.find((l) => l.startsWith('node4'))!, /never/);
    assert.match(lines.find((l) => l.startsWith('node2'))!, /in 1h 59m|in 2h/);
    assert.match(expectCode(wide, 0, 'wide').stdout.split('\n')[0], /SCOPE.*EVAC-TIMEOUT.*TASK MANAGERS.*CREATED BY/);
    assert.equal(expectCode(tms, 0, 'kind').stdout, `${TM}\n`);
    assert.equal(expectCode(evac, 0, 'action').stdout, 'node1\n');
    assert.match(expectCode(show, 0, 'show').stdout, /Cause:\s+disk full,nic\n[\s\S]*Evacuation timeout: 10m/);
    assert.equal(json<Item>(expectCode(showJson, 0, 'show -o json')).kind, 'taskmanager');
  });

  it('exit codes: 2 usage (one line saying what to do), 4 not found, 5 unreachable', async () => {
    const rs = await Promise.all([
      cli('block', 'n1'), // --cause missing
      cli('block', 'n1', '--cause', 'x', '--timeout', '2h', '--until', '2030-01-01Z'),
      cli('block', 'n1:8041', '--cause', 'x'),
      cli('block', 'n1', '--cause', 'x', '--timeout', '600'),
      cli('block', 'n1', '--cause', 'x', '--until', '2030-01-01T06:00'),
      cli('list', '-o', 'bogus'),
      cli('frobnicate'),
      cli('block', 'n1', '--cause', '   '),
      cli('block', 'n1', '--cause', 'x', '--timeout', '0'),
      cli('block', 'n1', '--cause', 'x', '--until', '2020-01-01T06:00Z'),
    ]);
    for (const r of rs) expectCode(r, 2, 'usage');
    assert.match(rs[2].stderr, /use the host name 'n1'/);
    assert.match(rs[3].stderr, /needs a unit: e\.g\. 30m, 2h/);
    assert.match(rs[4].stderr, /no time zone; add Z/);
    assert.match(rs[7].stderr, /cause must not be empty/);
    assert.match(rs[8].stderr, /--timeout 0 would end the block as it starts; omit --timeout for a permanent block/, 'zero is refused for being zero, as --evacuation-timeout 0 is taken for what it is');
    assert.match(rs[9].stderr, /--until 2020-01-01T06:00Z \(2020-01-01T06:00:00\.000Z\) is not in the future \(now is 20\d\d-/, 'a past --until is shown as a time, not epoch ms');
    for (const i of [1, 2, 3, 4, 7]) oneLine(rs[i], `usage ${i}`);

    const [missing, gone, down] = await Promise.all([cli('show', 'nosuch'), cli('unblock', 'node2', 'nosuch'), runCli(['list', '--server', 'http://127.0.0.1:1'])]);
    expectCode(missing, 4, 'show missing');
    assert.match(missing.stderr, /'nosuch' is not blocked/);
    expectCode(gone, 4, 'unblock one missing');
    assert.equal(gone.stdout, 'unblocked node2\n', 'the id that exists is still removed');
    expectCode(down, 5, 'unreachable');
    oneLine(down, 'unreachable');
    assert.match(down.stderr, /cannot reach the sidecar at http:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\); start it with 'blocklist sidecar'/);
  });

  it('--dry-run answers what would change (YARN additions/removals) and changes nothing', async () => {
    const xml = path.join(dir, 'dry.xml');
    fs.writeFileSync(xml, HADOOP_SAMPLE_XML);
    const before = await listJson();
    const [b, u, i, conflict] = await Promise.all([
      cli('block', 'node9', '--cause', 'x', '--evacuate', '--dry-run', '-o', 'json'),
      cli('unblock', 'node1', '--dry-run', '-o', 'json'),
      cli('import', xml, '--dry-run', '-o', 'json'),
      cli('block', 'node1', '--cause', 'y', '--dry-run'),
    ]);
    // This sidecar runs no engine (API only): the dry run says it cannot tell the releases.
    assert.deepEqual(json<Item>(expectCode(b, 0, 'block dry')).dryRun, { blacklistAdditions: ['node9'], blacklistRemovals: [], containersToRelease: [], deferred: [], containersUnknown: "no sync engine runs (API only): the application's containers are not read" });
    assert.deepEqual(json<{ dryRun: Record<string, string[]> }[]>(expectCode(u, 0, 'unblock dry'))[0].dryRun.blacklistRemovals, ['node1']);
    const imp = json<{ dryRun: boolean; results: unknown[]; effect: { blacklistAdditions: string[] } }>(expectCode(i, 0, 'import dry'));
    assert.equal(imp.results.length, 6);
    assert.deepEqual(imp.effect.blacklistAdditions, ['host1', 'host2', 'host3', 'host4', 'host5', 'host6']);
    expectCode(conflict, 3, 'dry run of a conflict is still a conflict');
    const human = expectCode(await cli('block', 'node9', '--cause', 'x', '--dry-run'), 0, 'human dry run');
    assert.match(human.stdout, /^dry run: would block node node9[\s\S]*YARN blacklist additions: node9\n[\s\S]*nothing was changed\n$/);
    assert.deepEqual(await listJson(), before);
  });

  it('import: Hadoop XML (per-host timeout > -g > default) and text through the batch endpoint; malformed files import nothing', async () => {
    const xml = path.join(dir, 'excludes.xml');
    const txt = path.join(dir, 'excludes');
    fs.writeFileSync(xml, HADOOP_SAMPLE_XML);
    fs.writeFileSync(txt, 'hostA hostB # hostC\n  # comment line\n\thostD\n');
    const r = json<{ results: { id: string; outcome: string; item: Item }[] }>(expectCode(await cli('import', xml, '-g', '600', '-o', 'json'), 0, 'import xml'));
    assert.deepEqual(
      r.results.map((x) => [x.id, x.outcome, x.item.evacuationTimeout, x.item.action]),
      [
        ['host1', 'created', 600, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
        ['host2', 'created', 123, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
        ['host3', 'created', -1, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
        ['host4', 'created', 1800, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
        ['host5', 'created', 1800, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
        ['host6', 'created', 1800, 'MARK_BLOCKED_AND_EVACUATE_TASKS'],
      ],
    );
    const gBlock = expectCode(await cli('import', txt, '-g', '600', '--action', 'block', '--dry-run'), 0, 'import -g with --action block');
    assert.match(gBlock.stderr, /warning: -g 600 does nothing for the 3 MARK_BLOCKED block\(s\) \(--action block\): they release no containers/);
    const t = expectCode(await cli('import', txt, '--action', 'block', '--cause', 'rack 7 PSU'), 0, 'import text');
    assert.match(t.stdout, /^imported 3 item\(s\) from .*excludes \(plain text\): 3 created\n/);
    const map = await listJson();
    assert.deepEqual(['hostA', 'hostB', 'hostD'].map((h) => [map[h]?.action, map[h]?.cause, map[h]?.evacuationTimeout]), Array(3).fill(['MARK_BLOCKED', 'rack 7 PSU', undefined]));
    assert.equal(map.hostC, undefined, 'a commented-out host is not imported');

    const twice = expectCode(await cli('import', txt), 3, 'import again');
    assert.match(twice.stderr, /3 of 3 host\(s\) are already blocked; nothing was imported — add --merge/);
    expectCode(await cli('import', txt, '--merge', '--action', 'block', '--cause', 'rack 7 PSU'), 0, 'import --merge');

    const bad = path.join(dir, 'bad.xml');
    fs.writeFileSync(bad, '<hosts>\n  <host><name>fresh1</name></host>\n  <host><name>h7, h8</name><timeout>abc</timeout></host>\n</hosts>\n');
    const badTxt = path.join(dir, 'bad-excludes');
    fs.writeFileSync(badTxt, 'fresh2 fresh3\nnode9:8041 # a port\n');
    const broken = path.join(dir, 'broken.xml');
    fs.writeFileSync(broken, '<hosts>\n<host><name>fresh4</name>\n</hosts>\n');
    const before = await listJson();
    const [e1, e2, e3, e4] = await Promise.all([cli('import', bad), cli('import', badTxt), cli('import', broken), cli('import', path.join(dir, 'missing.xml'))]);
    expectCode(e1, 2, 'bad timeout');
    assert.match(e1.stderr, /nothing was imported\n {2}- line 3: <timeout> of host h7, h8 is "abc", not a whole number of seconds/);
    expectCode(e2, 2, 'bad host');
    assert.match(e2.stderr, /line 2: node id 'node9:8041' has a port; use the host name 'node9'/);
    expectCode(e3, 2, 'not well-formed');
    assert.match(e3.stderr, /not well-formed XML: line 3: <\/hosts> closes <host> opened on line 2/);
    expectCode(e4, 4, 'missing file');
    assert.deepEqual(await listJson(), before, 'nothing imported from any malformed file');
  });

  it('export → import round trip (yarn-xml, text, json) into a fresh store file; expire on a store file', async () => {
    const [x, t, j] = await Promise.all([cli('export'), cli('export', '--format', 'text', '--include-mark-blocked'), cli('export', '--format', 'json', '-f', path.join(dir, 'all.json'))]);
    expectCode(x, 0, 'export xml');
    assert.match(x.stderr, /1 task manager item\(s\) left out/);
    assert.match(x.stderr, /5 MARK_BLOCKED host\(s\) left out: yarn rmadmin -refreshNodes decommissions every host .*--include-mark-blocked to write them anyway: hostA, hostB, hostD, node4, node5/);
    assert.doesNotMatch(x.stdout, /<name>hostA<\/name>/);
    assert.match(x.stdout, /<host><name>host4<\/name><timeout>1800<\/timeout><action>MARK_BLOCKED_AND_EVACUATE_TASKS<\/action><\/host>/);
    assert.match(expectCode(t, 0, 'export text').stdout, /^hostA {2}# BLOCK permanently: rack 7 PSU$/m);
    expectCode(j, 0, 'export json');
    const hostsOf = (xmlText: string) => xmlText.split('\n').filter((l) => l.includes('<host>')).join('\n');

    const out = path.join(dir, 'out.xml');
    fs.writeFileSync(out, x.stdout);
    const store1 = `sqlite:${path.join(dir, 'rt1.db')}`;
    const store2 = `sqlite:${path.join(dir, 'rt2.db')}`;
    const [i1, i2] = await Promise.all([
      runCli(['import', out, '--store', store1], { cwd: dir }),
      runCli(['import', path.join(dir, 'all.json'), '--store', store2], { cwd: dir }),
    ]);
    expectCode(i1, 0, 'import exported xml');
    expectCode(i2, 0, 'import json');
    const [x2, j2] = await Promise.all([runCli(['export', '--store', store1], { cwd: dir }), runCli(['export', '--format', 'json', '--store', store2], { cwd: dir })]);
    assert.equal(hostsOf(expectCode(x2, 0, 'export again').stdout), hostsOf(x.stdout), 'hosts and timeouts survive XML round trip');
    const pick = (items: Item[]) => items.map((i) => [i.id, i.kind, i.action, i.endTimestamp, i.cause, i.scope, i.evacuationTimeout]);
    assert.deepEqual(pick(json<Item[]>(expectCode(j2, 0, 'export json again'))), pick(JSON.parse(fs.readFileSync(path.join(dir, 'all.json'), 'utf8')) as Item[]), 'JSON round trip keeps every settable field');

    expectCode(await runCli(['block', 'short1', '--cause', 'brief', '--timeout', '1s', '--store', store1], { cwd: dir }), 0, 'short block');
    await new Promise((r) => setTimeout(r, 1100));
    const ex = expectCode(await runCli(['expire', '--store', store1], { cwd: dir }), 0, 'expire');
    assert.match(ex.stdout, /^expired 1 item:\n {2}short1 {2}ended \S+Z \(\d+s ago\) {2}cause "brief"\n$/);
    assert.equal(expectCode(await runCli(['expire', '--store', store1, '-o', 'json'], { cwd: dir }), 0, 'expire twice').stdout, '[]\n');
    const nostore = await runCli(['list', '--store', `sqlite:${path.join(dir, 'typo.db')}`], { cwd: dir });
    expectCode(nostore, 4, 'a missing store file is not invented by a read');
    assert.ok(!fs.existsSync(path.join(dir, 'typo.db')));
  });

  it('status (-o json, --watch), CLI config file and token file, shell completion', async () => {
    const cfg = path.join(dir, 'cli.yaml');
    fs.writeFileSync(path.join(dir, 'token'), 'sekret\n');
    fs.writeFileSync(cfg, `server: ${s.url}\ntoken-file: ${path.join(dir, 'token')}\n`);
    const [st, watch, viaCfg, badCfg, bash, zsh, fish] = await Promise.all([
      cli('status', '-o', 'json'),
      cli('status', '--watch', '--count', '2', '--interval', '200ms'),
      runCli(['list', '-o', 'name', '--cli-config', cfg]),
      runCli(['list', '--cli-config', path.join(dir, 'nope.yaml')]),
      cli('completion', 'bash'),
      cli('completion', 'zsh'),
      cli('completion', 'fish'),
    ]);
    assert.equal(json<{ enabled: boolean }>(expectCode(st, 0, 'status')).enabled, true);
    assert.equal((expectCode(watch, 0, 'watch').stdout.match(/^Sidecar: /gm) ?? []).length, 2);
    assert.match(expectCode(viaCfg, 0, 'config file').stdout, /^node1$/m);
    expectCode(badCfg, 2, 'explicit config file missing');
    expectCode(bash, 0, 'bash');
    assert.match(bash.stdout, /complete -o default -F _blocklist blocklist/);
    execFileSync('bash', ['-n'], { input: bash.stdout });
    expectCode(zsh, 0, 'zsh');
    assert.match(zsh.stdout, /^#compdef blocklist/);
    try {
      execFileSync('zsh', ['-n'], { input: zsh.stdout, stdio: ['pipe', 'ignore', 'pipe'] });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // zsh not installed: bash -n above still ran
    }
    expectCode(fish, 2, 'unknown shell');
  });
});

describe('cli: block --evacuate --wait against a sidecar wired to the YARN simulator', function () {
  this.timeout(60_000);
  let local: LocalCluster;
  let busy: string[];

  before(async () => {
    const dir = tempDir('blocklist-cli-sim-');
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(dir, 'b.db'), nodes: 8, containers: 16, tickMs: 200, define: { 'cluster.resource-blocklist.max-blocked-fraction': '1' } });
    busy = local.sim.cluster.nodes.filter((n) => n.containers.size > 0).map((n) => n.host);
    assert.ok(busy.length >= 3, 'the simulated job has containers on at least three nodes');
  });
  after(async () => {
    await local?.close();
  });

  const run = (args: string[]) => runCli([...args, '--server', local.sidecar.url]);

  it('follows to READY (exit 0), also through a release at the deadline (exit 0), and stops at --wait-timeout (exit 6)', async () => {
    const [ready, timeout, gaveUp] = await Promise.all([
      run(['block', busy[0], '--cause', 'disk', '--evacuate', '--wait', '--interval', '200ms']),
      run(['block', busy[1], '--cause', 'nic', '--evacuate', '--evacuation-timeout', '2s', '--wait', '--interval', '200ms']),
      run(['block', busy[2], '--cause', 'hot', '--evacuate', '--evacuation-timeout', 'forever', '--wait', '--wait-timeout', '2s', '--interval', '200ms']),
    ]);
    expectCode(ready, 0, 'wait to READY');
    assert.match(ready.stdout, new RegExp(`^${busy[0].replace(/\./g, '\\.')} evacuated in \\S+; \\d+ task manager\\(s\\) released`, 'm'));
    assert.match(ready.stdout, /READY {2}0 containers left/);
    expectCode(timeout, 0, 'released at the deadline: the normal path');
    assert.match(timeout.stdout, /WAIT_CONTAINER {2}\d+ containers? left, deadline in [12]s/);
    assert.match(timeout.stdout, /READY {2}0 containers left/);
    assert.match(timeout.stdout, /evacuated in \S+; \d+ task manager\(s\) released at the deadline/);
    expectCode(gaveUp, 6, 'wait-timeout');
    assert.match(gaveUp.stdout, /no deadline \(waits forever\)/);
    assert.match(gaveUp.stderr, /gave up waiting after 2s; the evacuation of \S+ goes on in the sidecar/);
    // Not a terminal: progress is printed as lines when something changes, never redrawn in place.
    assert.ok(!/\r|\x1b\[/.test(ready.stdout + timeout.stdout));
  });

  it('block-tm --evacuate --wait follows one task manager until its container is released (exit 0)', async () => {
    const node = local.sim.cluster.nodes.find((n) => n.containers.size > 0 && !busy.slice(0, 3).includes(n.host)) ?? local.sim.cluster.nodes.find((n) => n.containers.size > 0);
    assert.ok(node, 'a node with a container');
    const container = [...node.containers][0];
    const id = `${node.host}/${container}`;
    const r = expectCode(await run(['block-tm', id, '--cause', 'slow task manager', '--evacuate', '--evacuation-timeout', '0', '--wait', '--interval', '200ms']), 0, 'block-tm --wait');
    assert.match(r.stdout, new RegExp(`^${id.replace(/[./]/g, '\\$&')} evacuated in \\S+; 1 task manager\\(s\\) released`, 'm'));
    assert.ok(!local.sim.cluster.nodes.some((n) => n.containers.has(container)), 'the container is gone from the simulated cluster');
  });
});
