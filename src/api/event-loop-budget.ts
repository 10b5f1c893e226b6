/**
 * One budget of work per event-loop turn, shared by everyone who queues steps on it.
 *
 * A streamed listing of 100,000 items is a few hundred steps of a few milliseconds each; thirty
 * listings at once, each stepping on its own setImmediate, would fill every turn with work and leave
 * /healthz and /metrics waiting behind them. Here the steps queued before a turn run until the
 * budget is spent, and the rest wait for the next turn, after the loop has polled for I/O.
 */
export class TurnBudget {
  private readonly steps: (() => void)[] = [];
  private draining = false;

  constructor(private readonly budgetMs: number) {}

  /** Runs `step` in a later event-loop turn, after the steps queued before it. */
  run(step: () => void): void {
    this.steps.push(step);
    if (this.steps.length === 1 && !this.draining) setImmediate(this.drain);
  }

  private readonly drain = (): void => {
    this.draining = true;
    const t0 = performance.now();
    // Only the steps queued before this turn: a step that queues another runs it next turn.
    let n = this.steps.length;
    try {
      while (n-- > 0 && performance.now() - t0 < this.budgetMs) (this.steps.shift() as () => void)();
    } finally {
      this.draining = false;
      if (this.steps.length > 0) setImmediate(this.drain);
    }
  };
}
