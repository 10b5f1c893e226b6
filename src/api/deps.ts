/** What the REST API is built from: all edges injected, so tests run it on any store and clock. */
import { Clock } from '../model/clock';
import { BlocklistStore } from '../store/store';
import { SyncFacade } from '../sync/facade';
import { Logger } from '../log/logger';
import { AuditSink } from './audit';

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
  /** Prometheus text for GET /metrics, when metrics are wired. */
  metrics?: { contentType: string; text(): Promise<string> };
}
