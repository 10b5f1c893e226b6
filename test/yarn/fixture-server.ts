/**
 * A tiny real HTTP server for client tests: each path answers a fixture file, an inline body, a
 * redirect, or nothing at all (to test timeouts). Records every request line it saw.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { repoRoot } from '../support/paths';

export interface Route {
  status?: number;
  /** A file under test/fixtures/rm/. */
  fixture?: string;
  body?: string;
  headers?: Record<string, string>;
  /** Never answer (the socket stays open until the server closes). */
  hang?: boolean;
}

export interface FixtureServer {
  url: string;
  /** Request URLs seen (path + query), in order. */
  seen: string[];
  routes: Map<string, Route>;
  close(): Promise<void>;
}

export function fixture(name: string): string {
  return fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'rm', name), 'utf8');
}

export async function startFixtureServer(routes: Record<string, Route> = {}): Promise<FixtureServer> {
  const map = new Map(Object.entries(routes));
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    seen.push(url);
    const route = map.get(url.split('?')[0]);
    if (!route) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ RemoteException: { exception: 'NotFoundException', message: `java.lang.Exception: no fixture for ${url}`, javaClassName: 'org.apache.hadoop.yarn.webapp.NotFoundException' } }));
      return;
    }
    if (route.hang) return;
    const body = route.fixture ? fixture(route.fixture) : route.body ?? '';
    res.writeHead(route.status ?? 200, { 'Content-Type': 'application/json', ...(route.headers ?? {}) });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    routes: map,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function deadPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
