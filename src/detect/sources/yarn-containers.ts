/**
 * Source: the containers YARN reported complete to the ApplicationMaster, read through the AMRM
 * proxy's `GET /amrm/v1/completed-containers?after=<seq>`. Counts against the node only what
 * Hadoop's Apps.shouldCountTowardsNodeBlacklisting counts: INVALID, KILLED_BY_CONTAINER_SCHEDULER,
 * KILLED_FOR_EXCESS_LOGS and process exit codes — never PREEMPTED, ABORTED (a release, our own
 * evacuations included, or a lost node), KILLED_BY_APPMASTER, KILLED_BY_RESOURCEMANAGER or the
 * memory kills. Every completion teaches the detector where its container ran, so the Flink source
 * can attribute the failure of a task manager that is already gone.
 */
import { AmrmProxy, CompletedContainersPage } from '../../yarn/types';
import { JsonValue } from '../state';
import { describeExitStatus, shouldCountTowardsNodeBlacklisting } from '../exit-status';
import { DetectorSource, SourceContext, SourceReport } from '../source';
import { Failure } from '../types';

/**
 * Where the source is in the proxy's ring: the last seq read and the epoch it was numbered under
 * (absent when the proxy sent none, or from a cursor stored before epochs: a bare number).
 */
export interface CompletedCursor {
  seq: number;
  epoch?: string;
}

/** A stored cursor of either shape; anything unreadable starts from the beginning of the ring. */
export function readCompletedCursor(raw: JsonValue | undefined): CompletedCursor {
  const seqOf = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  if (typeof raw === 'number') return { seq: seqOf(raw) };
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    const c: CompletedCursor = { seq: seqOf(raw.seq) };
    if (typeof raw.epoch === 'string' && raw.epoch !== '') c.epoch = raw.epoch;
    return c;
  }
  return { seq: 0 };
}

/**
 * The cursor to store: `{epoch, seq}` when the proxy names its epoch, else the bare seq (the shape
 * an older sidecar of the same job reads, so a rolling upgrade loses nothing either way).
 */
function cursorOf(page: CompletedContainersPage): JsonValue {
  return page.epoch !== undefined ? { epoch: page.epoch, seq: page.next } : page.next;
}

export class YarnCompletedContainersSource implements DetectorSource {
  readonly name = 'yarn-containers';

  constructor(private readonly proxy: Pick<AmrmProxy, 'completedContainers'>) {}

  async poll(ctx: SourceContext): Promise<SourceReport> {
    const cursor = readCompletedCursor(ctx.cursor);
    const after = cursor.seq;
    let page = await this.proxy.completedContainers(after);
    // Both sides name an epoch: a different one is a restarted proxy, whatever its numbering says
    // (it may have completed more containers than the old cursor before this read). Without one
    // on either side (a proxy or a stored cursor that predates epochs), a restart shows only as
    // `next` going below the cursor.
    const newEpoch = page.epoch !== undefined && cursor.epoch !== undefined && page.epoch !== cursor.epoch;
    const restarted = newEpoch || page.next < after;
    if (restarted) {
      const why = newEpoch ? `its epoch changed (${cursor.epoch} → ${page.epoch})` : `next ${page.next} < ${after}`;
      ctx.logger.info(`the AMRM proxy's completed-containers numbering restarted (${why}): reading its ring from the start; container keys keep re-reads from counting twice`);
    }
    // An `after` the restarted proxy has not reached yet is answered from the start already; one it
    // has passed is not, so ask again from 0.
    if (newEpoch && after > 0 && page.next >= after) page = await this.proxy.completedContainers(0);
    if (page.skipped?.length) ctx.missed(page.skipped.length, `the AMRM proxy sent ${page.skipped.length} completed container(s) that cannot be read, left out: ${page.skipped.slice(0, 3).join('; ')}`);
    const first = page.containers[0];
    if (!restarted && after > 0 && first !== undefined && first.seq > after + 1) {
      ctx.missed(first.seq - after - 1, `the AMRM proxy's completed-containers ring dropped ${first.seq - after - 1} entries (seq ${after + 1}..${first.seq - 1}) before they were read; poll more often`);
    }
    const failures: Failure[] = [];
    for (const c of page.containers) {
      ctx.noteContainer(c.containerId, c.host);
      if (!shouldCountTowardsNodeBlacklisting(c.exitStatus)) continue;
      const status = describeExitStatus(c.exitStatus);
      failures.push({
        key: `yarn:${c.containerId}`,
        source: this.name,
        host: c.host,
        at: c.finishedAt,
        group: `yarn:${c.containerId}`,
        signature: status,
        summary: status,
        containerId: c.containerId,
      });
    }
    return { failures, cursor: cursorOf(page) };
  }
}
