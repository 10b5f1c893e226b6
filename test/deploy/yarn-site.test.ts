import { strict as assert } from 'node:assert';
import { parseYarnSite } from '../../src/yarn/yarn-site';

const conf = (props: Record<string, string>) =>
  `<?xml version="1.0"?>\n<configuration>\n${Object.entries(props)
    .map(([n, v]) => `  <property>\n    <name>${n}</name>\n    <value>${v}</value>\n  </property>`)
    .join('\n')}\n</configuration>\n`;

describe('deploy: the RM web address from yarn-site.xml', () => {
  it('uses yarn.resourcemanager.webapp.address when set', () => {
    assert.deepEqual(parseYarnSite(conf({ 'yarn.resourcemanager.webapp.address': 'rm.example.com:8088' })).rmWebAddresses, ['rm.example.com:8088']);
  });

  it('defaults to ${yarn.resourcemanager.hostname}:8088, expanding variables', () => {
    assert.deepEqual(parseYarnSite(conf({ 'yarn.resourcemanager.hostname': 'rm1.prod' })).rmWebAddresses, ['rm1.prod:8088']);
    assert.deepEqual(
      parseYarnSite(conf({ 'my.host': 'rmx', 'yarn.resourcemanager.hostname': '${my.host}.corp', 'yarn.resourcemanager.webapp.address': '${yarn.resourcemanager.hostname}:18088' })).rmWebAddresses,
      ['rmx.corp:18088'],
    );
  });

  it('lists every RM under HA, from per-id addresses or host names', () => {
    const site = parseYarnSite(
      conf({
        'yarn.resourcemanager.ha.enabled': 'true',
        'yarn.resourcemanager.ha.rm-ids': 'rm1, rm2',
        'yarn.resourcemanager.webapp.address.rm1': 'a.corp:8088',
        'yarn.resourcemanager.hostname.rm2': 'b.corp',
      }),
    );
    assert.deepEqual(site.rmWebAddresses, ['a.corp:8088', 'b.corp:8088']);
  });

  it('uses the https address under yarn.http.policy HTTPS_ONLY', () => {
    const site = parseYarnSite(conf({ 'yarn.http.policy': 'HTTPS_ONLY', 'yarn.resourcemanager.hostname': 'rm.corp' }));
    assert.equal(site.httpsOnly, true);
    assert.deepEqual(site.rmWebAddresses, ['https://rm.corp:8090']);
  });

  it('says what is wrong with a broken file', () => {
    assert.throws(() => parseYarnSite('<configuration><property>', 'x.xml'), /x\.xml/);
    assert.throws(() => parseYarnSite('<foo/>', 'x.xml'), /no <configuration>/);
    assert.throws(() => parseYarnSite(conf({ 'yarn.resourcemanager.ha.enabled': 'true' })), /rm-ids is empty/);
  });
});
