/**
 * Which YARN application this sidecar serves. In order:
 *  1. config `yarn.application.id` (explicit wins);
 *  2. the `CONTAINER_ID` environment variable YARN sets in every container (ApplicationConstants
 *     .Environment.CONTAINER_ID) — the sidecar runs in the AM container, so its container's app;
 *  3. the AMRM proxy (`GET /amrm/v1/attempt`), which knows the AM it lives in.
 * A configured or environment value that does not parse is an error, not a silent fall-through:
 * a typo must not make the sidecar manage a different application.
 */
import { applicationOfContainer, parseApplicationId } from '../model/ids';
import { AmrmProxy, YarnCallError } from './types';

export type AppIdSource = 'config' | 'CONTAINER_ID' | 'proxy';

export interface ResolvedApplication {
  applicationId: string;
  source: AppIdSource;
  /** Known only when the proxy was asked. */
  appAttemptId?: string;
}

export interface ResolveAppInput {
  /** Value of `yarn.application.id` ('' = unset). */
  configured?: string;
  env?: NodeJS.ProcessEnv;
  proxy?: Pick<AmrmProxy, 'attempt'>;
}

export async function resolveApplicationId(input: ResolveAppInput): Promise<ResolvedApplication> {
  const configured = input.configured?.trim();
  if (configured) {
    const p = parseApplicationId(configured);
    if (!p.ok) throw new YarnCallError(`yarn.application.id: ${p.error}`, undefined, false);
    return { applicationId: configured, source: 'config' };
  }
  const containerId = (input.env ?? process.env).CONTAINER_ID?.trim();
  if (containerId) {
    const a = applicationOfContainer(containerId);
    if (!a.ok) throw new YarnCallError(`CONTAINER_ID: ${a.error}`, undefined, false);
    return { applicationId: a.value, source: 'CONTAINER_ID' };
  }
  if (!input.proxy) {
    throw new YarnCallError('cannot tell the YARN application: set yarn.application.id, run in a YARN container (CONTAINER_ID), or configure the AMRM proxy', undefined, false);
  }
  const attempt = await input.proxy.attempt();
  return { applicationId: attempt.applicationId, source: 'proxy', appAttemptId: attempt.appAttemptId };
}
