/**
 * The interceptor's per-application opt-in on the shared real YARN (test/support/real-yarn.ts):
 * "plain" is an AM that does not ask for it (no BLOCKLIST_AMRM_PROXY=true in its container's
 * environment) on the same NodeManagers as the opted-in "main"; "bare" runs with no blocklist
 * interceptor in its pipeline at all, the baseline of what an allocate costs.
 */
import { strict as assert } from 'node:assert';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AppState, RealYarn, appState, control, realYarn, requireRealYarn, until } from '../support/real-yarn';
import { http } from '../support/sidecar';

const PLAIN_OWN_HOST = 'plain-own.blocklist.test';

interface Store {
  attempts: Record<string, string[]>;
}

interface Latency {
  count: number;
  p50Us?: number;
  p90Us?: number;
  p99Us?: number;
}

describe('real YARN: the interceptor serves only the AMs that opt in', function () {
  this.timeout(60_000);
  let y: RealYarn;
  let main: AppState;
  let plain: AppState;

  before(async function () {
    this.timeout(200_000);
    requireRealYarn(this);
    y = await realYarn();
    main = await appState(y, 'main');
    plain = await appState(y, 'plain');
  });

  it('a plain AM beside an opted-in one gets no hand-off, and its own secret opens nothing', async () => {
    assert.equal(plain.registered, true, 'registered through the AMRMProxy of its NodeManager');
    assert.equal(plain.proxy, null, 'no hand-off in its local directories');
    assert.ok(main.proxy, 'the opted-in AM has one');
    // The secret the interceptor would derive for it (HMAC-SHA256 of the application id, the NodeManagers' key).
    const key = fs.readFileSync(path.join(y.workDir, 'yarn', 'amrm-proxy.key'));
    const secret = crypto.createHmac('sha256', key).update(y.applications.plain).digest('hex');
    const r = await http(main.proxy!.address, 'GET', '/amrm/v1/attempt', undefined, { authorization: `Bearer ${secret}` });
    assert.equal(r.status, 401, 'nothing is served for it');
  });

  it("a plain AM's own blacklist reaches the RM exactly as it sent it, as without the interceptor", async () => {
    const bare = await appState(y, 'bare');
    assert.deepEqual(plain.schedulerBlacklist, [PLAIN_OWN_HOST]);
    assert.deepEqual(bare.schedulerBlacklist, [PLAIN_OWN_HOST], 'the same AM without the interceptor');
  });

  it('nothing of a plain AM is kept in any NodeManager state store by the interceptor', async () => {
    const attemptPrefix = (app: string): string => app.replace(/^application_/, 'appattempt_');
    let mainKeys = 0;
    for (const host of y.nodes) {
      const s = await control<Store>(y, 'GET', `/nodes/${host}/amrmproxy-store`);
      for (const [attempt, keys] of Object.entries(s.attempts)) {
        const ours = keys.filter((k) => k.startsWith('blocklist-interceptor.'));
        if (attempt.startsWith(attemptPrefix(y.applications.plain))) assert.deepEqual(ours, [], `${attempt} on ${host}`);
        if (attempt.startsWith(attemptPrefix(y.applications.main))) mainKeys += ours.length;
      }
    }
    assert.ok(mainKeys > 0, "main's state is stored (the check can see the interceptor's keys)");
  });

  it('allocate latency of a plain AM with the interceptor in its pipeline and without (same run, reported)', async () => {
    const enough = (l: Latency): boolean => l.count >= 40;
    const [withIt, without] = await until('40 timed allocates of both plain AMs', 50_000, async () => {
      const a = await control<Latency>(y, 'GET', '/apps/plain/allocate-latency');
      const b = await control<Latency>(y, 'GET', '/apps/bare/allocate-latency');
      return enough(a) && enough(b) ? [a, b] : undefined;
    });
    const fmt = (l: Latency): string => `p50 ${l.p50Us} µs, p90 ${l.p90Us} µs, p99 ${l.p99Us} µs over ${l.count}`;
    console.log(`      plain AM allocate through the AMRMProxy: with the interceptor (not opted in) ${fmt(withIt)}; without it ${fmt(without)}`);
    assert.ok(withIt.p50Us! > 0 && without.p50Us! > 0);
  });
});
