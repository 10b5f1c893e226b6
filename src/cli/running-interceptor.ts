/**
 * Which AMRMProxy interceptor is running beside this AM: the proxy's own answer to GET
 * /amrm/v1/attempt (`interceptorVersion`; absent from proxies older than the field). Where the
 * proxy is: --proxy and --proxy-secret-file, else the sidecar's variables as launch-in-am.sh
 * exports them, else the interceptor's hand-off in $LOCAL_DIRS (inside the AM container).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AmrmProxyClient } from '../yarn/amrm-client';

export interface ProxyWhere {
  address: string;
  secretFile?: string;
  /** For the output: which flag, variable or file named it. */
  source: string;
}

export type RunningInterceptor =
  | { kind: 'answered'; where: ProxyWhere; version: string; appAttemptId: string }
  | { kind: 'older'; where: ProxyWhere; appAttemptId: string }
  | { kind: 'no-answer'; where: ProxyWhere; error: string };

const ADDRESS_ENV = 'BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_ADDRESS';
const SECRET_ENV = 'BLOCKLIST_CLUSTER_RESOURCE_BLOCKLIST_AMRM_PROXY_SECRET_FILE';
const HANDOFF = 'blocklist-amrm-proxy.json';

/** The proxy to ask, or undefined when nothing names one (then there is nothing to ask). */
export function proxyWhere(flags: { proxy?: string; proxySecretFile?: string }, env: NodeJS.ProcessEnv = process.env): ProxyWhere | undefined {
  if (flags.proxy?.trim()) return { address: flags.proxy.trim(), ...(flags.proxySecretFile ? { secretFile: flags.proxySecretFile } : {}), source: '--proxy' };
  const fromEnv = env[ADDRESS_ENV]?.trim();
  if (fromEnv) return { address: fromEnv, ...(env[SECRET_ENV]?.trim() ? { secretFile: env[SECRET_ENV].trim() } : {}), source: ADDRESS_ENV };
  for (const dir of (env.LOCAL_DIRS ?? '').split(',').filter((d) => d.trim() !== '')) {
    const file = path.join(dir.trim(), HANDOFF);
    const handoff = readHandoff(file);
    if (handoff) return { ...handoff, source: file };
  }
  return undefined;
}

function readHandoff(file: string): { address: string; secretFile?: string } | undefined {
  let o: unknown;
  try {
    o = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof o !== 'object' || o === null) return undefined;
  const { address, secretFile } = o as Record<string, unknown>;
  if (typeof address !== 'string' || address.trim() === '') return undefined;
  return { address, ...(typeof secretFile === 'string' ? { secretFile } : {}) };
}

/** One short call (an operator at a terminal): never throws, says what it got. */
export async function askRunningInterceptor(where: ProxyWhere, timeoutMs = 3_000): Promise<RunningInterceptor> {
  try {
    const client = new AmrmProxyClient({ address: where.address, ...(where.secretFile ? { secretFile: where.secretFile } : {}), timeoutMs });
    const a = await client.attempt();
    if (a.interceptorVersion === undefined) return { kind: 'older', where, appAttemptId: a.appAttemptId };
    return { kind: 'answered', where, version: a.interceptorVersion, appAttemptId: a.appAttemptId };
  } catch (e) {
    return { kind: 'no-answer', where, error: (e as Error).message };
  }
}

/** The `running` line of `blocklist version`. */
export function runningLine(r: RunningInterceptor): string {
  const at = `at ${r.where.address}, from ${r.where.source}`;
  switch (r.kind) {
    case 'answered':
      return `running      blocklist-amrm-interceptor ${r.version} (the proxy ${at}; ${r.appAttemptId})`;
    case 'older':
      return `running      blocklist-amrm-interceptor older than interceptorVersion, version unknown (the proxy ${at}; ${r.appAttemptId})`;
    case 'no-answer':
      return `running      unknown: no answer from the proxy ${at}: ${r.error}`;
  }
}
