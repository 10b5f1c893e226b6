/**
 * TLS material, loaded and checked once at start-up so a wrong path or a key that does not match
 * its certificate stops the sidecar with a clear message instead of failing the first handshake.
 *
 *  - Server side: `rest.ssl.key-file` + `rest.ssl.cert-file` (PEM) → the REST API serves HTTPS.
 *  - Client side: `cluster.resource-blocklist.yarn.ssl.ca-file` (PEM bundle) → an https.Agent that
 *    trusts exactly those CAs, for https:// RM and AMRM proxy addresses (peer-http.ts takes it as
 *    `httpsAgent`). Only the bundle is trusted, not the public roots: a private RM's CA is the
 *    whole point, and trusting every public CA as well would widen who can impersonate the RM.
 *
 * Nothing here logs key material; errors name files, never contents.
 */
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as tls from 'node:tls';

export class TlsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsConfigError';
  }
}

export interface ServerTls {
  key: Buffer;
  cert: Buffer;
}

function readPem(file: string, key: string, marker: RegExp, what: string): Buffer {
  let data: Buffer;
  try {
    data = fs.readFileSync(file);
  } catch (e) {
    throw new TlsConfigError(`${key}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!marker.test(data.toString('latin1'))) throw new TlsConfigError(`${key}: ${file} holds no PEM ${what}`);
  return data;
}

/** Both paths or neither; undefined when neither is set (plain HTTP). */
export function loadServerTls(keyFile: string, certFile: string): ServerTls | undefined {
  const k = keyFile.trim();
  const c = certFile.trim();
  if (!k && !c) return undefined;
  if (!k || !c) throw new TlsConfigError('rest.ssl.key-file and rest.ssl.cert-file must be set together (PEM private key and certificate chain)');
  const key = readPem(k, 'rest.ssl.key-file', /-----BEGIN [A-Z ]*PRIVATE KEY-----/, 'private key');
  const cert = readPem(c, 'rest.ssl.cert-file', /-----BEGIN CERTIFICATE-----/, 'certificate');
  try {
    tls.createSecureContext({ key, cert });
  } catch (e) {
    // OpenSSL's reason ("key values mismatch", "bad decrypt") without any key material.
    throw new TlsConfigError(`rest.ssl.key-file / rest.ssl.cert-file: unusable (${(e as Error).message.split('\n')[0].slice(0, 120)})`);
  }
  return { key, cert };
}

/** The CA bundle as PEM, checked to parse; undefined when the path is empty. */
export function loadCaBundle(caFile: string, key = 'cluster.resource-blocklist.yarn.ssl.ca-file'): Buffer | undefined {
  const f = caFile.trim();
  if (!f) return undefined;
  const ca = readPem(f, key, /-----BEGIN CERTIFICATE-----/, 'certificate');
  try {
    tls.createSecureContext({ ca });
  } catch (e) {
    throw new TlsConfigError(`${key}: ${f} is not a usable CA bundle (${(e as Error).message.split('\n')[0].slice(0, 120)})`);
  }
  return ca;
}

/**
 * An https.Agent for calls to the RM and the AMRM proxy: verifies certificates against the bundle
 * (never rejectUnauthorized: false) and keeps connections alive across the sync engine's polls.
 */
export function createYarnHttpsAgent(caFile: string): https.Agent | undefined {
  const ca = loadCaBundle(caFile);
  return ca ? new https.Agent({ ca, keepAlive: true, rejectUnauthorized: true }) : undefined;
}
