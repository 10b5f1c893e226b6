/**
 * Real Kerberos parts for the Kerberos suites, from Debian packages (scripts/ensure-kerberos.sh
 * installs them in CI), all in one temp dir, all on 127.0.0.1:
 *  - an MIT KDC (krb5kdc -n, foreground) for a throwaway realm whose database, stash and keytabs
 *    kdb5_util / kadmin.local make in the temp dir; a krb5.conf pointing at it (used through
 *    KRB5_CONFIG / security.kerberos.krb5-conf.path, never /etc/krb5.conf);
 *  - Apache httpd (apache2 -DFOREGROUND, its own config) with mod_auth_gssapi enforcing SPNEGO in
 *    front of the simulator's RM face, one virtual host per "RM", each holding only its own
 *    HTTP/<host> key, so a token made for the wrong RM is refused.
 * Processes are stopped by their own pid.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../support/zookeeper';

export const REALM = 'BLOCKLIST.TEST';
const isCI = process.env.CI === 'true';
const MODULES = '/usr/lib/apache2/modules';
const BINARIES = ['/usr/sbin/krb5kdc', '/usr/sbin/kdb5_util', '/usr/sbin/kadmin.local', '/usr/sbin/apache2', `${MODULES}/mod_auth_gssapi.so`];

/** Why the Kerberos suites cannot run here, or undefined when they can. */
export function kerberosUnavailableReason(): string | undefined {
  const missing = BINARIES.filter((b) => !fs.existsSync(b));
  if (missing.length) return `${missing.join(', ')} missing (run scripts/ensure-kerberos.sh, or apt-get install -y krb5-kdc krb5-admin-server krb5-user libkrb5-dev apache2 libapache2-mod-auth-gssapi)`;
  try {
    require('kerberos');
  } catch (e) {
    return `the optional npm package 'kerberos' is not built (${(e as Error).message.split('\n')[0]}): install libkrb5-dev, then npm install`;
  }
  return undefined;
}

/** For a suite's before(): skip with the reason outside CI; in CI (where a skip fails the run anyway) fail loudly. */
export function requireKerberos(ctx: Mocha.Context): void {
  const why = kerberosUnavailableReason();
  if (!why) return;
  if (isCI) throw new Error(`Kerberos suites cannot run in CI: ${why}`);
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitForPort(port: number, what: string, proc: ChildProcess, log: () => string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(20);
  }
  throw new Error(`${what} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms: ${log()}`);
}

async function stopProcess(p: ChildProcess | undefined, timeoutMs = 5000): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null || p.pid === undefined) return;
  const exited = new Promise<void>((r) => p.once('exit', () => r()));
  p.kill('SIGTERM');
  const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
  await exited;
  clearTimeout(t);
}

export interface Kdc {
  realm: string;
  port: number;
  dir: string;
  /** krb5.conf for clients and httpd (KRB5_CONFIG). */
  krb5Conf: string;
  /** Runs kadmin.local queries (one per line) against the realm; throws with its output on failure. */
  kadmin(...queries: string[]): string;
  /** Creates principals with random keys; maxlife e.g. "4 seconds". */
  addPrincipal(name: string, opts?: { maxlife?: string }): void;
  /** Exports the principals' current keys to a new keytab file (mode 0644: httpd's workers read it). */
  exportKeytab(file: string, ...principals: string[]): string;
  /** The KDC's log so far (AS_REQ / TGS_REQ lines). */
  log(): string;
  stop(): Promise<void>;
  /** After stop(): the KDC again, on the same port and database (a KDC restart). */
  start(): Promise<void>;
}

export async function startKdc(dir: string): Promise<Kdc> {
  const port = await freePort();
  const krb5Conf = path.join(dir, 'krb5.conf');
  const kdcConf = path.join(dir, 'kdc.conf');
  const logFile = path.join(dir, 'kdc.log');
  // No DNS anywhere (loopback only), TCP only, and a 2 s skew so an expired ticket is refused at once.
  fs.writeFileSync(
    krb5Conf,
    `[libdefaults]
  default_realm = ${REALM}
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
  clockskew = 2
[realms]
  ${REALM} = {
    kdc = 127.0.0.1:${port}
  }
`,
  );
  fs.writeFileSync(
    kdcConf,
    `[kdcdefaults]
  kdc_listen = 127.0.0.1:${port}
  kdc_tcp_listen = 127.0.0.1:${port}
[realms]
  ${REALM} = {
    database_name = ${dir}/principal
    key_stash_file = ${dir}/stash
    acl_file = ${dir}/kadm5.acl
    max_life = 1h
    kdc_listen = 127.0.0.1:${port}
    kdc_tcp_listen = 127.0.0.1:${port}
  }
[logging]
  kdc = FILE:${logFile}
`,
  );
  const env = { ...process.env, KRB5_CONFIG: krb5Conf, KRB5_KDC_PROFILE: kdcConf };
  const created = spawnSync('/usr/sbin/kdb5_util', ['create', '-s', '-r', REALM, '-P', 'throwaway-master-key'], { env, encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`kdb5_util create failed: ${created.stderr}${created.stdout}`);
  let out = '';
  const readLog = (): string => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
  const launch = async (): Promise<ChildProcess> => {
    const p = spawn('/usr/sbin/krb5kdc', ['-n', '-r', REALM, '-P', path.join(dir, 'kdc.pid')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    p.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    await waitForPort(port, 'krb5kdc', p, () => out + readLog());
    return p;
  };
  let proc = await launch();

  const kadmin = (...queries: string[]): string => {
    const r = spawnSync('/usr/sbin/kadmin.local', ['-r', REALM], { env, input: queries.join('\n') + '\n', encoding: 'utf8' });
    const text = `${r.stdout}${r.stderr}`;
    // kadmin.local exits 0 whatever its commands did: its complaints are the stderr lines that say so.
    const complaints = r.stderr.split('\n').filter((l) => /while |does not exist|not found|unknown|error|usage|invalid/i.test(l));
    if (r.status !== 0 || complaints.length) throw new Error(`kadmin.local ${queries.join('; ')} failed: ${text}`);
    return text;
  };
  return {
    realm: REALM,
    port,
    dir,
    krb5Conf,
    kadmin,
    addPrincipal(name, opts = {}) {
      kadmin(`addprinc -randkey${opts.maxlife ? ` -maxlife "${opts.maxlife}"` : ''} ${name}@${REALM}`);
    },
    exportKeytab(file, ...principals) {
      fs.rmSync(file, { force: true });
      // -norandkey: export the current key (ktadd would otherwise change it, breaking earlier keytabs).
      kadmin(...principals.map((p) => `ktadd -norandkey -k ${file} ${p}@${REALM}`));
      fs.chmodSync(file, 0o644);
      return file;
    },
    log: readLog,
    stop: () => stopProcess(proc),
    async start() {
      if (proc.exitCode === null && proc.signalCode === null) return;
      proc = await launch();
    },
  };
}

export type Site =
  | { kind: 'proxy'; host: string; keytab: string; target: string }
  | { kind: 'redirect'; host: string; keytab: string; to: string }
  /** A virtual host's body as given (the docs' reverse-proxy example, tested as written). */
  | { kind: 'custom'; host: string; body: string };

export interface Httpd {
  /** One port per site, in the order given. */
  ports: number[];
  errorLog(): string;
  stop(): Promise<void>;
}

/**
 * httpd with one SPNEGO-protected virtual host per site on 127.0.0.1: `proxy` forwards to the
 * simulator; `redirect` answers 307 to another site after authenticating (as a standby RM does:
 * Hadoop's RMWebAppFilter runs after the authentication filter).
 */
export async function startHttpd(dir: string, krb5Conf: string, sites: Site[], ports?: number[]): Promise<Httpd> {
  const portList = ports ?? (await Promise.all(sites.map(() => freePort())));
  const conf = path.join(dir, 'httpd.conf');
  const errorLog = path.join(dir, 'httpd-error.log');
  const vhosts = sites.map((s, i) => {
    if (s.kind === 'custom') return `<VirtualHost 127.0.0.1:${portList[i]}>\n  ServerName ${s.host}\n${s.body}\n</VirtualHost>`;
    const auth = `    AuthType GSSAPI
    AuthName "${s.host} RM"
    GssapiCredStore keytab:${s.keytab}
    GssapiAllowedMech krb5
    GssapiBasicAuth Off
    Require valid-user`;
    if (s.kind === 'proxy') {
      return `<VirtualHost 127.0.0.1:${portList[i]}>
  ServerName ${s.host}
  ProxyPass / ${s.target.replace(/\/?$/, '/')}
  <Location />
${auth}
    RequestHeader unset Authorization
  </Location>
</VirtualHost>`;
    }
    return `<VirtualHost 127.0.0.1:${portList[i]}>
  ServerName ${s.host}
  <Location />
${auth}
    RewriteEngine On
    RewriteRule ^ ${s.to.replace(/\/$/, '')}%{REQUEST_URI} [R=307,L]
  </Location>
</VirtualHost>`;
  });
  const runAsRoot = process.getuid?.() === 0;
  fs.writeFileSync(
    conf,
    `ServerRoot ${dir}
PidFile ${dir}/httpd.pid
ErrorLog ${errorLog}
LogLevel warn auth_gssapi:info
DefaultRuntimeDir ${dir}
Mutex file:${dir} default
LoadModule mpm_event_module ${MODULES}/mod_mpm_event.so
LoadModule authn_core_module ${MODULES}/mod_authn_core.so
LoadModule authz_core_module ${MODULES}/mod_authz_core.so
LoadModule authz_user_module ${MODULES}/mod_authz_user.so
LoadModule auth_gssapi_module ${MODULES}/mod_auth_gssapi.so
LoadModule proxy_module ${MODULES}/mod_proxy.so
LoadModule proxy_http_module ${MODULES}/mod_proxy_http.so
LoadModule rewrite_module ${MODULES}/mod_rewrite.so
LoadModule headers_module ${MODULES}/mod_headers.so
${runAsRoot ? 'User www-data\nGroup www-data\n' : ''}ServerName 127.0.0.1
StartServers 1
ServerLimit 1
ThreadsPerChild 8
MaxRequestWorkers 8
${portList.map((p) => `Listen 127.0.0.1:${p}`).join('\n')}
${vhosts.join('\n')}
`,
  );
  // httpd's workers run as www-data when started by root: they must read the dir and the keytabs.
  fs.chmodSync(dir, 0o755);
  const env = { ...process.env, KRB5_CONFIG: krb5Conf };
  const proc = spawn('/usr/sbin/apache2', ['-f', conf, '-DFOREGROUND'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const readLog = (): string => (fs.existsSync(errorLog) ? fs.readFileSync(errorLog, 'utf8') : '');
  for (const p of portList) await waitForPort(p, 'apache2', proc, () => out + readLog());
  return { ports: portList, errorLog: readLog, stop: () => stopProcess(proc) };
}

export function kerberosTempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'blocklist-krb-'));
}
