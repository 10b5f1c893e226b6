/**
 * A counting HTTP proxy in front of the simulator's RM face: what one sidecar costs the
 * ResourceManager, as requests and response bytes per kind of call. The RM is the one process every
 * job on the cluster shares, so this is the figure a thousand sidecars multiply.
 */
import * as http from 'node:http';
import { AddressInfo } from 'node:net';

export type RmCallKind = 'metrics' | 'nodes' | 'node' | 'info' | 'app' | 'attempts' | 'containers' | 'other';

export function rmCallKind(url: string): RmCallKind {
  const p = url.split('?')[0];
  if (p === '/ws/v1/cluster/metrics') return 'metrics';
  if (p.startsWith('/ws/v1/cluster/nodes/')) return 'node';
  if (p.startsWith('/ws/v1/cluster/nodes')) return 'nodes';
  if (p === '/ws/v1/cluster/info' || p === '/ws/v1/cluster') return 'info';
  if (/\/appattempts\/[^/]+\/containers$/.test(p)) return 'containers';
  if (/\/appattempts$/.test(p)) return 'attempts';
  if (/^\/ws\/v1\/cluster\/apps\/[^/]+$/.test(p)) return 'app';
  return 'other';
}

export interface RmCount {
  requests: number;
  bytes: number;
}

export class RmTap {
  private server: http.Server | undefined;
  private readonly agent = new http.Agent({ keepAlive: true });
  readonly counts = new Map<RmCallKind, RmCount>();
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<void> {
    const target = new URL(this.target);
    this.server = http.createServer((req, res) => {
      const kind = rmCallKind(req.url ?? '/');
      const up = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent: this.agent },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          let bytes = 0;
          upRes.on('data', (d: Buffer) => {
            bytes += d.length;
            res.write(d);
          });
          upRes.on('end', () => {
            const c = this.counts.get(kind) ?? { requests: 0, bytes: 0 };
            c.requests += 1;
            c.bytes += bytes;
            this.counts.set(kind, c);
            res.end();
          });
        },
      );
      up.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => this.server?.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.counts.clear();
  }

  total(): RmCount {
    let requests = 0;
    let bytes = 0;
    for (const c of this.counts.values()) {
      requests += c.requests;
      bytes += c.bytes;
    }
    return { requests, bytes };
  }

  async close(): Promise<void> {
    this.agent.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
