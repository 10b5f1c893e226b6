/**
 * How a source plugs into the detector. A source is polled once per detector pass; it reads
 * whatever it watches, attributes what it saw to YARN hosts through the context, and returns
 * failures (and, optionally, node health). It keeps nothing itself across restarts: what it must
 * remember (a cursor) it returns, and gets back on the next pass, persisted in the store.
 *
 * Writing one (docs/detector.md has the whole recipe):
 *   export class MySource implements DetectorSource {
 *     readonly name = 'my-source';                       // a metric label; [a-z0-9-]
 *     async poll(ctx: SourceContext): Promise<SourceReport> {
 *       const seen = await readSomething();
 *       const host = ctx.hostOfContainer(seen.containerId); // never guess a host from free text
 *       if (!host) return { failures: [] };
 *       return { failures: [{ key: `my-source:${seen.id}`, source: this.name, host, at: seen.time,
 *                             group: `my-source:${seen.id}`, signature: seen.kind, summary: seen.text }] };
 *     }
 *   }
 * Keys must be stable across re-reads (the detector counts a key once); `group` puts failures of
 * one event on one host into one incident; `signature` is what the job-fault contrast compares.
 */
import { Logger } from '../core/logger';
import { JsonValue } from './state';
import { Failure, HealthObservation } from './types';

export interface SourceContext {
  now: number;
  logger: Logger;
  /** The YARN host a container runs or ran on (live containers, recently completed ones). */
  hostOfContainer(containerId: string): string | undefined;
  /** Whether the RM lists a node with this host name (nodeHostName). */
  isKnownHost(host: string): boolean;
  /** Tells the detector where a container ran (for sources polled after this one). */
  noteContainer(containerId: string, host: string): void;
  /** What this source returned as `cursor` last time (undefined on the first pass). */
  cursor: JsonValue | undefined;
  /** Reports that the watched system dropped observations before this source could read them. */
  missed(count: number, why: string): void;
}

export interface SourceReport {
  failures: Failure[];
  health?: HealthObservation[];
  /** Kept for the next pass (and across restarts); JSON only. */
  cursor?: JsonValue;
  /** Observations seen but not attributable to a host (global failures, unknown containers). */
  unattributed?: number;
}

export interface DetectorSource {
  /** Stable, short: a metric label and the key of the source's cursor. */
  readonly name: string;
  poll(ctx: SourceContext): Promise<SourceReport>;
}
