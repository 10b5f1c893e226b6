/**
 * The controller's Flink side: when Flink is read for a pass, the checkpoints a release step
 * triggers (and what became of them between passes), one audit line each. The rules are the pure
 * ones of evacuation-steps.ts; this file only does what they decided.
 */
import { Logger } from '../core/logger';
import { AuditSink } from '../model/audit';
import { Metrics } from '../metrics/metrics';
import { StepMemory, afterTrigger } from './evacuation-steps';
import { FlinkKnowledge, isIdle } from './flink-view';
import { FlinkNeed, FlinkWatcher } from './watch-flink';

export class FlinkSide {
  constructor(
    readonly watcher: FlinkWatcher,
    private readonly deps: { logger: Logger; metrics: Metrics; audit?: AuditSink },
  ) {}

  get knowledge(): FlinkKnowledge {
    return this.watcher.knowledge;
  }

  /**
   * Whether this pass reads Flink: its own first decision has something waiting on a task manager
   * (not the last pass's: one that wanted nothing must not keep every later one on an old read),
   * and the last read is due or no longer fresh.
   */
  mayRead(mono: number, wanted: boolean): boolean {
    return wanted && this.watcher.enabled && (this.watcher.due(mono) || !this.watcher.fresh(mono));
  }

  /** Reads for this pass (at most once per interval). */
  observe(mono: number, applicationId: string | undefined, memory: StepMemory, evacuating: boolean): Promise<boolean> {
    return this.watcher.refresh(mono, applicationId, needOf(memory, evacuating));
  }

  /**
   * The decision wants Flink and what it used is not this pass's: read now, then decide again.
   * Not when this pass has read already (a read that failed is not tried twice in one pass).
   */
  async needsFresh(wanted: boolean, mono: number, applicationId: string | undefined, memory: StepMemory, evacuating: boolean, readThisPass = false): Promise<boolean> {
    if (!wanted || readThisPass || this.watcher.fresh(mono)) return false;
    await this.watcher.refresh(mono, applicationId, needOf(memory, evacuating), true);
    return true;
  }

  /** Between passes: whether one of these task managers (held by MARK_BLOCKED places) is idle now. */
  async idleAmong(containers: ReadonlySet<string>, mono: number, applicationId: string | undefined): Promise<boolean> {
    await this.watcher.refresh(mono, applicationId, { evacuating: false, covered: containers, triggers: [] });
    const k = this.watcher.knowledge;
    if (k.kind !== 'known') return false;
    for (const c of containers) if (isIdle(k.view.taskManagers.get(c))) return true;
    return false;
  }

  /** Sends the triggers a decision asked for; each answer (or why there is none) goes into the memory. */
  async trigger(jids: readonly string[], memory: StepMemory, step: number | undefined): Promise<StepMemory> {
    let m = memory;
    for (const jid of jids) {
      const r = await this.watcher.trigger(jid);
      m = afterTrigger(m, jid, r);
      this.deps.metrics.evacuationCheckpoints.inc({ result: r.ok ? 'triggered' : 'trigger-failed' });
      const detail = r.ok ? `checkpoint triggered (request ${r.triggerId}) before release step ${step ?? '?'}` : `checkpoint trigger failed (${r.error}); waiting for the next periodic one`;
      this.deps.logger.info(`evacuation: job ${jid}: ${detail}`);
      this.deps.audit?.record({ op: 'evacuation-checkpoint', id: jid, who: 'sync', from: 'sidecar', outcome: r.ok ? 'triggered' : 'trigger-failed', detail });
    }
    return m;
  }

  /** Counts, logs and audits each checkpoint outcome a decision came to (once: the step memory keeps it). */
  noteOutcomes(before: StepMemory, after: StepMemory): void {
    const step = after.step;
    if (!step) return;
    const known = new Set((before.step?.number === step.number ? before.step.checkpoints : []).filter((w) => w.outcome).map((w) => w.jid));
    for (const w of step.checkpoints) {
      if (!w.outcome || known.has(w.jid)) continue;
      const o = w.outcome;
      const result = o.status === 'COMPLETED' ? 'completed' : o.status === 'FAILED' ? 'failed' : 'timed_out';
      this.deps.metrics.evacuationCheckpoints.inc({ result });
      const detail = o.status === 'COMPLETED' ? `checkpoint ${o.id} completed: release step ${step.number} goes` : o.status === 'FAILED' ? `checkpoint failed (${o.error}): release step ${step.number} goes without it` : `no checkpoint completed within the bound: release step ${step.number} goes without it`;
      this.deps.logger.info(`evacuation: job ${w.jid}: ${detail}`);
      this.deps.audit?.record({ op: 'evacuation-checkpoint', id: w.jid, who: 'sync', from: 'sidecar', outcome: result, detail });
    }
  }

  /** Triggered checkpoints still in progress (asked about between passes). */
  pending(memory: StepMemory): { jid: string; triggerId: string }[] {
    const step = memory.step;
    if (step?.stage !== 'checkpointing') return [];
    return step.checkpoints.filter((w) => w.mode === 'trigger' && w.triggerId !== undefined && !w.outcome).map((w) => ({ jid: w.jid, triggerId: w.triggerId! }));
  }

  checkTriggers(memory: StepMemory): Promise<boolean> {
    return this.watcher.checkTriggers(this.pending(memory));
  }
}

function needOf(memory: StepMemory, evacuating: boolean): FlinkNeed {
  const step = memory.step;
  const triggers = step?.stage === 'checkpointing' ? step.checkpoints.filter((w) => w.triggerId !== undefined && !w.outcome).map((w) => ({ jid: w.jid, triggerId: w.triggerId! })) : [];
  return { evacuating: evacuating || step !== undefined, covered: new Set([...memory.idleSince.keys(), ...(step?.containers ?? [])]), triggers };
}
