/**
 * Fault injection for the simulator's two faces (the RM REST API and the AMRM proxy), so tests and
 * demos can show the sidecar surviving a slow, flaky or absent YARN. The control API is never faulted.
 *
 *  - latencyMs: every request on the face waits this long before it is served;
 *  - errorRate: this fraction of requests (seeded, reproducible) answers 500 in the face's error shape;
 *  - outage: 'unavailable' answers 503 to everything; 'reset' drops the connection without an answer
 *    (what a dead RM in an HA list looks like to the client).
 */
import { Random, seededRandom } from './random';

export type Face = 'rm' | 'amrm';
export const FACES: readonly Face[] = ['rm', 'amrm'];
export type Outage = 'unavailable' | 'reset';

export interface FaultSpec {
  latencyMs?: number;
  errorRate?: number;
  outage?: Outage | null;
}

export type FaultDecision = { kind: 'pass' } | { kind: 'error'; status: number } | { kind: 'reset' };

export class FaultInjector {
  private readonly specs = new Map<Face, FaultSpec>();
  private readonly rng: Random;

  constructor(seed = 1) {
    // A stream of its own, so injecting faults does not change placements.
    this.rng = seededRandom((seed ^ 0x5bd1e995) >>> 0);
  }

  /** Replaces the face's faults; validates first, so a bad spec changes nothing. */
  set(face: Face, spec: FaultSpec): FaultSpec {
    const clean: FaultSpec = {};
    if (spec.latencyMs !== undefined) {
      if (!Number.isFinite(spec.latencyMs) || spec.latencyMs < 0 || spec.latencyMs > 60_000) throw new Error('latencyMs must be 0..60000');
      if (spec.latencyMs > 0) clean.latencyMs = spec.latencyMs;
    }
    if (spec.errorRate !== undefined) {
      if (!Number.isFinite(spec.errorRate) || spec.errorRate < 0 || spec.errorRate > 1) throw new Error('errorRate must be between 0 and 1');
      if (spec.errorRate > 0) clean.errorRate = spec.errorRate;
    }
    if (spec.outage !== undefined && spec.outage !== null) {
      if (spec.outage !== 'unavailable' && spec.outage !== 'reset') throw new Error("outage must be 'unavailable', 'reset' or null");
      clean.outage = spec.outage;
    }
    if (Object.keys(clean).length === 0) this.specs.delete(face);
    else this.specs.set(face, clean);
    return clean;
  }

  clear(face?: Face): void {
    if (face) this.specs.delete(face);
    else this.specs.clear();
  }

  get(face: Face): FaultSpec {
    return { ...(this.specs.get(face) ?? {}) };
  }

  all(): Record<Face, FaultSpec> {
    return { rm: this.get('rm'), amrm: this.get('amrm') };
  }

  latency(face: Face): number {
    return this.specs.get(face)?.latencyMs ?? 0;
  }

  /** What to do with one request on the face. */
  decide(face: Face): FaultDecision {
    const s = this.specs.get(face);
    if (!s) return { kind: 'pass' };
    if (s.outage === 'reset') return { kind: 'reset' };
    if (s.outage === 'unavailable') return { kind: 'error', status: 503 };
    if (s.errorRate !== undefined && this.rng() < s.errorRate) return { kind: 'error', status: 500 };
    return { kind: 'pass' };
  }
}
