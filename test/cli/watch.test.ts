/**
 * `blocklist watch` streams changes line by line into a pipe (stdout is not a terminal here): each
 * line is read as it comes, while the test changes the blocklist through the API.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { diffReadings } from '../../src/cli/watch-diff';
import { ApiItem } from '../../src/cli/client';
import { cliEnv } from './run';
import { cliMain } from '../support/paths';
import { TestSidecar, startTestSidecar } from '../support/sidecar';

const item = (id: string, o: Partial<ApiItem> = {}): ApiItem => ({ id, kind: 'node', action: 'MARK_BLOCKED', startTimestamp: '1', endTimestamp: '9223372036854775807', cause: 'c', scope: 'cluster', ...o });

describe('cli: blocklist watch', function () {
  this.timeout(30_000);

  it('diffReadings: added, removed, and the fields that moved (sync included), in id order', () => {
    const before = { a: item('a'), b: item('b', { sync: { state: 'pending' } }), c: item('c') };
    const after = { b: item('b', { sync: { state: 'applied' }, endTimestamp: '2000' }), c: item('c'), d: item('d') };
    assert.deepEqual(
      diffReadings(before, after).map((e) => [e.kind, e.id, e.kind === 'changed' ? e.changes.map((c) => `${c.field}:${c.from}>${c.to}`) : []]),
      [['removed', 'a', []], ['changed', 'b', ['endTimestamp:9223372036854775807>2000', 'sync:pending>applied']], ['added', 'd', []]],
    );
  });

  describe('against a real sidecar, into a pipe', () => {
    let s: TestSidecar;
    before(async () => {
      s = await startTestSidecar();
    });
    after(async () => {
      await s?.close();
    });
    const api = (method: string, p: string, body?: unknown) => fetch(`${s.url}${p}`, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });

    it('prints what is blocked, then each change as it happens, one line each; -o json is one object per line', async () => {
      await api('PUT', '/blocklist/nodes/w1', { action: 'MARK_BLOCKED', cause: 'there before' });
      const child = spawn(process.execPath, [cliMain, 'watch', '--server', s.url, '--interval', '100ms', '--count', '4'], { env: cliEnv() });
      const lines: string[] = [];
      let buf = '';
      child.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        lines.push(...parts);
      });
      const exited = new Promise<number>((r) => child.on('exit', (code) => r(code ?? -1)));
      const seen = async (re: RegExp) => {
        for (let i = 0; i < 200 && !lines.some((l) => re.test(l)); i++) await new Promise((r) => setTimeout(r, 25));
        assert.ok(lines.some((l) => re.test(l)), `no line matched ${re}: ${lines.join('\n')}`);
      };
      await seen(/^\S+Z {2}present {2}w1 BLOCK permanently, cause "there before"/);
      await api('PUT', '/blocklist/nodes/w2', { action: 'MARK_BLOCKED', cause: 'new', timeout: '1 h' });
      await seen(/^\S+Z {2}added {4}w2 BLOCK until \S+Z \(in (59m|1h)[^)]*\), cause "new"/);
      await api('PUT', '/blocklist/nodes/w2', { action: 'MARK_BLOCKED_AND_EVACUATE_TASKS', cause: 'new,worse', allowMerge: true });
      await seen(/^\S+Z {2}changed {2}w2: action MARK_BLOCKED -> MARK_BLOCKED_AND_EVACUATE_TASKS; end \S+Z -> permanent; cause "new" -> "new,worse"$/);
      await api('DELETE', '/blocklist/nodes/w1');
      await seen(/^\S+Z {2}removed {2}w1 \(unblocked, or its end passed\)$/);
      assert.equal(await exited, 0);

      const json = spawn(process.execPath, [cliMain, 'watch', '--server', s.url, '--count', '1', '-o', 'json'], { env: cliEnv() });
      let out = '';
      json.stdout.on('data', (d: Buffer) => (out += d.toString()));
      assert.equal(await new Promise<number>((r) => json.on('exit', (c) => r(c ?? -1))), 0);
      const events = out.trim().split('\n').map((l) => JSON.parse(l) as { at: string; event: string; id: string; item: { cause: string } });
      assert.deepEqual(events.map((e) => [e.event, e.id, e.item.cause]), [['present', 'w2', 'new,worse']]);
      assert.match(events[0].at, /^\d{4}-\d\d-\d\dT/);
    });
  });
});
