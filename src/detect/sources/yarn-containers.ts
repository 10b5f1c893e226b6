/**
 * Source: the containers YARN reported complete to the ApplicationMaster, read through the AMRM
 * proxy's `GET /amrm/v1/completed-containers?after=<seq>`. Counts against the node only what
 * Hadoop's Apps.shouldCountTowardsNodeBlacklisting counts: INVALID, KILLED_BY_CONTAINER_SCHEDULER,
 * KILLED_FOR_EXCESS_LOGS and process exit codes — never PREEMPTED, ABORTED (a release, our own
 * evacuations included, or a lost node), KILLED_BY_APPMASTER, KILLED_BY_RESOURCEMANAGER or the
 * memory kills. Every completion teaches the detector where its container ran, so the Flink source
 * can attribute the failure of a task manager that is already gone.
 */
import { AmrmProxy } from '../../yarn/types';
import { describeExitStatus, shouldCountTowardsNodeBlacklisting } from '../exit-status';
import { DetectorSource, SourceContext, SourceReport } from '../source';
import { Failure } from '../types';

export class YarnCompletedContainersSource implements DetectorSource {
  readonly name = 'yarn-containers';

  constructor(private readonly proxy: Pick<AmrmProxy, 'completedContainers'>) {}

  async poll(ctx: SourceContext): Promise<SourceReport> {
    const after = typeof ctx.cursor === 'number' && ctx.cursor >= 0 ? ctx.cursor : 0;
    const page = await this.proxy.completedContainers(after);
    if (page.skipped?.length) ctx.missed(page.skipped.length, `the AMRM proxy sent ${page.skipped.length} completed container(s) that cannot be read, left out: ${page.skipped.slice(0, 3).join('; ')}`);
    if (page.next < after) ctx.logger.info(`the AMRM proxy's completed-containers numbering restarted (next ${page.next} < ${after}): reading its ring from the start; container keys keep re-reads from counting twice`);
    const restarted = page.next < after;
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
    return { failures, cursor: page.next };
  }
}
