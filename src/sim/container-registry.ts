/**
 * The application's live containers, by id and on their nodes, and how the RM numbers new ones:
 * container_e<epoch>_<cluster timestamp>_<app>_<attempt>_<seq>, the sequence starting again with
 * each attempt and with each work-preserving RM restart (which moves the epoch on).
 */
import { Clock } from '../core/clock';
import { formatContainerId } from '../model/ids';
import { SimContainer, SimNode } from './cluster-types';

export class ContainerRegistry {
  private readonly byId = new Map<string, SimContainer>();
  private epoch: number | undefined;
  private nextSeq = 1;
  private tms = 0;

  constructor(
    private readonly app: { clusterTimestamp: string; id: number },
    epoch: number | undefined,
    private readonly clock: Clock,
    private readonly nodeOf: (host: string) => SimNode | undefined,
  ) {
    this.epoch = epoch;
  }

  get(id: string): SimContainer | undefined {
    return this.byId.get(id);
  }

  /** Live containers (the AM's included). */
  all(): SimContainer[] {
    return [...this.byId.values()];
  }

  get taskManagerCount(): number {
    return this.tms;
  }

  /** A new attempt numbers its containers from 1 (its AM container is 000001). */
  startAttempt(): void {
    this.nextSeq = 1;
  }

  /** A work-preserving RM restart: running containers keep their ids, new ones are numbered from 1 under the next epoch. */
  rmRestart(): number {
    this.epoch = (this.epoch ?? 0) + 1;
    this.nextSeq = 1;
    return this.epoch;
  }

  place(node: SimNode, isAm: boolean, attemptNumber: number): SimContainer {
    const id = formatContainerId({
      ...(this.epoch !== undefined ? { epoch: this.epoch } : {}),
      application: this.app,
      attempt: attemptNumber,
      container: this.nextSeq++,
    });
    const c: SimContainer = { id, host: node.host, startedTime: this.clock.now(), isAm };
    this.byId.set(id, c);
    node.containers.add(id);
    if (!isAm) this.tms++;
    return c;
  }

  remove(c: SimContainer): void {
    if (!this.byId.delete(c.id)) return;
    this.nodeOf(c.host)?.containers.delete(c.id);
    if (!c.isAm) this.tms--;
  }
}
