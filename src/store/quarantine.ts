/**
 * Rows that cannot be decoded (a hand edit, a disk error, a newer program's format), or that decode
 * but hold what a request may not (row-rules.ts: node `*`, `host:port`, an id naming another node).
 * One such row must not stop enforcement of every other item, nor silently vanish: list() leaves
 * it out, the store keeps it here (for /status and the metric) and says so in one log line when it
 * first appears. It is never enforced and never expired; an operator removes it with DELETE or
 * `blocklist unblock` (the store's removeQuarantined), or repairs it by hand.
 */
import { Logger } from '../core/logger';
import { CorruptItemError } from './codec';

export interface QuarantinedRow {
  id: string;
  /** Why it cannot be decoded, or which rule it breaks. */
  reason: string;
}

export class Quarantine {
  private rows = new Map<string, string>();

  constructor(
    private readonly logger: Logger,
    private readonly store: string,
  ) {}

  /** What a full read found: replaces the set; each row new to it is logged once. */
  replace(found: readonly QuarantinedRow[]): void {
    const next = new Map<string, string>();
    for (const r of found) {
      if (!this.rows.has(r.id)) {
        this.logger.warn(
          `quarantined item '${r.id}': its stored data cannot be decoded or breaks the API's rules, so it is not enforced (every other item is); remove it with 'blocklist unblock ${r.id}' or DELETE on its REST path`,
          { store: this.store, id: r.id, reason: r.reason },
        );
      }
      next.set(r.id, r.reason);
    }
    this.rows = next;
  }

  drop(id: string): void {
    this.rows.delete(id);
  }

  list(): QuarantinedRow[] {
    return [...this.rows].map(([id, reason]) => ({ id, reason })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }
}

/** The row a decode failure is about (the error names its id), for a full read's quarantine list. */
export function quarantinedRow(e: CorruptItemError, fallbackId: string): QuarantinedRow {
  return { id: e.id ?? fallbackId, reason: e.message };
}
