/**
 * Everything the REST API's security needs, read from configuration in one place at start-up:
 * the token table, the TLS key/cert, the mutation rate limit. Fails fast (ConfigError naming the
 * key) on a bad token file or unusable TLS material; warns on what is allowed but unwise.
 */
import { ConfigError } from '../config/config';
import { ConfigValues } from '../config/keys';
import { Logger } from '../core/logger';
import { isLoopback } from './bind-safety';
import { TokenFileError, loadTokenFile } from './tokens';
import { ReloadableTokens } from './token-reload';
import { ServerTls, TlsConfigError, loadServerTls } from './tls';

/** The mutation rate limit (src/api/rate-limit.ts applies it). */
export interface RateLimitSettings {
  /** Mutations per window per key; 0 = no limit. */
  max: number;
  windowMs: number;
}

export interface RestSecurity {
  /** Bearer tokens, reloadable from their file (SIGHUP, file change). */
  tokens?: ReloadableTokens;
  tls?: ServerTls;
  rateLimit: RateLimitSettings;
}

export function loadRestSecurity(v: ConfigValues, logger: Logger): RestSecurity {
  const out: RestSecurity = {
    rateLimit: { max: v['rest.rate-limit.max-mutations'], windowMs: v['rest.rate-limit.window'] },
  };
  const problems: string[] = [];
  const tokensFile = v['rest.auth.tokens-file'].trim();
  if (tokensFile) {
    try {
      const loaded = loadTokenFile(tokensFile);
      if (loaded.warning) logger.warn(loaded.warning);
      out.tokens = new ReloadableTokens(tokensFile, loaded.table);
      const r = loaded.table.roles();
      logger.info(`REST auth: bearer tokens from ${tokensFile} (${r.admin} admin, ${r.viewer} viewer)`);
    } catch (e) {
      if (!(e instanceof TokenFileError)) throw e;
      problems.push(`rest.auth.tokens-file: ${e.message}`);
    }
  }
  try {
    const t = loadServerTls(v['rest.ssl.key-file'], v['rest.ssl.cert-file']);
    if (t) out.tls = t;
  } catch (e) {
    if (!(e instanceof TlsConfigError)) throw e;
    problems.push(e.message);
  }
  if (problems.length) throw new ConfigError(problems);
  if (out.tokens && !out.tls && !isLoopback(v['rest.bind-address'])) {
    logger.warn(`REST API on ${v['rest.bind-address']} without TLS: bearer tokens cross the network in clear text; set rest.ssl.key-file and rest.ssl.cert-file`);
  }
  return out;
}
