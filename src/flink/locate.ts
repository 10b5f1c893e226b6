/**
 * Where the job's JobManager answers, found without configuration. Flink on YARN binds its REST
 * port at random (rest.bind-port 0) and registers the AM with host = the JobManager's address,
 * rpcPort = the REST port and trackingUrl = the web interface (YarnResourceManagerDriver
 * registerApplicationMaster), so the RM's application report names it twice:
 *  - `amRPCAddress` (`host:restPort`): the JobManager itself, every method;
 *  - `trackingUrl` (`http://rm:8088/proxy/<app>/`): the RM's web proxy, which passes GET and PUT
 *    only: enough to read, not to trigger a checkpoint.
 * A configured address (cluster.resource-blocklist.flink.rest-address) wins over both.
 */
import { ApplicationInfo } from '../yarn/types';

export interface FlinkLocation {
  baseUrl: string;
  /** Whether POST reaches the JobManager. */
  canPost: boolean;
  /** Where the address came from, for /status and the logs. */
  source: 'configured' | 'am-rpc-address' | 'tracking-url';
}

/** `host:port`, `http(s)://host:port[/path]` → a base URL; undefined when it is not one. */
export function baseUrlOf(address: string): string | undefined {
  const a = address.trim();
  if (a === '') return undefined;
  try {
    const u = new URL(/^https?:\/\//i.test(a) ? a : `http://${a}`);
    if (u.port === '0') return undefined;
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return undefined;
  }
}

/** The addresses to try, best first: the configured one alone, else the AM's REST port, then the RM's proxy. */
export function flinkLocations(configured: string, app: ApplicationInfo | undefined): FlinkLocation[] {
  const fixed = baseUrlOf(configured);
  if (fixed !== undefined) return [{ baseUrl: fixed, canPost: true, source: 'configured' }];
  const out: FlinkLocation[] = [];
  const direct = app?.amRPCAddress !== undefined ? baseUrlOf(app.amRPCAddress) : undefined;
  if (direct !== undefined) out.push({ baseUrl: direct, canPost: true, source: 'am-rpc-address' });
  const proxied = app?.trackingUrl !== undefined && /^https?:\/\//i.test(app.trackingUrl) ? baseUrlOf(app.trackingUrl) : undefined;
  if (proxied !== undefined) out.push({ baseUrl: proxied, canPost: false, source: 'tracking-url' });
  return out;
}
