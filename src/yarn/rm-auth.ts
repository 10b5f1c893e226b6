/**
 * How the RM client authenticates each request when the RM runs with
 * hadoop.http.authentication.type=kerberos (SPNEGO, RFC 4559). The RM client only asks for a header
 * per RM host and reports a 401; getting and renewing tickets is the implementer's business
 * (src/security/kerberos.ts), so this layer needs no Kerberos library.
 */
export interface RmAuthorization {
  /** The `Authorization` header value, e.g. `Negotiate YIIC…`. */
  header: string;
  /**
   * Checks the server's `WWW-Authenticate: Negotiate <token>` of a non-401 answer (mutual
   * authentication: the answer came from the holder of the service key). Rejects when it does not verify.
   */
  verify(wwwAuthenticate: string | undefined): Promise<void>;
}

export interface RmAuthenticator {
  /** The sidecar's own principal, for messages. */
  readonly principal: string;
  /** The service principal a request to `host` is authenticated for (HTTP/<host>@REALM), for messages. */
  servicePrincipal(host: string): string;
  /** A header for one request to `host` (the URL's host name, no port). Rejects with what GSSAPI/the KDC said. */
  authorize(host: string): Promise<RmAuthorization>;
  /** A fresh login (after the RM refused a ticket). Rejects with what the KDC said. */
  relogin(reason: string): Promise<void>;
}

/** The `Negotiate` challenge of a 401, if the server offers SPNEGO. */
export function offersNegotiate(wwwAuthenticate: unknown): boolean {
  const values = Array.isArray(wwwAuthenticate) ? wwwAuthenticate : [wwwAuthenticate];
  return values.some((v) => typeof v === 'string' && /(^|,)\s*Negotiate\b/i.test(v));
}
