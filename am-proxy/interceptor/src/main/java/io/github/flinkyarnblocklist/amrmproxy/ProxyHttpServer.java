package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the proxy contract. One listener per bind address in a NodeManager process,
 * shared by the pipelines of every opted-in application whose AM runs there; a request names no
 * application: its bearer secret selects one, so a caller reaches only the application whose
 * secret it holds and learns nothing about others (unknown or missing secret: 401).
 */
public final class ProxyHttpServer implements HttpListener.Handler {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyHttpServer.class);
  private static final Map<String, ProxyHttpServer> BY_ADDRESS = new HashMap<>();
  /** A client has this long from connecting to the end of its headers, and as long again for its body. */
  static final long HEAD_DEADLINE_MS = 5_000;
  static final long BODY_DEADLINE_MS = 10_000;
  private static final Map<String, Endpoint> ROUTES = routes();

  /** One application's entry: its attempt and state. */
  public interface Binding {
    String applicationId();

    String appAttemptId();

    ProxyState state();

    /** The attempt's AM container id as the NodeManager runs it, or null when it is not known here. */
    default String amContainerId() {
      return null;
    }

    /**
     * A client's write changed the state; called before the answer is sent. The interceptor
     * stores what must survive a NodeManager restart here, so a 200 means the write survives one.
     */
    default void changed() {}
  }

  private final String key;
  private final HttpListener listener;
  private final Map<String, Binding> bySecretHash = new HashMap<>();
  private int users;

  private ProxyHttpServer(InetSocketAddress addr, long headMs, long bodyMs) throws IOException {
    this.listener = new HttpListener(addr, this, headMs, bodyMs);
    this.key = addr.getHostString() + ":" + listener.address().getPort();
  }

  private static Map<String, Endpoint> routes() {
    Map<String, Endpoint> m = new LinkedHashMap<>();
    m.put("/amrm/v1/attempt", new AttemptEndpoint());
    m.put("/amrm/v1/blacklist", new BlacklistEndpoint());
    m.put("/amrm/v1/containers", new ContainersEndpoint());
    m.put("/amrm/v1/containers/release", new ReleaseEndpoint());
    m.put("/amrm/v1/completed-containers", new CompletedEndpoint());
    return m;
  }

  /** The listener for this address, started on first use (reference counted). */
  public static ProxyHttpServer acquire(String host, int port) throws IOException {
    return acquire(host, port, HEAD_DEADLINE_MS, BODY_DEADLINE_MS);
  }

  /** As {@link #acquire(String, int)}, with the deadlines a new listener gets (tests shorten them). */
  static synchronized ProxyHttpServer acquire(String host, int port, long headMs, long bodyMs) throws IOException {
    // Port 0 (tests) is a new listener each time, known by the port it got.
    ProxyHttpServer s = port == 0 ? null : BY_ADDRESS.get(host + ":" + port);
    if (s == null) {
      InetSocketAddress addr = new InetSocketAddress(host, port);
      s = new ProxyHttpServer(addr, headMs, bodyMs);
      BY_ADDRESS.put(s.key, s);
      LOG.info("blocklist AMRM proxy listening on {}", s.address());
    }
    s.users++;
    return s;
  }

  public void release() {
    synchronized (ProxyHttpServer.class) {
      if (--users > 0) return;
      BY_ADDRESS.remove(key);
    }
    listener.stop();
    LOG.info("blocklist AMRM proxy on {} stopped", key);
  }

  public String address() {
    InetSocketAddress a = listener.address();
    return "http://" + a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  /**
   * Makes the secret select this binding, unless it already selects a later attempt of the
   * application: a pipeline AMRMProxyService#recover rebuilds for an earlier attempt must not
   * take the secret from the live one. Returns whether the secret now selects this binding.
   */
  public synchronized boolean register(String secret, Binding b) {
    String h = Secrets.digest(secret);
    Binding current = bySecretHash.get(h);
    if (current != null && current != b && attemptNumber(current) > attemptNumber(b)) return false;
    bySecretHash.put(h, b);
    return true;
  }

  /** The attempt's number (the id's last field); -1 when unreadable, so any readable one wins. */
  static int attemptNumber(Binding b) {
    String id = b.appAttemptId();
    int u = id == null ? -1 : id.lastIndexOf('_');
    try {
      return u < 0 ? -1 : Integer.parseInt(id.substring(u + 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** Removes the entry only if it is still this binding (a newer attempt may have replaced it). */
  public synchronized void unregister(String secret, Binding b) {
    bySecretHash.remove(Secrets.digest(secret), b);
  }

  private synchronized Binding lookup(String secret) {
    return bySecretHash.get(Secrets.digest(secret));
  }

  /** The secret first (before the path, so nothing is learned without one), then path, method and body size. */
  @Override
  public Answer head(Request r) {
    String auth = r.header("Authorization");
    Binding b = auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7) ? lookup(auth.substring(7).trim()) : null;
    if (b == null) {
      return Answer.error(401, "missing or unknown proxy secret: send 'Authorization: Bearer <secret>' with the secret the NodeManager handed to this application's AM container")
          .header("WWW-Authenticate", "Bearer realm=\"blocklist-amrm-proxy\"");
    }
    r.binding = b;
    Endpoint e = ROUTES.get(r.path);
    if (e == null) return Answer.error(404, "no such endpoint: " + Endpoint.clip(r.path));
    if (!e.methods().contains(r.method)) {
      String allow = String.join(", ", e.methods());
      return Answer.error(405, Endpoint.clip(r.method) + " is not allowed here; use " + allow).header("Allow", allow);
    }
    if (r.header("Transfer-Encoding") != null) return Answer.error(411, "send the body with a Content-Length");
    int length = HttpListener.contentLength(r);
    if (length < 0) return Answer.error(400, "Content-Length is not a length");
    if (length > HttpListener.MAX_BODY_BYTES) return Answer.error(413, "request body larger than " + HttpListener.MAX_BODY_BYTES + " bytes");
    return null;
  }

  @Override
  public Answer handle(Request r) {
    try {
      return ROUTES.get(r.path).answer(r, r.binding);
    } catch (Endpoint.Refusal e) {
      return e.answer;
    }
  }
}
