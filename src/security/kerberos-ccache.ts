/**
 * Reads when the sidecar's ticket-granting ticket starts and ends, from the MIT credential cache
 * file that the GSSAPI library wrote for it, so the login can be renewed before it expires.
 *
 * Why read the file: the `kerberos` npm package (GSSAPI bindings) gets and uses tickets but does not
 * say when they expire, and the renewal must be scheduled from that. Only the documented FILE
 * format versions 3 and 4 (big-endian; MIT's format is cited in docs/security.md) are read, and
 * only names and times: no key, no ticket is decoded or used here. Anything else
 * (another version, a truncated file) gives undefined and the caller falls back to a fixed period.
 */
import * as fs from 'node:fs';

export interface TicketTimes {
  /** Client principal of the credential, 'name@REALM'. */
  client: string;
  /** Server principal, 'krbtgt/REALM@REALM' for a TGT. */
  server: string;
  /** Epoch ms. */
  authTime: number;
  startTime: number;
  endTime: number;
}

class Reader {
  private pos = 0;
  constructor(private readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }
  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  counted(): Buffer {
    return this.bytes(this.u32());
  }
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new RangeError('truncated credential cache');
  }
}

function principal(r: Reader): string {
  r.u32(); // name type
  const count = r.u32();
  if (count > 64) throw new RangeError('implausible principal');
  const realm = r.counted().toString('utf8');
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(r.counted().toString('utf8'));
  return `${parts.join('/')}@${realm}`;
}

/** Every credential in the cache (configuration entries included), or undefined when unreadable. */
export function readCredentialTimes(buf: Buffer): TicketTimes[] | undefined {
  try {
    const r = new Reader(buf);
    const version = r.u16();
    if (version !== 0x0504 && version !== 0x0503) return undefined;
    if (version === 0x0504) r.bytes(r.u16()); // header tags (KDC time offset): not needed
    principal(r); // default principal
    const out: TicketTimes[] = [];
    while (!r.done) {
      const client = principal(r);
      const server = principal(r);
      r.u16(); // key type
      if (version === 0x0503) r.u16(); // version 3 repeats it
      r.counted(); // key (skipped, never kept)
      const authTime = r.u32();
      const startTime = r.u32();
      const endTime = r.u32();
      r.u32(); // renew till
      r.u8(); // is_skey
      r.u32(); // flags
      for (let n = r.u32(), i = 0; i < n; i++) {
        r.u16();
        r.counted();
      }
      for (let n = r.u32(), i = 0; i < n; i++) {
        r.u16();
        r.counted();
      }
      r.counted(); // ticket
      r.counted(); // second ticket
      out.push({ client, server, authTime: authTime * 1000, startTime: (startTime || authTime) * 1000, endTime: endTime * 1000 });
    }
    return out;
  } catch {
    return undefined;
  }
}

/**
 * The ticket-granting ticket of `clientPrincipal` with the latest end, from a FILE cache; undefined
 * when the file is missing, unreadable or holds none (then renewal falls back to a fixed period).
 */
export function readTgtTimes(file: string, clientPrincipal: string): TicketTimes | undefined {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return undefined;
  }
  const creds = readCredentialTimes(buf);
  if (!creds) return undefined;
  const wanted = clientPrincipal.toLowerCase();
  let best: TicketTimes | undefined;
  for (const c of creds) {
    // Configuration entries are stored as credentials of a pseudo realm "X-CACHECONF:".
    if (!c.server.startsWith('krbtgt/') || c.server.endsWith('@X-CACHECONF:')) continue;
    // A principal configured without '@REALM' is in the default realm: compare the name only.
    const client = c.client.toLowerCase();
    if (wanted.includes('@') ? client !== wanted : client.slice(0, client.lastIndexOf('@')) !== wanted) continue;
    if (!best || c.endTime > best.endTime) best = c;
  }
  return best;
}
