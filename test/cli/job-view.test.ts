/**
 * `blocklist list` shows the job's own view by default: what applies to the sidecar's application
 * (its own, cluster-wide and shared blocks), with a SCOPE column; --all lists every item. Child
 * processes against a sidecar wired to the YARN simulator.
 */
import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { tempDir } from '../support/paths';
import { http } from '../support/sidecar';
import { LocalCluster, startLocalCluster } from '../../src/quickstart/local-cluster';
import { expectCode, runCli } from './run';

describe("cli: list shows the job's own view", function () {
  this.timeout(60_000);
  let local: LocalCluster;
  before(async () => {
    local = await startLocalCluster({ restPort: 0, simPort: 0, sqlitePath: path.join(tempDir('blocklist-view-'), 'b.db'), nodes: 4, containers: 2, tickMs: 200 });
  });
  after(async () => {
    await local?.close();
  });

  it("lists cluster, own and shared blocks but not another job's; --all lists everything", async () => {
    const app = local.sim.cluster.applicationId;
    const other = 'application_1652313600000_0999';
    const put = (id: string, scope: string) => http(local.sidecar.url, 'PUT', `/blocklist/nodes/${id}`, { action: 'MARK_BLOCKED', cause: 'c', scope });
    for (const [id, scope] of [['c1', 'cluster'], ['own', app], ['shared', `${other},${app}`], ['theirs', other]]) assert.equal((await put(id, scope)).status, 201);
    const [table, all] = await Promise.all([runCli(['list', '--server', local.sidecar.url]), runCli(['list', '--all', '-o', 'name', '--server', local.sidecar.url])]);
    const lines = expectCode(table, 0, 'list').stdout.trimEnd().split('\n');
    assert.match(lines[0], /^ID\s+KIND\s+ACTION\s+SCOPE\s+CAUSE/);
    assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/)[0]), ['c1', 'own', 'shared']);
    assert.match(lines.find((l) => l.startsWith('shared')) ?? '', new RegExp(`${other},\\+1`));
    assert.match(table.stderr, new RegExp(`what applies to ${app}`));
    assert.deepEqual(expectCode(all, 0, 'list --all').stdout.trim().split('\n'), ['c1', 'own', 'shared', 'theirs']);
  });
});
