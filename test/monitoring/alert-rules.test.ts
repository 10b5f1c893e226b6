/**
 * deploy/prometheus/blocklist-alerts.yml: Prometheus accepts it (promtool check rules) and every
 * rule behaves as its test says (promtool test rules blocklist-alerts.test.yml): each alert has a
 * case in which it fires and one in which it must stay quiet.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { parse } from 'yaml';
import { RULES_FILE, RULES_TEST_FILE, alertRules, promtool, requirePromtool } from './support';

interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

describe('monitoring: the alert rules, under promtool', function () {
  this.timeout(60_000);
  before(function () {
    requirePromtool(this);
  });

  it('promtool check rules accepts them', () => {
    const r = promtool(['check', 'rules', RULES_FILE]);
    assert.ok(r.ok, r.output);
    assert.match(r.output, /SUCCESS: 9 rules found/);
  });

  it('every rule has a case where it fires and one where it does not', () => {
    const tests = (parse(fs.readFileSync(RULES_TEST_FILE, 'utf8')) as { tests: RuleTest[] }).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const rule of alertRules()) {
      const cases = tests.filter((t) => t.alertname === rule.alert);
      assert.ok(cases.some((c) => c.exp_alerts.length > 0), `${rule.alert} is tested firing`);
      assert.ok(cases.some((c) => c.exp_alerts.length === 0), `${rule.alert} is tested quiet`);
      assert.ok(rule.labels?.severity, `${rule.alert} has a severity`);
      assert.match(rule.annotations?.description ?? '', new RegExp(`docs/operations\\.md#${rule.alert.toLowerCase()}`), `${rule.alert} links its runbook`);
    }
  });

  it('promtool test rules: every case passes', () => {
    const r = promtool(['test', 'rules', RULES_TEST_FILE]);
    assert.ok(r.ok, r.output);
    assert.match(r.output, /SUCCESS/);
  });
});
