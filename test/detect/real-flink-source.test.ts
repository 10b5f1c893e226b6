/**
 * The detector's Flink source against real Flink JobManagers (the MiniClusters of test/real/, one
 * per Flink line, shared by the run): a "doomed" job whose subtasks fail until Flink gives up, and a
 * "flaky" one. A MiniCluster's task managers all run on localhost with UUID ids (no YARN container),
 * so attribution takes the endpoint's host, which the "RM" here knows.
 */
import { strict as assert } from 'node:assert';
import { silentLogger } from '../../src/core/logger';
import { FlinkRestSource } from '../../src/detect/sources/flink-rest';
import { SourceContext } from '../../src/detect/source';
import { DEFAULT_DECIDE_SETTINGS, decide } from '../../src/detect/decide';
import { ingest } from '../../src/detect/incidents';
import { emptyState } from '../../src/detect/state';
import { FLINK_LAUNCHERS, FlinkLine, realFlink, requireRealFlink } from '../support/real-flink';

for (const line of Object.keys(FLINK_LAUNCHERS) as FlinkLine[]) {
  describe(`detect: the Flink source against a real JobManager (Flink ${line})`, function () {
    this.timeout(180_000);
    let rest: string;
    before(async function () {
      requireRealFlink(this, line);
      rest = (await realFlink(line)).rest;
    });

    it('reads both jobs, attributes every task failure to its task manager\'s host, never the global one; keys stay put on a re-read', async () => {
      const source = new FlinkRestSource({ address: rest });
      const missed: string[] = [];
      const ctx = (cursor: SourceContext['cursor']): SourceContext => ({
        now: Date.now(),
        logger: silentLogger,
        hostOfContainer: () => undefined,
        isKnownHost: (h) => h === 'localhost',
        noteContainer: () => undefined,
        cursor,
        missed: (_n, why) => missed.push(why),
      });
      const r = await source.poll(ctx(undefined));
      assert.ok(source.flinkVersion && source.flinkVersion.startsWith(line === '2.x' ? '2.' : '1.20'), source.flinkVersion);
      assert.ok(r.failures.length >= 4, `failures: ${r.failures.length}`);
      assert.ok(r.failures.every((f) => f.host === 'localhost' && f.source === 'flink' && f.containerId === undefined));
      assert.ok(r.failures.every((f) => /^java\.lang\.IllegalStateException: blocklist test: (doomed|flaky) fails on purpose in subtask \d, attempt \d$/.test(f.summary)), r.failures.map((f) => f.summary).join('\n'));
      assert.ok((r.unattributed ?? 0) >= 1, 'the doomed job\'s final global failure');
      assert.deepEqual(missed, []);

      // Nothing moved: no new failure. From an empty cursor: the same keys again.
      assert.deepEqual((await source.poll(ctx(r.cursor))).failures, []);
      const again = await source.poll(ctx(undefined));
      assert.deepEqual(new Set(again.failures.map((f) => f.key)), new Set(r.failures.map((f) => f.key)));

      // Through the rules: one host, several restarts.
      const st = emptyState();
      const now = Math.max(...r.failures.map((f) => f.at)) + 1000;
      const ing = ingest(st, [...r.failures, ...again.failures], now, DEFAULT_DECIDE_SETTINGS.windowMs);
      assert.equal(ing.duplicates, again.failures.length + (r.failures.length - new Set(r.failures.map((f) => f.key)).size));
      const rep = decide({ now, settings: { ...DEFAULT_DECIDE_SETTINGS, mode: 'shadow' }, state: st, runningNodes: 10, blocked: new Map(), applicationId: 'application_1_0001' });
      const host = rep.hosts.find((h) => h.host === 'localhost')!;
      assert.ok(host.score >= 3, host.why);
      assert.equal(host.decision, 'would-block');
      assert.match(host.block!.cause, /^auto: \d+ failures in 10m on localhost \(java\.lang\.IllegalStateException: blocklist test: /);
    });
  });
}
