/**
 * A minimal HTTP/1.1 keep-alive client for the throughput bench's load generator: one socket per
 * client, one request at a time (no pipelining), the response read by its Content-Length.
 *
 * Why not node:http: the bench runs on the same 2 cores as the sidecar it measures, and every
 * microsecond the generator spends is taken from the sidecar. node:http's client (agent, parser,
 * IncomingMessage and ClientRequest objects, events) cost 40-55 µs of CPU per request, about a
 * fifth of the whole machine at 7,000 PUTs per second. This one writes a request as one string and
 * reads the status line and Content-Length of the answer: ~10 µs. It is still real HTTP over real
 * sockets: the sidecar parses, validates and answers every request as for any client, and every
 * answer's status is checked (the body is kept for the first error).
 */
import * as net from 'node:net';

export interface RawResponse {
  status: number;
  body: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');

export class RawHttpConnection {
  private socket: net.Socket | undefined;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (r: RawResponse) => void; reject: (e: Error) => void } | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** One request; resolves with the answer's status and body. */
  request(method: string, path: string, body: string): Promise<RawResponse> {
    const socket = this.connected();
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connected(): net.Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    const s = net.connect({ host: this.host, port: this.port, noDelay: true });
    this.buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => this.onData(d));
    const fail = (e: Error) => {
      const w = this.waiting;
      this.waiting = undefined;
      this.socket = undefined;
      w?.reject(e);
    };
    s.on('error', fail);
    s.on('close', () => fail(new Error('connection closed')));
    this.socket = s;
    return s;
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const end = this.buf.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!m) {
      // Every answer the sidecar gives these requests carries a Content-Length (a JSON string body).
      this.fail(new Error(`answer without Content-Length: ${head.slice(0, 200)}`));
      return;
    }
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    const body = this.buf.toString('utf8', end + 4, total);
    this.buf = this.buf.subarray(total);
    const w = this.waiting;
    this.waiting = undefined;
    w?.resolve({ status, body });
  }

  private fail(e: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    this.close();
    w?.reject(e);
  }
}
