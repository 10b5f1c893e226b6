/**
 * Where the console's links point, from what YARN reports: the RM web address the sidecar reads
 * (the one that answered last), the RM's page of the application, Flink's web UI (the application's
 * tracking URL, which Flink on YARN sets to its REST endpoint behind the RM's proxy), and how a
 * NodeManager's own page is reached (the scheme and port of the job's containers' node HTTP
 * addresses, as the proxy lists them). Read at most every 30 s (a console polls every 2 s; the RM
 * is shared by every job).
 */
import { Clock } from '../../core/clock';

export interface ConsoleLinks {
  /** The RM web address, e.g. http://rm1.example:8088. */
  rm?: string;
  applicationId?: string;
  /** The RM's page of the application. */
  application?: string;
  /** Flink's web UI (the tracking URL), ending in '/'. */
  flink?: string;
  /** A NodeManager's page is `<scheme>://<host>:<port>/node`. */
  nodePage?: { scheme: string; port: number };
}

export interface LinkSources {
  rmAddress(): string | undefined;
  applicationId(): string | undefined;
  /** The RM's application report (only its tracking URL is used). */
  application?(id: string): Promise<{ trackingUrl?: string }>;
  /** The job's containers as the AMRM proxy lists them (only their node HTTP addresses are used). */
  containers?(): Promise<readonly { nodeHttpAddress?: string }[]>;
}

const FRESH_MS = 30_000;

/** `host:port` or `scheme://host:port` → the scheme and port (the scheme of the RM when none is given). */
export function nodePageOf(nodeHttpAddress: string, rmScheme: string): { scheme: string; port: number } | undefined {
  const withScheme = /^https?:\/\//i.test(nodeHttpAddress) ? nodeHttpAddress : `${rmScheme}://${nodeHttpAddress}`;
  try {
    const u = new URL(withScheme);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return Number.isInteger(port) && port > 0 ? { scheme: u.protocol.replace(':', ''), port } : undefined;
  } catch {
    return undefined;
  }
}

/** An http(s) URL as given, or undefined (a link must never be javascript: or a relative path). */
export function webUrl(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

export class LinkReader {
  private cached: { at: number; appId: string | undefined; links: ConsoleLinks } | undefined;
  private inflight: Promise<ConsoleLinks> | undefined;

  constructor(
    private readonly src: LinkSources,
    private readonly clock: Clock,
  ) {}

  links(): Promise<ConsoleLinks> {
    const now = this.clock.now();
    const appId = this.src.applicationId();
    const c = this.cached;
    if (c && c.appId === appId && now - c.at < FRESH_MS) return Promise.resolve(c.links);
    this.inflight ??= this.read(appId).finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async read(appId: string | undefined): Promise<ConsoleLinks> {
    const links: ConsoleLinks = {};
    const rm = webUrl(this.src.rmAddress())?.replace(/\/+$/, '');
    if (rm) links.rm = rm;
    if (appId) {
      links.applicationId = appId;
      if (rm) links.application = `${rm}/cluster/app/${encodeURIComponent(appId)}`;
      // What fails is left out; the page draws the text without a link.
      const report = await this.src.application?.(appId).catch(() => undefined);
      const flink = webUrl(report?.trackingUrl);
      if (flink) links.flink = flink.endsWith('/') ? flink : `${flink}/`;
    }
    const containers = await this.src.containers?.().catch(() => undefined);
    const scheme = rm ? new URL(rm).protocol.replace(':', '') : 'http';
    const address = containers?.find((c) => c.nodeHttpAddress)?.nodeHttpAddress;
    const page = address ? nodePageOf(address, scheme) : undefined;
    if (page) links.nodePage = page;
    this.cached = { at: this.clock.now(), appId, links };
    return links;
  }
}
