/**
 * The audit port: one record per mutation attempt — who, from where, what, before/after, outcome.
 * The API, the expiry job and the detector write records; src/log/audit.ts turns them into JSON
 * lines (and a file when configured). Secrets never reach it (principals are names, never tokens).
 */
import { BlockedItem } from './item';

export interface AuditRecord {
  /** What was attempted: block, unblock, batch-block, expire. */
  op: string;
  id: string;
  who: string;
  from: string;
  outcome: string;
  before?: BlockedItem;
  after?: BlockedItem;
  detail?: string;
  /** The request's own cause (a merged item's cause is bounded and may summarise it). */
  cause?: string;
  dryRun?: boolean;
}

export interface AuditSink {
  record(r: AuditRecord): void;
  /**
   * Whether a record would go anywhere now (absent: assume it does). A caller on a hot path (a PUT
   * per request) skips building records nobody takes.
   */
  takes?(): boolean;
}

/** Keeps records in memory (tests). */
export class MemoryAudit implements AuditSink {
  readonly records: AuditRecord[] = [];
  record(r: AuditRecord): void {
    this.records.push(r);
  }
}
