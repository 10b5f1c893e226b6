/** What the REST API is built from: all edges injected, so tests run it on any store and clock. */
import { Clock } from '../core/clock';
import { DetectorView } from '../detect/detector';
import { BlocklistStore } from '../store/store';
import { SyncFacade } from '../sync/sync-port';
import { Logger } from '../core/logger';
import { AuditSink } from '../model/audit';
import { ExpiryOutcome } from '../sync/expiry';
import { TokenLookup } from '../security/tokens';
import { ServerTls } from '../security/tls';
import { RateLimitSettings } from '../security/rest-security';
import { ConfigEntry } from '../config/config';
import type { ConsoleData } from './console/console-routes';
import type { DiscoveryPort } from './routes/discovery';

/** What GET /detector shows (the detector's runner). */
export interface DetectorPort {
  view(): DetectorView;
}

export interface ApiDeps {
  store: BlocklistStore;
  sync: SyncFacade;
  clock: Clock;
  logger: Logger;
  audit: AuditSink;
  /** cluster.resource-blocklist.enabled */
  enabled: boolean;
  /** Largest request body in bytes (rest.server.max-content-length). */
  bodyLimit?: number;
  /** Serve the web console at /ui/ (rest.console.enabled); absent = yes. */
  console?: boolean;
  /** The console's chart and links (docs/console.md); absent = an empty chart and no links. */
  consoleData?: ConsoleData;
  /** One expiry pass (POST /blocklist/expire); absent = the endpoint answers 404. */
  expire?: () => Promise<ExpiryOutcome>;
  /** Prometheus text for GET /metrics, when metrics are wired. */
  metrics?: { contentType: string; text(): Promise<string> };
  /** Bearer tokens (rest.auth.tokens-file); absent = no auth, everyone is the anonymous admin. */
  auth?: TokenLookup;
  /** Serve HTTPS with this key and certificate (rest.ssl.*). */
  tls?: ServerTls;
  /**
   * GET /healthz fails once the store has been unreachable longer than this (ms; 0 or absent =
   * never): a sidecar cut off from its store for that long is better restarted by its supervisor.
   */
  storeUnreachableLimitMs?: number;
  /** cluster.resource-blocklist.sync.stall-limit: /readyz answers 503 past it (0 or absent: never). */
  syncStallLimitMs?: number;
  /** Most full GET /blocklist responses in flight at once (rest.listing.max-concurrent); past it 503 + Retry-After. */
  maxConcurrentListings?: number;
  /** How long GET /blocklist's serialisation is kept after its last use (rest.listing.cache-retention, ms); absent = 30 s. */
  listingRetentionMs?: number;
  /** Limit on mutating calls (rest.rate-limit.*); absent or max 0 = none. */
  rateLimit?: RateLimitSettings;
  /** The running configuration, secrets masked (GET /config); absent = 404. */
  config?: ConfigEntry[];
  /** The failure detector; absent = GET /detector answers {"mode":"off"}. */
  detector?: DetectorPort;
  /** The published sidecars for GET /discovery/prometheus; absent = 404. */
  discovery?: DiscoveryPort;
}
