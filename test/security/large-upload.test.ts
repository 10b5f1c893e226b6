/**
 * A body over rest.server.max-content-length gets a readable 413 even from a client that writes
 * the whole body before it reads anything (as Python's urllib does): the server must not close
 * the connection while the body is still arriving, which resets it before the answer is read.
 */
import { strict as assert } from 'node:assert';
import * as net from 'node:net';
import { TestSidecar, startTestSidecar } from '../support/sidecar';

/** Writes the request head and the whole body, then reads until the server closes or 10 s pass. */
function writeAllThenRead(url: string, size: number, chunked: boolean): Promise<{ text: string; error?: string }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let text = '';
    let error: string | undefined;
    const timer = setTimeout(() => sock.destroy(), 10_000);
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => (text += d));
    sock.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    sock.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ...(error ? { error } : {}) });
    });
    // Nothing is read until the whole body is written, in pieces as a socket takes them.
    sock.pause();
    const write = (b: Buffer | string) => new Promise<void>((ok) => (sock.write(b, () => ok()) ? undefined : undefined));
    sock.on('connect', async () => {
      const body = Buffer.alloc(size, 'x');
      body.write('{"action":"MARK_BLOCKED","cause":"');
      try {
        await write(`PUT /blocklist/nodes/big HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${size}`}\r\n\r\n`);
        for (let i = 0; i < size; i += 16_384) {
          const part = body.subarray(i, i + 16_384);
          if (chunked) await write(`${part.length.toString(16)}\r\n`);
          await write(part);
          if (chunked) await write('\r\n');
          await new Promise((r) => setTimeout(r, 1));
        }
        if (chunked) await write('0\r\n\r\n');
      } catch {
        // a write after the server closed: the read below says what the client got
      }
      sock.resume();
    });
  });
}

describe('security: a large upload gets a readable 413', () => {
  let s: TestSidecar;
  before(async () => {
    s = await startTestSidecar();
  });
  after(() => s.close());

  for (const chunked of [false, true]) {
    it(`3 MiB written whole before reading (${chunked ? 'chunked' : 'Content-Length'}): 413 with {errors}, no reset`, async () => {
      for (let round = 0; round < 3; round++) {
        const r = await writeAllThenRead(s.url, 3 * 1024 * 1024, chunked);
        assert.match(r.text, /^HTTP\/1\.1 413 /, `round ${round}: ${r.error ?? ''} ${r.text.slice(0, 200)}`);
        assert.match(r.text, /"errors":\["request body is larger than the limit of \d+ bytes/);
        assert.equal(r.error, undefined, `round ${round}: the connection failed (${r.error}) after ${r.text.length} bytes of answer`);
      }
      assert.equal((await s.store.list()).length, 0);
    });
  }
});
