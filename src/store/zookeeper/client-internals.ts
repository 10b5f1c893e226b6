/**
 * The three places where the session reaches into node-zookeeper-client 1.1.3's internals, kept in
 * one file so a library upgrade has one place to check. Each fails loudly or does nothing when the
 * internals change shape; none of them silently changes what is written.
 */
import * as zk from 'node-zookeeper-client';
import { Logger } from '../../core/logger';

/**
 * The library's Transaction.setData/remove/check do `version = version || -1`, so an expected
 * version of 0 — every znode's first version — silently becomes -1 ("any version") inside a multi,
 * and a compare-and-set on a fresh item turns into a blind overwrite (the conformance suite's 50
 * concurrent merges lost causes this way). The op the transaction just queued is corrected here;
 * if the library's internals ever change shape this fails loudly instead of writing blind.
 */
export function pinVersion(t: zk.Transaction, version: number): void {
  const ops = (t as unknown as { ops?: unknown }).ops;
  const last = Array.isArray(ops) ? (ops[ops.length - 1] as { version?: unknown } | undefined) : undefined;
  if (!last || typeof last.version !== 'number') {
    throw new Error('node-zookeeper-client Transaction internals changed: cannot pin the expected version of a multi op');
  }
  last.version = version;
}

/** The parts of the library's connection manager the session hardens. */
interface ConnectionInternals {
  socket?: { destroy(): void };
  onSocketData?: (buf: Buffer) => void;
  onSocketConnected?: () => void;
}

const internals = (c: zk.Client): ConnectionInternals | undefined => (c as unknown as { connectionManager?: ConnectionInternals }).connectionManager;

/**
 * The library parses every frame from the server inside a socket 'data' handler; a frame it does
 * not expect (a reply arriving in a state it did not plan for) throws out of that handler, which
 * would end the whole process. Its handlers are bound from the instance when each socket is made,
 * so an own property wraps them: a frame that cannot be parsed drops the connection instead (the
 * client reconnects, or the session's connection deadlines replace it).
 */
export function harden(c: zk.Client, log: () => Logger): void {
  const cm = internals(c);
  const parse = cm?.onSocketData;
  if (!cm || typeof parse !== 'function') return; // internals changed: nothing to wrap
  cm.onSocketData = function (this: ConnectionInternals, buf: Buffer): void {
    try {
      parse.call(this, buf);
    } catch (e) {
      log().warn('zookeeper: unparseable frame from the server; dropping the connection', { error: (e as Error).message });
      this.socket?.destroy();
    }
  };
}

/** Closes a client for good, also when it is stuck in a handshake (close() alone only queues a packet). */
export function abandon(c: zk.Client): void {
  const cm = internals(c);
  // A reconnect already scheduled inside the library would open a new socket after close() and
  // send a handshake nobody waits for: make any such socket end at once. (CLOSING, set by close(),
  // stops the library from reconnecting again when it closes.)
  if (cm) {
    cm.onSocketConnected = function (this: ConnectionInternals): void {
      this.socket?.destroy();
    };
    cm.onSocketData = () => undefined;
  }
  try {
    c.close();
  } catch {
    // close() writes to the socket when it can; a half-open one may refuse
  }
  try {
    cm?.socket?.destroy();
  } catch {
    // already gone
  }
}
