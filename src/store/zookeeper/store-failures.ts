/**
 * How the ZooKeeper store classifies failures: which ones its retry loops (retry.ts) try again,
 * and what a caller finally sees. Kept apart from the operations so every operation answers the
 * same way: StoreUnavailableError (the API's 503) for anything about reaching the ensemble, with a
 * hint when the cause is an ACL, and the codec's CorruptItemError untouched.
 */
import { StoreUnavailableError } from '../store';
import { CasLostError } from '../cas-add';
import { Failure } from '../retry';
import { CorruptItemError } from '../codec';
import { ZK, ZkError, ZkTimeoutError, hasCode, isTransient } from './errors';

/** A read or a skeleton step: only a lost connection is worth another try. */
export const readFailure = (e: unknown): Failure => (isTransient(e) ? 'transient' : 'fatal');

/** A compare-and-set round: a moved version or a znode that appeared or went means another writer won. */
export const casFailure = (e: unknown): Failure =>
  hasCode(e, ZK.BAD_VERSION) || hasCode(e, ZK.NODE_EXISTS) || hasCode(e, ZK.NO_NODE) || e instanceof CasLostError
    ? 'contention'
    : isTransient(e) || e instanceof StoreUnavailableError
      ? 'transient'
      : 'fatal';

/** What the messages name: the store, its bound, the client's state at the time. */
export interface FailureContext {
  description: string;
  operationTimeoutMs: number;
  stateName(): string;
}

/** Maps a failure to what callers see: StoreUnavailableError unless it is a data problem. */
export function unavailable(ctx: FailureContext, e: unknown, what: string): Error {
  if (e instanceof ZkTimeoutError) {
    return new StoreUnavailableError(`zookeeper store ${ctx.description}: ${what} did not complete within ${ctx.operationTimeoutMs} ms: ${e.message}`, e);
  }
  if (e instanceof StoreUnavailableError || e instanceof CorruptItemError) return e;
  if (e instanceof ZkError) {
    const hint =
      e.code === ZK.NO_AUTH || e.code === ZK.AUTH_FAILED
        ? " (not authorised: check cluster.resource-blocklist.store.zookeeper.auth and the znodes' ACLs)"
        : isTransient(e)
          ? ` (no answer from a quorum within ${ctx.operationTimeoutMs} ms; client state ${ctx.stateName()})`
          : '';
    return new StoreUnavailableError(`zookeeper store ${ctx.description}: ${what} failed: ${e.message}${hint}`, e);
  }
  return new StoreUnavailableError(`zookeeper store ${ctx.description}: ${what} failed: ${(e as Error)?.message ?? String(e)}`, e);
}

/** The error a CAS loop ends with when its deadline passed while other writers kept winning. */
export function notInTime(ctx: FailureContext, what: string, last: unknown, extra = ''): unknown {
  return casFailure(last) === 'transient' ? last : new StoreUnavailableError(`zookeeper store ${ctx.description}: ${what} did not complete within ${ctx.operationTimeoutMs} ms${extra}`);
}
