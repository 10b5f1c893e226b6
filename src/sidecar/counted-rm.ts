/**
 * The ResourceManager reader the sidecar uses, counting each call by name and result on
 * `blocklist_rm_requests_total`: what this job costs the RM, which every job shares, on a dashboard.
 */
import { Counter } from 'prom-client';
import { ResourceManagerReader } from '../yarn/types';

type Call = keyof ResourceManagerReader;
const CALLS: readonly Call[] = ['clusterInfo', 'clusterMetrics', 'nodes', 'node', 'application', 'attempts', 'containers'];

export function countedResourceManager(rm: ResourceManagerReader, requests: Counter<'call' | 'result'>): ResourceManagerReader {
  for (const call of CALLS) for (const result of ['success', 'failure']) requests.inc({ call, result }, 0);
  const counted =
    <A extends unknown[], R>(call: Call, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        const out = await fn(...args);
        requests.inc({ call, result: 'success' });
        return out;
      } catch (e) {
        requests.inc({ call, result: 'failure' });
        throw e;
      }
    };
  const single = rm.node?.bind(rm);
  return {
    clusterInfo: counted('clusterInfo', () => rm.clusterInfo()),
    clusterMetrics: counted('clusterMetrics', () => rm.clusterMetrics()),
    nodes: counted('nodes', (states?: Parameters<ResourceManagerReader['nodes']>[0], need?: Parameters<ResourceManagerReader['nodes']>[1]) => rm.nodes(states, need)),
    application: counted('application', (id: string) => rm.application(id)),
    attempts: counted('attempts', (id: string) => rm.attempts(id)),
    containers: counted('containers', (id: string, attempt: string) => rm.containers(id, attempt)),
    // Single nodes only where the reader has them: without, the engine reads the list instead.
    ...(single ? { node: counted('node', single) } : {}),
  };
}
