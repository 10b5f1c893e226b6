/**
 * /status.flink: the JobManager as the evacuations last read it, with what a release step is
 * judged on (each job running every task, its failovers counted) and how old that read is.
 */
import { FlinkJobView, unsettledTasks } from '../sync/flink-view';
import { SyncView } from '../sync/view';

export type FlinkStatus =
  | { state: 'off'; detail: string }
  | { state: 'unreadable'; error: string }
  | { state: 'read'; address: string; version?: string; checkpointTrigger: boolean; readAt?: string; readSecondsAgo?: number; jobs: FlinkJobStatus[] };

/** What a release step judges a job on: running every task (none moving), and its failovers counted. */
export interface FlinkJobStatus {
  id: string;
  name: string;
  state: string;
  type?: string;
  checkpointIntervalMs?: number;
  tasks: { running: number; total: number; moving?: Record<string, number> };
  restarts?: number;
}

export function flinkStatus(k: NonNullable<SyncView['flink']>, readAt: number | undefined, now: number): FlinkStatus {
  if (k.kind === 'off') return { state: 'off', detail: k.why };
  if (k.kind === 'unknown') return { state: 'unreadable', error: k.error };
  const v = k.view;
  const jobs = v.jobs.map((j): FlinkJobStatus => ({ id: j.jid, name: j.name, state: j.state, ...(j.type ? { type: j.type } : {}), ...(j.checkpointIntervalMs !== undefined ? { checkpointIntervalMs: j.checkpointIntervalMs } : {}), tasks: taskSummary(j), ...(j.restarts !== undefined ? { restarts: j.restarts } : {}) }));
  const age = readAt !== undefined ? { readAt: new Date(readAt).toISOString(), readSecondsAgo: Math.max(0, Math.round((now - readAt) / 100) / 10) } : {};
  return { state: 'read', address: v.baseUrl, ...(v.version ? { version: v.version } : {}), checkpointTrigger: v.canTrigger, ...age, jobs };
}

function taskSummary(j: FlinkJobView): FlinkJobStatus['tasks'] {
  const moving = unsettledTasks(j);
  return { running: j.tasks.running, total: j.tasks.total, ...(Object.keys(moving).length > 0 ? { moving } : {}) };
}
