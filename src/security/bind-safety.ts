/**
 * The sidecar can take work off production nodes: it refuses to listen beyond loopback unless
 * bearer-token auth is configured: a token is the only thing that stands between the network and a
 * blacklist that empties a cluster.
 */
import { ConfigValues } from '../config/keys';
import { ConfigError } from '../config/config';

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function checkBindSafety(v: ConfigValues): void {
  const host = v['rest.bind-address'];
  if (!isLoopback(host) && !v['rest.auth.tokens-file']) {
    throw new ConfigError([
      `rest.bind-address is ${host}, which is reachable from other machines, but no auth is configured: ` +
        'set rest.auth.tokens-file to a token file (see docs/security.md), or bind to 127.0.0.1',
    ]);
  }
}
