/** The simulator's answer to GET /amrm/v1/attempt (docs/amrm-proxy.openapi.yaml, `Attempt`), for both of its faces. */
import { packageVersion } from '../core/package-info';
import { AttemptInfo } from '../yarn/types';
import { SimCluster } from './cluster';

/** The simulator is no interceptor jar: it names the product it comes with, marked as the simulator. */
export const SIM_INTERCEPTOR_VERSION = `${packageVersion()}-simulator`;

export function proxyAttempt(cluster: SimCluster): AttemptInfo {
  const a = cluster.currentAttempt;
  return { applicationId: cluster.applicationId, appAttemptId: a.id, registered: a.registered, amContainerId: a.amContainerId, interceptorVersion: SIM_INTERCEPTOR_VERSION };
}
