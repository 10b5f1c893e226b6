import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigError, describeConfig, effectiveConfig, loadConfig, parseDynamicProperties } from '../../src/config/config';
import { formatDuration, parseDuration } from '../../src/model/duration';
import { tempDir } from '../support/paths';

function problems(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.problems.join('\n');
  }
  assert.fail('expected a ConfigError');
}

describe('config', () => {
  it('has working defaults (embedded SQLite store on loopback)', () => {
    const c = loadConfig();
    assert.equal(c.values['rest.bind-address'], '127.0.0.1');
    assert.equal(c.values['cluster.resource-blocklist.store.type'], 'sqlite');
    assert.equal(c.values['cluster.resource-blocklist.poll-interval'], 1000);
    assert.equal(c.values['cluster.resource-blocklist.max-blocked-fraction'], 0.33);
    assert.equal(c.sources['rest.port'], 'default');
  });

  it('layers defaults < file < environment < -D flags', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(file, 'rest.port: 9001\ncluster.resource-blocklist.poll-interval: 500 ms\ncluster.resource-blocklist.enabled: false\n');
    const c = loadConfig({ file, env: { BLOCKLIST_REST_PORT: '9002' }, dynamic: parseDynamicProperties(['-Dcluster.resource-blocklist.poll-interval=2 s']) });
    assert.equal(c.values['rest.port'], 9002);
    assert.equal(c.sources['rest.port'], 'env');
    assert.equal(c.values['cluster.resource-blocklist.poll-interval'], 2000);
    assert.equal(c.sources['cluster.resource-blocklist.poll-interval'], 'flag');
    assert.equal(c.values['cluster.resource-blocklist.enabled'], false);
  });

  it('stops on an unknown key, naming it and the nearest known key', () => {
    const p = problems(() => loadConfig({ dynamic: { 'cluster.resource-blocklist.poll-intervall': '1 s' } }));
    assert.match(p, /unknown key 'cluster\.resource-blocklist\.poll-intervall'.*did you mean 'cluster\.resource-blocklist\.poll-interval'/);
  });

  it('stops on bad values, naming the key and where the value came from', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(file, 'rest.port: 99999\ncluster.resource-blocklist.store.type: etcd\n');
    const p = problems(() => loadConfig({ file, dynamic: { 'cluster.resource-blocklist.max-blocked-fraction': '1.5', 'cluster.resource-blocklist.expiry.cron': 'every minute' } }));
    assert.match(p, /rest\.port: 99999 is outside 0\.\.65535 \(from file\)/);
    assert.match(p, /store\.type: 'etcd' is not one of sqlite, zookeeper/);
    assert.match(p, /max-blocked-fraction: '1\.5' is not a fraction/);
    assert.match(p, /expiry\.cron: 'every minute' is not a valid cron expression/);
  });

  it('refuses nested YAML (keys are flat, as in Flink) and malformed -D flags', () => {
    const dir = tempDir();
    const file = path.join(dir, 'c.yaml');
    fs.writeFileSync(file, 'rest:\n  port: 1\n');
    assert.match(problems(() => loadConfig({ file })), /must be a plain value, not a map/);
    assert.match(problems(() => parseDynamicProperties(['-Drest.port'])), /-Dkey=value/);
  });

  it('shows each value as it was given (a duration as 30 s, not 30000), secrets masked and never their text', () => {
    const c = loadConfig({ env: {}, dynamic: { 'cluster.resource-blocklist.poll-interval': '30 s', 'cluster.resource-blocklist.store.zookeeper.auth': 'ops:s3cret' } });
    const lines = describeConfig(c);
    assert.ok(lines.includes('cluster.resource-blocklist.poll-interval: 30 s  (flag)'), lines.filter((l) => l.includes('poll-interval')).join());
    assert.ok(lines.some((l) => l.startsWith('cluster.resource-blocklist.yarn.refresh-interval: 10 s  (default)')));
    const auth = effectiveConfig(c).find((e) => e.key === 'cluster.resource-blocklist.store.zookeeper.auth');
    assert.deepEqual([auth?.value, auth?.given], ['******', undefined]);
    assert.equal(effectiveConfig(c).find((e) => e.key === 'cluster.resource-blocklist.poll-interval')?.value, '30000', 'the value itself stays the number programs read');
  });

  it('parses Flink-style durations', () => {
    assert.equal(parseDuration('500 ms'), 500);
    assert.equal(parseDuration('30 s'), 30_000);
    assert.equal(parseDuration('1 min'), 60_000);
    assert.equal(parseDuration('2h'), 7_200_000);
    assert.equal(parseDuration('10m'), 600_000);
    assert.equal(parseDuration('1500'), 1500);
    assert.equal(parseDuration('-1 s', { allowNegative: true }), -1000);
    assert.throws(() => parseDuration('-1 s'), /negative/);
    assert.throws(() => parseDuration('5 fortnights'), /unknown time unit/);
    assert.equal(formatDuration(3_600_000), '1 h');
    assert.equal(formatDuration(90_000), '90 s');
  });
});
