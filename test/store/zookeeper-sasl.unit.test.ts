/**
 * The SASL extension's wire format (store/zookeeper/sasl.ts) and the GSSAPI conversation
 * (security/zookeeper-gssapi.ts) on a fake GSSAPI library: tokens framed as ZooKeeper's
 * GetSASLRequest / SetSASLResponse, answers split off a byte stream, and the RFC 4752 phases.
 * The real exchange with a real KDC and ZooKeeper: test/kerberos/zookeeper-sasl.test.ts.
 */
import { strict as assert } from 'node:assert';
import { OP_SASL, saslRequestFrame, takeSaslReply } from '../../src/store/zookeeper/sasl';
import { ZookeeperGssapi, zookeeperSaslSettings } from '../../src/security/zookeeper-gssapi';
import { loadConfig } from '../../src/config/config';
import { GssClient, GssLibrary, KerberosLogin } from '../../src/security/kerberos';

/** A SetSASLResponse answer as a server sends it. */
function answer(xid: number, err: number, token: Buffer | null): Buffer {
  const body = err === 0 ? 4 + (token?.length ?? 0) : 0;
  const f = Buffer.alloc(4 + 16 + body);
  f.writeInt32BE(16 + body, 0);
  f.writeInt32BE(xid, 4);
  f.writeBigInt64BE(42n, 8);
  f.writeInt32BE(err, 16);
  if (err === 0) {
    f.writeInt32BE(token ? token.length : -1, 20);
    token?.copy(f, 24);
  }
  return f;
}

describe('store/zookeeper/sasl: the wire format', () => {
  it('a request is length, xid, opcode 102 and the token as a jute buffer', () => {
    const f = saslRequestFrame(7, Buffer.from('abc'));
    assert.deepEqual([...f], [0, 0, 0, 15, 0, 0, 0, 7, 0, 0, 0, OP_SASL, 0, 0, 0, 3, 97, 98, 99]);
  });

  it('answers are taken one frame at a time, whole frames only; a null token is absent; an error carries no body', () => {
    const a = answer(3, 0, Buffer.from('tok'));
    assert.equal(takeSaslReply(a.subarray(0, 10)), undefined, 'incomplete');
    const both = Buffer.concat([a, answer(4, 0, null), Buffer.from([0, 0])]);
    const first = takeSaslReply(both)!;
    assert.deepEqual({ ...first.reply, token: first.reply.token?.toString() }, { xid: 3, err: 0, token: 'tok' });
    const second = takeSaslReply(first.rest)!;
    assert.deepEqual(second.reply, { xid: 4, err: 0 });
    assert.deepEqual([...second.rest], [0, 0]);
    assert.deepEqual(takeSaslReply(answer(5, -124, null))!.reply, { xid: 5, err: -124 });
  });

  it('a frame that cannot be a SASL answer is refused', () => {
    const bad = Buffer.alloc(8);
    bad.writeInt32BE(2 << 20, 0);
    assert.throws(() => takeSaslReply(bad), /a SASL answer of/);
    const lying = answer(1, 0, Buffer.from('x'));
    lying.writeInt32BE(99, 20);
    assert.throws(() => takeSaslReply(lying), /a SASL token of 99 bytes/);
  });
});

describe('security/zookeeper-gssapi: the RFC 4752 conversation', () => {
  it('context tokens until complete, then the offer unwrapped and answered wrapped with the principal; then nothing more', async () => {
    const calls: string[] = [];
    let complete = false;
    const client: GssClient = {
      get contextComplete() {
        return complete;
      },
      username: 'blocklist@R',
      async step(t) {
        calls.push(`step(${t})`);
        if (t === '') return Buffer.from('AP-REQ').toString('base64');
        complete = true;
        return '';
      },
      async unwrap(t) {
        calls.push(`unwrap(${Buffer.from(t, 'base64')})`);
        return 'T0ZGRVI=';
      },
      async wrap(t, o) {
        calls.push(`wrap(${t},${o?.user})`);
        return Buffer.from('ANSWER').toString('base64');
      },
    };
    const gss: GssLibrary = {
      GSS_MECH_OID_SPNEGO: 6,
      GSS_MECH_OID_KRB5: 9,
      async initializeClient(service, o) {
        calls.push(`init(${service},${o.principal},${o.mechOID})`);
        return client;
      },
    };
    const login = { principal: 'blocklist@R', ready: async () => undefined } as unknown as KerberosLogin;
    const conv = await new ZookeeperGssapi({ login, serviceName: 'zookeeper', keytab: '/k', gss }).start('zk1.example.com');
    assert.equal((await conv.next(undefined))?.toString(), 'AP-REQ');
    assert.equal((await conv.next(Buffer.from('AP-REP')))?.length, 0, 'an empty token once the context is complete');
    assert.equal((await conv.next(Buffer.from('OFFER')))?.toString(), 'ANSWER');
    assert.equal(await conv.next(undefined), undefined, 'the exchange is complete');
    assert.deepEqual(calls, ['init(zookeeper@zk1.example.com,blocklist@R,9)', 'step()', `step(${Buffer.from('AP-REP').toString('base64')})`, 'unwrap(OFFER)', 'wrap(T0ZGRVI=,blocklist@R)']);
  });
});

describe('security/zookeeper-gssapi: the keys as one decision', () => {
  const values = (over: Record<string, string>) =>
    loadConfig({ env: {}, dynamic: { 'cluster.resource-blocklist.store.type': 'zookeeper', 'cluster.resource-blocklist.store.zookeeper.quorum': 'zk1:2181', ...over } }).values;
  const login = { 'security.kerberos.login.keytab': '/k', 'security.kerberos.login.principal': 'flink@R' };
  it('off unless enabled on the ZooKeeper store; a login and no digest required; acl names split', () => {
    assert.equal(zookeeperSaslSettings(values({})).kind, 'off');
    assert.equal(zookeeperSaslSettings(values({ 'cluster.resource-blocklist.store.type': 'sqlite', 'cluster.resource-blocklist.store.zookeeper.sasl.enabled': 'true' })).kind, 'off');
    const on = { 'cluster.resource-blocklist.store.zookeeper.sasl.enabled': 'true' };
    assert.match((zookeeperSaslSettings(values(on)) as { problem: string }).problem, /needs a Kerberos login/);
    assert.match((zookeeperSaslSettings(values({ ...on, ...login, 'cluster.resource-blocklist.store.zookeeper.auth': 'u:p' })) as { problem: string }).problem, /both set: choose one/);
    assert.match((zookeeperSaslSettings(values({ ...on, ...login, 'cluster.resource-blocklist.store.zookeeper.sasl.service-name': 'zk/x' })) as { problem: string }).problem, /not a service name/);
    assert.deepEqual(zookeeperSaslSettings(values({ ...on, ...login, 'cluster.resource-blocklist.store.zookeeper.sasl.acl': ' a@R, b ,' })), {
      kind: 'gssapi',
      serviceName: 'zookeeper',
      acl: ['a@R', 'b'],
      keytab: '/k',
      principal: 'flink@R',
    });
  });
});
