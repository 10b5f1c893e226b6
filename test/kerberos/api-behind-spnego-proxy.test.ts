/**
 * docs/security.md's "Kerberos for the sidecar's own API" set-up, run as written: Apache httpd +
 * mod_auth_gssapi in front of a sidecar that keeps its bearer tokens. Every Kerberos user reads (the
 * proxy sends the viewer token), only the named principal changes anything (the proxy sends the
 * admin token), and the client's own Negotiate header never reaches the sidecar.
 */
import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { systemClock } from '../../src/core/clock';
import { silentLogger } from '../../src/core/logger';
import { Sidecar, startSidecar } from '../../src/sidecar/sidecar';
import { KerberosLogin } from '../../src/security/kerberos';
import { Httpd, Kdc, REALM, kerberosTempDir, requireKerberos, startHttpd, startKdc } from './harness';

const KRB_ENV = ['KRB5_CONFIG', 'KRB5CCNAME', 'KRB5_CLIENT_KTNAME'] as const;
const VIEWER = 'proxy-viewer-T0ken-0123456789abcdef';
const ADMIN = 'proxy-admin-T0ken-0123456789abcdef';

/** The virtual host body of docs/security.md with the test's paths and names filled in. */
export function spnegoApiProxyVhost(o: { keytab: string; sidecar: string; admins: string[]; tokensConf: string }): string {
  return `  Include ${o.tokensConf}
  ProxyPass / ${o.sidecar}/
  <Location />
    AuthType GSSAPI
    AuthName "blocklist"
    GssapiCredStore keytab:${o.keytab}
    GssapiAllowedMech krb5
    GssapiBasicAuth Off
    # An authenticated principal that may not change things gets 403, not another 401 challenge.
    AuthzSendForbiddenOnFailure On
    <RequireAll>
      Require valid-user
      <RequireAny>
        Require method GET HEAD
        Require user ${o.admins.join(' ')}
      </RequireAny>
    </RequireAll>
    # The client's Negotiate header is replaced: the sidecar sees only its own bearer tokens.
    <If "%{REQUEST_METHOD} in { 'GET', 'HEAD' }">
      RequestHeader set Authorization "Bearer \${BLOCKLIST_VIEWER_TOKEN}"
    </If>
    <Else>
      RequestHeader set Authorization "Bearer \${BLOCKLIST_ADMIN_TOKEN}"
    </Else>
  </Location>`;
}

describe('kerberos: the sidecar\'s own API behind a SPNEGO reverse proxy (httpd + mod_auth_gssapi, bearer tokens kept)', function () {
  this.timeout(30_000);
  let dir: string;
  let kdc: Kdc;
  let httpd: Httpd;
  let sidecar: Sidecar;
  let base: string;
  let savedEnv: Partial<Record<(typeof KRB_ENV)[number], string>>;

  before(async function () {
    requireKerberos(this);
    savedEnv = Object.fromEntries(KRB_ENV.map((k) => [k, process.env[k]]));
    dir = kerberosTempDir();
    kdc = await startKdc(dir);
    for (const p of ['alice', 'bob', 'HTTP/127.0.0.1']) kdc.addPrincipal(p);
    const tokens = path.join(dir, 'tokens.yaml');
    fs.writeFileSync(tokens, `tokens:\n  "${ADMIN}": { name: spnego-proxy-admin, role: admin }\n  "${VIEWER}": { name: spnego-proxy-viewer, role: viewer }\n`, { mode: 0o600 });
    const config = loadConfig({
      env: {},
      dynamic: { 'rest.port': '0', 'rest.auth.tokens-file': tokens, 'cluster.resource-blocklist.store.sqlite.path': path.join(dir, 'blocklist.db') },
    });
    sidecar = await startSidecar({ config, clock: systemClock, logger: silentLogger });
    const tokensConf = path.join(dir, 'blocklist-tokens.conf');
    fs.writeFileSync(tokensConf, `Define BLOCKLIST_VIEWER_TOKEN ${VIEWER}\nDefine BLOCKLIST_ADMIN_TOKEN ${ADMIN}\n`, { mode: 0o600 });
    const keytab = kdc.exportKeytab(path.join(dir, 'http.keytab'), 'HTTP/127.0.0.1');
    httpd = await startHttpd(dir, kdc.krb5Conf, [
      { kind: 'custom', host: '127.0.0.1', body: spnegoApiProxyVhost({ keytab, sidecar: sidecar.url, admins: [`alice@${REALM}`], tokensConf }) },
    ]);
    base = `http://127.0.0.1:${httpd.ports[0]}`;
  });

  after(async () => {
    for (const k of KRB_ENV) {
      if (savedEnv?.[k] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[k];
    }
    await httpd?.stop();
    await sidecar?.close();
    await kdc?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A Negotiate header of `who` for the proxy (HTTP/127.0.0.1), from the user's own keytab. */
  async function negotiate(who: string): Promise<string> {
    const keytab = kdc.exportKeytab(path.join(dir, `${who}.keytab`), who);
    const login = new KerberosLogin({ principal: `${who}@${REALM}`, keytab, krb5Conf: kdc.krb5Conf, probeHost: '127.0.0.1', clock: systemClock, cacheDir: fs.mkdtempSync(path.join(dir, `${who}-cc-`)) });
    await login.start();
    const header = (await login.authorize('127.0.0.1')).header;
    await login.stop();
    return header;
  }

  const put = (auth: string | undefined, node: string) =>
    fetch(`${base}/blocklist/nodes/${node}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...(auth ? { Authorization: auth } : {}) },
      body: JSON.stringify({ action: 'MARK_BLOCKED', cause: 'via spnego proxy', endTimestamp: Date.now() + 3_600_000 }),
    });

  it('no ticket: 401 Negotiate from the proxy; any Kerberos user reads; only the named admin changes the blocklist', async () => {
    const anonymous = await fetch(`${base}/blocklist`);
    assert.equal(anonymous.status, 401);
    assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Negotiate/);

    const bobRead = await fetch(`${base}/blocklist`, { headers: { Authorization: await negotiate('bob') } });
    assert.equal(bobRead.status, 200, await bobRead.text());

    const bobWrite = await put(await negotiate('bob'), 'node1');
    assert.equal(bobWrite.status, 403, 'the proxy refuses a change by a principal not named');
    assert.equal((await sidecar.store.list()).length, 0);

    const aliceWrite = await put(await negotiate('alice'), 'node1');
    assert.ok(aliceWrite.ok, `${aliceWrite.status} ${await aliceWrite.text()}`);
    const items = await sidecar.store.list();
    assert.deepEqual(items.map((i) => [i.id, i.created.by]), [['node1', 'spnego-proxy-admin']]);
  });

  it('a client bearer token is not passed through: the proxy always replaces Authorization', async () => {
    // Straight to the proxy with a bearer header instead of Negotiate: refused before the sidecar.
    const r = await put(`Bearer ${ADMIN}`, 'node2');
    assert.equal(r.status, 401);
    assert.equal((await sidecar.store.list()).some((i) => i.id === 'node2'), false);
  });
});
