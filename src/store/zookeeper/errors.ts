/**
 * What a ZooKeeper call can fail with, in the store's terms. node-zookeeper-client reports a
 * server's error reply as an untyped exception with a numeric code (KeeperException.Code); the
 * store branches on a few of those codes, and on whether a failure may be retried, so they get a
 * class and a classifier here, apart from the session that makes the calls.
 */
import * as zk from 'node-zookeeper-client';
import { StoreUnavailableError } from '../store';

/** ZooKeeper's own error codes the store branches on (KeeperException.Code). */
export const ZK = {
  CONNECTION_LOSS: zk.Exception.CONNECTION_LOSS,
  OPERATION_TIMEOUT: zk.Exception.OPERATION_TIMEOUT,
  NO_NODE: zk.Exception.NO_NODE,
  NO_AUTH: zk.Exception.NO_AUTH,
  BAD_VERSION: zk.Exception.BAD_VERSION,
  NODE_EXISTS: zk.Exception.NODE_EXISTS,
  NOT_EMPTY: zk.Exception.NOT_EMPTY,
  SESSION_EXPIRED: zk.Exception.SESSION_EXPIRED,
  AUTH_FAILED: zk.Exception.AUTH_FAILED,
} as const;

/** A ZooKeeper error reply (a KeeperException), with its numeric code. */
export class ZkError extends Error {
  constructor(readonly code: number, readonly codeName: string, readonly path: string) {
    super(`${codeName}[${code}] at ${path}`);
    this.name = 'ZkError';
  }
}

/** Codes after which the request may or may not have been applied, and a retry may succeed. */
export function isTransient(e: unknown): boolean {
  return e instanceof ZkError && (e.code === ZK.CONNECTION_LOSS || e.code === ZK.OPERATION_TIMEOUT || e.code === ZK.SESSION_EXPIRED);
}

export function hasCode(e: unknown, code: number): boolean {
  return e instanceof ZkError && e.code === code;
}

/** A call that got no answer in time; the store adds which store call it was part of. */
export class ZkTimeoutError extends StoreUnavailableError {
  constructor(message: string) {
    super(message);
    this.name = 'ZkTimeoutError';
  }
}

/** The untyped callback error of node-zookeeper-client: a zk.Exception (numeric code) or an Error. */
export function toZkError(e: unknown, path: string): Error {
  if (e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'number' && typeof (e as { name?: unknown }).name === 'string') {
    const x = e as { code: number; name: string };
    return new ZkError(x.code, x.name, path);
  }
  return e instanceof Error ? e : new Error(String(e));
}
