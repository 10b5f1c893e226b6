/**
 * SASL GSSAPI (RFC 4752) for ZooKeeper logins (store/zookeeper/sasl.ts carries the tokens), with
 * MIT Kerberos through the optional `kerberos` package and the sidecar's keytab login
 * (kerberos.ts: its credential cache, renewed at 80 % of the ticket's life). Each connection asks
 * for a ticket for `<service>/<server host>@REALM` — GSSAPI's host-based name `<service>@<host>`,
 * the host as the quorum names it; MIT maps it to a realm (and canonicalises the host when
 * krb5.conf says so), as ZooKeeper's Java client does with `zookeeper.sasl.client.username`.
 *
 * The exchange: the context tokens (AP-REQ, the server's AP-REP) until the context is complete;
 * then the server's wrapped offer of security layers, unwrapped, and answered wrapped: no
 * security layer (ZooKeeper uses none) and the authenticated principal as the authorization id
 * (older servers authorise only that name); the server's last answer ends it.
 */
import { Clock } from '../core/clock';
import { Logger } from '../core/logger';
import { ConfigValues } from '../config/keys';
import { SaslConversation, SaslMechanism } from '../store/zookeeper/sasl';
import { GssClient, GssLibrary, KerberosLogin, explainGssError, kerberosSettings, loadGssLibrary } from './kerberos';

export interface ZookeeperGssapiOptions {
  login: KerberosLogin;
  /** The servers' service name (`zookeeper`). */
  serviceName: string;
  keytab: string;
  /** GSSAPI; loadGssLibrary() when absent. */
  gss?: GssLibrary;
}

export class ZookeeperGssapi implements SaslMechanism {
  readonly name = 'GSSAPI';
  private readonly gss: GssLibrary;

  constructor(private readonly opts: ZookeeperGssapiOptions) {
    this.gss = opts.gss ?? loadGssLibrary();
    if (this.gss.GSS_MECH_OID_KRB5 === undefined) throw new Error("the 'kerberos' npm package does not offer GSS_MECH_OID_KRB5");
  }

  async start(host: string): Promise<SaslConversation> {
    const { login, serviceName } = this.opts;
    // A renewal in flight replaces the credential cache: wait for it rather than read it half-made.
    await login.ready();
    const service = `${serviceName}@${host}`;
    const said = (e: unknown): Error => new Error(explainGssError((e as Error).message ?? String(e), { principal: login.principal, keytab: this.opts.keytab, service: `${serviceName}/${host}` }));
    let client: GssClient;
    try {
      client = await this.gss.initializeClient(service, { principal: login.principal, ...(this.gss.GSS_MECH_OID_KRB5 !== undefined ? { mechOID: this.gss.GSS_MECH_OID_KRB5 } : {}) });
    } catch (e) {
      throw said(e);
    }
    return conversation(client, login.principal, said);
  }
}

/** The client side of one exchange; each step's failure in an operator's words. */
function conversation(client: GssClient, principal: string, said: (e: unknown) => Error): SaslConversation {
  let phase: 'context' | 'layer' | 'done' = 'context';
  const b64 = (t: Buffer | undefined): string => (t ? t.toString('base64') : '');
  return {
    async next(token) {
      try {
        if (phase === 'context') {
          // A complete context may have no token to send (null): ZooKeeper's client sends an empty one.
          const out: string | null = await client.step(b64(token));
          if (client.contextComplete) phase = 'layer';
          return Buffer.from(out ?? '', 'base64');
        }
        if (phase === 'layer') {
          if (!token || !client.unwrap || !client.wrap) throw new Error("no security-layer offer to answer (or the 'kerberos' package cannot wrap)");
          const offer = await client.unwrap(b64(token));
          const answer: string | null = await client.wrap(offer, { user: client.username || principal });
          if (!answer) throw new Error('GSSAPI wrapped no answer to the security-layer offer');
          phase = 'done';
          return Buffer.from(answer, 'base64');
        }
        return undefined;
      } catch (e) {
        throw said(e);
      }
    },
  };
}

export type ZookeeperSaslSettings = { kind: 'off' } | { kind: 'gssapi'; serviceName: string; acl: string[]; keytab: string; principal: string; krb5Conf?: string };

/** The ZooKeeper SASL keys as one decision; a half-configured login is a configuration error. */
export function zookeeperSaslSettings(v: ConfigValues): ZookeeperSaslSettings | { kind: 'invalid'; problem: string } {
  if (v['cluster.resource-blocklist.store.type'] !== 'zookeeper' || !v['cluster.resource-blocklist.store.zookeeper.sasl.enabled']) return { kind: 'off' };
  if (v['cluster.resource-blocklist.store.zookeeper.auth']) {
    return { kind: 'invalid', problem: 'cluster.resource-blocklist.store.zookeeper.sasl.enabled and cluster.resource-blocklist.store.zookeeper.auth (digest) are both set: choose one (the znodes get one ACL)' };
  }
  const k = kerberosSettings(v);
  if (k.kind === 'invalid') return k;
  if (k.kind === 'off') return { kind: 'invalid', problem: 'cluster.resource-blocklist.store.zookeeper.sasl.enabled needs a Kerberos login: set security.kerberos.login.keytab and security.kerberos.login.principal' };
  const serviceName = v['cluster.resource-blocklist.store.zookeeper.sasl.service-name'].trim();
  if (!/^[^\s@/]+$/.test(serviceName)) return { kind: 'invalid', problem: `cluster.resource-blocklist.store.zookeeper.sasl.service-name '${serviceName}' is not a service name (no blanks, '/' or '@')` };
  const acl = v['cluster.resource-blocklist.store.zookeeper.sasl.acl'].split(',').map((a) => a.trim()).filter((a) => a !== '');
  return { kind: 'gssapi', serviceName, acl, keytab: k.keytab, principal: k.principal, ...(k.krb5Conf ? { krb5Conf: k.krb5Conf } : {}) };
}

/**
 * With SASL to ZooKeeper: the sidecar's Kerberos login (its first ticket fetched for the first
 * server of the quorum, so a wrong keytab stops start-up with the KDC's answer) and the mechanism
 * the session uses. The login is the sidecar's one: the RM client uses it too. Undefined when off.
 */
export async function startZookeeperLogin(s: ZookeeperSaslSettings, quorum: string, clock: Clock, logger: Logger): Promise<{ login: KerberosLogin; mechanism: ZookeeperGssapi } | undefined> {
  if (s.kind === 'off') return undefined;
  const firstHost = quorum.split('/')[0].split(',')[0].trim().replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  const login = new KerberosLogin({
    principal: s.principal,
    keytab: s.keytab,
    ...(s.krb5Conf ? { krb5Conf: s.krb5Conf } : {}),
    probeHost: firstHost,
    probeService: `${s.serviceName}@${firstHost}`,
    clock,
    logger: logger.child({ component: 'kerberos' }),
  });
  try {
    await login.start();
    return { login, mechanism: new ZookeeperGssapi({ login, serviceName: s.serviceName, keytab: s.keytab }) };
  } catch (e) {
    await login.stop();
    throw e;
  }
}
