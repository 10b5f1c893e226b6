/**
 * SASL logins to ZooKeeper (a Kerberos-secured ensemble: `enforce.auth.schemes=sasl`), as a small
 * extension of node-zookeeper-client, which speaks only `addauth` (digest). ZooKeeper's own client
 * (ClientCnxn, ZooKeeperSaslClient) authenticates every new connection the same way, and so does
 * this: once the server has answered the connect request, and before any other request leaves,
 * SASL tokens go back and forth as requests of opcode 102 (`sasl`) with a GetSASLRequest body (one
 * buffer) and answers with a SetSASLResponse body (one buffer) under the request's xid; the
 * server refuses every other request of a connection that has not authenticated. The requests
 * the library queues meanwhile (the digest `auth` packet, SetWatches, the callers' own) are held
 * and sent once the exchange has completed. docs/zookeeper.md (SASL) cites the sources.
 *
 * The mechanism itself (GSSAPI with MIT Kerberos) is a port the security layer implements
 * (security/zookeeper-gssapi.ts): this file knows only tokens. It touches the library's
 * connection manager in four places, all checked when it is installed, so that a library upgrade
 * that changes them fails at start-up instead of sending requests unauthenticated.
 */
import * as zk from 'node-zookeeper-client';
import { Logger } from '../../core/logger';

/** One SASL exchange with one server, as the mechanism leads it. */
export interface SaslConversation {
  /**
   * The token to send for the server's last one (undefined before the first), or undefined when
   * the client has nothing more to send: the exchange is then complete.
   */
  next(serverToken: Buffer | undefined): Promise<Buffer | undefined>;
}

export interface SaslMechanism {
  /** `GSSAPI`, for log lines. */
  readonly name: string;
  /** A new exchange with the server `host` (as the connect string names it). */
  start(host: string): Promise<SaslConversation>;
}

/** ZooKeeper's opcode of a SASL request (ZooDefs.OpCode.sasl). */
export const OP_SASL = 102;
/** The answer of a server that requires SASL to a connection that did not authenticate (KeeperException.Code.SESSIONCLOSEDREQUIRESASLAUTH). */
export const SESSION_CLOSED_REQUIRE_SASL_AUTH = -124;
const OK = 0;
/** A token bigger than this is not a Kerberos token: the frame is a protocol error. */
const MAX_TOKEN = 1 << 20;

/** A request frame: length, RequestHeader (xid, type), GetSASLRequest (the token as a jute buffer). */
export function saslRequestFrame(xid: number, token: Buffer): Buffer {
  const f = Buffer.alloc(4 + 8 + 4 + token.length);
  f.writeInt32BE(f.length - 4, 0);
  f.writeInt32BE(xid, 4);
  f.writeInt32BE(OP_SASL, 8);
  f.writeInt32BE(token.length, 12);
  token.copy(f, 16);
  return f;
}

export interface SaslReply {
  xid: number;
  /** ZooKeeper's error code (0 = OK). */
  err: number;
  /** The server's token (absent: a null buffer, the last answer of a GSSAPI exchange). */
  token?: Buffer;
}

/** The first whole frame of `buf` as a SASL answer, and the bytes after it; undefined while it is incomplete. */
export function takeSaslReply(buf: Buffer): { reply: SaslReply; rest: Buffer } | undefined {
  if (buf.length < 4) return undefined;
  const size = buf.readInt32BE(0);
  if (size < 16 || size > MAX_TOKEN) throw new Error(`a SASL answer of ${size} bytes`);
  if (buf.length - 4 < size) return undefined;
  const f = buf.subarray(4, 4 + size);
  // ReplyHeader: xid int32, zxid int64, err int32; then, when OK, SetSASLResponse: one buffer.
  const reply: SaslReply = { xid: f.readInt32BE(0), err: f.readInt32BE(12) };
  if (reply.err === OK && f.length >= 20) {
    const n = f.readInt32BE(16);
    if (n > f.length - 20) throw new Error(`a SASL token of ${n} bytes in a frame of ${size}`);
    if (n >= 0) reply.token = Buffer.from(f.subarray(20, 20 + n));
  }
  return { reply, rest: buf.subarray(4 + size) };
}

/** The library's connection manager, as far as this extension uses it. */
interface Connection {
  state: number;
  xid: number;
  socket?: { write(b: Buffer): boolean; destroy(): void; once(ev: 'close', fn: () => void): void };
  packetQueue: { shift(): unknown };
  onSocketConnected: () => void;
  onSocketData: (buf: Buffer) => void;
  onPacketQueueReadable: () => void;
  findNextServer: (cb: (server: { host: string; port: number }) => void) => void;
  setState(state: number): void;
}

interface States {
  CONNECTING: number;
  CONNECTED: number;
  AUTHENTICATION_FAILED: number;
}

function connectionOf(c: zk.Client): { cm: Connection; states: States } {
  const cm = (c as unknown as { connectionManager?: Connection }).connectionManager;
  const states = (require('node-zookeeper-client/lib/ConnectionManager.js') as { STATES?: States }).STATES;
  const shaped =
    cm &&
    states &&
    typeof cm.onSocketConnected === 'function' &&
    typeof cm.onSocketData === 'function' &&
    typeof cm.onPacketQueueReadable === 'function' &&
    typeof cm.findNextServer === 'function' &&
    typeof cm.packetQueue?.shift === 'function' &&
    typeof cm.xid === 'number';
  if (!shaped) throw new Error('node-zookeeper-client internals changed: cannot add SASL to its connections (zookeeper/sasl.ts)');
  return { cm, states };
}

export interface SaslOptions {
  mechanism: SaslMechanism;
  log: () => Logger;
}

/** Makes every connection of `client` authenticate with SASL before anything else is sent. Call before connect(). */
export function enableSasl(client: zk.Client, opts: SaslOptions): void {
  const { cm, states } = connectionOf(client);
  let server = '';
  /** Requests wait while a connection has not authenticated. */
  let held = true;
  /** The connection being authenticated: its bytes come here instead of to the library. */
  let exchange: Exchange | undefined;

  const findNextServer = cm.findNextServer;
  cm.findNextServer = function (this: Connection, cb) {
    findNextServer.call(this, (s) => {
      server = s.host;
      cb(s);
    });
  };
  const shift = cm.packetQueue.shift;
  cm.packetQueue.shift = function (this: unknown) {
    return held ? undefined : shift.call(this);
  };
  const connected = cm.onSocketConnected;
  cm.onSocketConnected = function (this: Connection) {
    held = true;
    exchange?.abort('a new connection');
    exchange = undefined;
    connected.call(this);
  };
  const data = cm.onSocketData;
  cm.onSocketData = function (this: Connection, buf: Buffer) {
    if (exchange) return exchange.receive(buf);
    const connecting = this.state === states.CONNECTING;
    data.call(this, buf);
    // The connect request's answer: a session. Authenticate before the library sends anything.
    if (connecting && this.state === states.CONNECTED && held && this.socket) {
      const x = new Exchange(this, opts, server, (leftover) => {
        exchange = undefined;
        held = false;
        if (leftover.length) data.call(this, leftover);
        this.onPacketQueueReadable();
      }, (why) => {
        exchange = undefined;
        opts.log().error(`zookeeper: SASL (${opts.mechanism.name}) login to ${server} failed: ${why}`, { server });
        this.setState(states.AUTHENTICATION_FAILED);
        this.socket?.destroy();
      });
      exchange = x;
      x.run();
    }
  };
}

/** One connection's exchange: tokens out as sasl requests, the answers parsed off the socket. */
class Exchange {
  private buffered: Buffer = Buffer.alloc(0);
  private waiting: { xid: number; resolve: (r: SaslReply) => void; reject: (e: Error) => void } | undefined;
  private over = false;

  constructor(
    private readonly cm: Connection,
    private readonly opts: SaslOptions,
    private readonly host: string,
    private readonly done: (leftover: Buffer) => void,
    private readonly failed: (why: string) => void,
  ) {
    cm.socket?.once('close', () => this.abort('the connection closed'));
  }

  run(): void {
    this.converse().then(
      () => {
        if (this.over) return;
        this.over = true;
        this.done(this.buffered);
      },
      (e: Error) => {
        if (this.over) return;
        this.over = true;
        this.failed(e.message);
      },
    );
  }

  private async converse(): Promise<void> {
    const conversation = await this.opts.mechanism.start(this.host);
    let token = await conversation.next(undefined);
    while (token !== undefined) {
      const reply = await this.send(token);
      if (reply.err === SESSION_CLOSED_REQUIRE_SASL_AUTH) throw new Error(`the server refused the login (code ${reply.err}: it requires SASL, and this one failed; see the server's log for why)`);
      if (reply.err !== OK) throw new Error(`the server answered code ${reply.err}`);
      token = await conversation.next(reply.token);
    }
  }

  private send(token: Buffer): Promise<SaslReply> {
    if (this.over) return Promise.reject(new Error('the exchange is over'));
    const xid = this.cm.xid;
    this.cm.xid += 1;
    return new Promise<SaslReply>((resolve, reject) => {
      this.waiting = { xid, resolve, reject };
      this.cm.socket?.write(saslRequestFrame(xid, token));
    });
  }

  receive(buf: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, buf]) : buf;
    // One request is out at a time; bytes after its answer are the library's once the exchange is done.
    if (!this.waiting) return;
    let taken;
    try {
      taken = takeSaslReply(this.buffered);
    } catch (e) {
      this.fail((e as Error).message);
      return;
    }
    if (!taken) return;
    const w = this.waiting;
    this.waiting = undefined;
    this.buffered = taken.rest;
    if (taken.reply.xid !== w.xid) w.reject(new Error(`an answer to xid ${taken.reply.xid}, not to the SASL request ${w.xid}`));
    else w.resolve(taken.reply);
  }

  private fail(why: string): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(new Error(why));
  }

  abort(why: string): void {
    if (this.over) return;
    this.over = true;
    this.waiting?.reject(new Error(why));
    this.waiting = undefined;
  }
}
