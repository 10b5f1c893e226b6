package io.github.flinkyarnblocklist.amrmproxy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of the proxy contract. One listener per bind address in a NodeManager process,
 * shared by the pipelines of every application whose AM runs there; a request names no
 * application: its bearer secret selects one, so a caller reaches only the application whose
 * secret it holds and learns nothing about others (unknown or missing secret: 401).
 */
public final class ProxyHttpServer {
  private static final Logger LOG = LoggerFactory.getLogger(ProxyHttpServer.class);
  private static final int MAX_BODY = 1 << 20;
  private static final Map<String, ProxyHttpServer> BY_ADDRESS = new HashMap<>();

  /** One application's entry: its attempt and state. */
  public interface Binding {
    String applicationId();

    String appAttemptId();

    ProxyState state();

    /**
     * A client's write changed the state; called before the answer is sent. The interceptor
     * stores what must survive a NodeManager restart here, so a 200 means the write survives one.
     */
    default void changed() {}
  }

  private final String key;
  private final HttpServer server;
  private final ExecutorService pool;
  private final Map<String, Binding> bySecretHash = new HashMap<>();
  private int users;

  private ProxyHttpServer(String key, InetSocketAddress addr) throws IOException {
    this.key = key;
    this.server = HttpServer.create(addr, 64);
    ThreadFactory tf = r -> {
      Thread t = new Thread(r, "blocklist-amrm-proxy-http");
      t.setDaemon(true);
      return t;
    };
    this.pool = Executors.newFixedThreadPool(2, tf);
    server.setExecutor(pool);
    server.createContext("/", this::handle);
    server.start();
  }

  /** The listener for this address, started on first use (reference counted). */
  public static synchronized ProxyHttpServer acquire(String host, int port) throws IOException {
    String key = host + ":" + port;
    ProxyHttpServer s = BY_ADDRESS.get(key);
    if (s == null) {
      s = new ProxyHttpServer(key, new InetSocketAddress(host, port));
      BY_ADDRESS.put(key, s);
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
    server.stop(0);
    pool.shutdownNow();
    LOG.info("blocklist AMRM proxy on {} stopped", key);
  }

  public String address() {
    InetSocketAddress a = server.getAddress();
    return "http://" + a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  /**
   * Makes the secret select this binding, unless it already selects a later attempt of the
   * application: a pipeline AMRMProxyService#recover rebuilds for an earlier attempt (whose
   * entries outlived it in the NodeManager's state store) must not take the secret from the live
   * one. Returns whether the secret now selects this binding.
   */
  public synchronized boolean register(String secret, Binding b) {
    String h = hash(secret);
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
    bySecretHash.remove(hash(secret), b);
  }

  private synchronized Binding lookup(String secret) {
    return bySecretHash.get(hash(secret));
  }

  static String hash(String secret) {
    try {
      // Looked up by digest, so the map's comparisons never run over the secret itself.
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---------------------------------------------------------------- routing

  private void handle(HttpExchange ex) throws IOException {
    try {
      route(ex);
    } catch (RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: request failed", e);
      send(ex, 500, errors("internal error: " + e.getClass().getSimpleName()));
    } finally {
      ex.close();
    }
  }

  private void route(HttpExchange ex) throws IOException {
    String auth = ex.getRequestHeaders().getFirst("Authorization");
    Binding b = null;
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      b = lookup(auth.substring(7).trim());
    }
    if (b == null) {
      ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"blocklist-amrm-proxy\"");
      send(ex, 401, errors("missing or unknown proxy secret: send 'Authorization: Bearer <secret>' with the secret the NodeManager handed to this application's AM container"));
      return;
    }
    URI uri = ex.getRequestURI();
    String path = uri.getPath();
    String method = ex.getRequestMethod();
    ProxyState st = b.state();
    switch (path) {
      case "/amrm/v1/attempt": {
        if (!allow(ex, method, "GET")) return;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("applicationId", b.applicationId());
        m.put("appAttemptId", b.appAttemptId());
        m.put("registered", st.registered());
        send(ex, 200, m);
        return;
      }
      case "/amrm/v1/blacklist": {
        if ("GET".equals(method)) {
          // Versioned by a strong ETag: a reader that sends the tag it holds gets 304 and no body
          // while nothing changed (RFC 9110 sections 8.8.3, 13.1.2, 15.4.5); the list is megabytes
          // at 100,000 hosts and the sidecar asks every second.
          String ifNoneMatch = ex.getRequestHeaders().getFirst("If-None-Match");
          ProxyState.BlacklistRead r = st.blacklistRead(tag -> noneMatchHolds(ifNoneMatch, tag));
          ex.getResponseHeaders().set("ETag", r.etag());
          ex.getResponseHeaders().set("Cache-Control", "no-cache");
          if (r.notModified()) {
            ex.sendResponseHeaders(304, -1);
            return;
          }
          send(ex, 200, r.view());
          return;
        }
        if (!allow(ex, method, "POST")) return;
        Map<String, Object> body = objectBody(ex);
        if (body == null) return;
        Object owner = body.get("owner");
        if (owner != null && !(owner instanceof String)) {
          send(ex, 400, errors("\"owner\" must be a string"));
          return;
        }
        List<String> add = strings(ex, body, "blacklistAdditions");
        if (add == null) return;
        List<String> rem = strings(ex, body, "blacklistRemovals");
        if (rem == null) return;
        ProxyState.UpdateOutcome out = st.updateBlacklist((String) owner, add, rem);
        if (out instanceof ProxyState.Refused r) {
          send(ex, 400, errors(r.error()));
          return;
        }
        ProxyState.Updated u = (ProxyState.Updated) out;
        b.changed();
        // The version the change was applied to and the one it made: a writer whose last read
        // had previousEtag knows nobody else wrote in between.
        ex.getResponseHeaders().set("ETag", u.etag());
        Map<String, Object> answer = new LinkedHashMap<>();
        // RFC 7240 'Prefer: return=minimal': the two tags only, not the whole list back.
        if (prefersMinimal(ex.getRequestHeaders().get("Prefer"))) {
          ex.getResponseHeaders().set("Preference-Applied", "return=minimal");
        } else {
          answer.putAll(u.view());
        }
        answer.put("etag", u.etag());
        answer.put("previousEtag", u.previousEtag());
        send(ex, 200, answer);
        return;
      }
      case "/amrm/v1/containers": {
        if (!allow(ex, method, "GET")) return;
        List<Object> list = new ArrayList<>();
        for (ProxyState.Live c : st.containers()) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("containerId", c.containerId());
          m.put("nodeId", c.nodeId());
          m.put("nodeHttpAddress", c.nodeHttpAddress());
          m.put("state", c.state());
          list.add(m);
        }
        send(ex, 200, Map.of("containers", list));
        return;
      }
      case "/amrm/v1/containers/release": {
        if (!allow(ex, method, "POST")) return;
        Map<String, Object> body = objectBody(ex);
        if (body == null) return;
        if (!body.containsKey("containerIds")) {
          send(ex, 400, errors("body must be {\"containerIds\":[…]}"));
          return;
        }
        List<String> ids = strings(ex, body, "containerIds");
        if (ids == null) return;
        for (String id : ids) {
          if (!ProxyState.isContainerId(id)) {
            send(ex, 400, errors("containerIds: '" + clip(id) + "' is not a YARN container id"));
            return;
          }
        }
        Map<String, Object> released = st.release(ids);
        b.changed();
        send(ex, 200, released);
        return;
      }
      case "/amrm/v1/completed-containers": {
        if (!allow(ex, method, "GET")) return;
        long after = 0;
        String q = uri.getRawQuery();
        if (q != null) {
          for (String part : q.split("&")) {
            if (!part.startsWith("after=")) continue;
            String v = part.substring(6);
            if (!v.matches("\\d{1,15}")) {
              send(ex, 400, errors("\"after\" must be a non-negative integer (a seq from an earlier answer)"));
              return;
            }
            after = Long.parseLong(v);
          }
        }
        send(ex, 200, st.completedAfter(after));
        return;
      }
      default:
          send(ex, 404, errors("no such endpoint: " + clip(path)));
    }
  }

  /**
   * Whether If-None-Match names {@code etag} (or is '*'): then the GET answers 304. Weak
   * comparison, as RFC 9110 section 13.1.2 asks for this header: 'W/' is ignored on either side.
   */
  static boolean noneMatchHolds(String header, String etag) {
    if (header == null) return false;
    String current = opaqueTag(etag);
    for (String t : header.split(",")) {
      String tag = t.trim();
      if (tag.equals("*") || opaqueTag(tag).equals(current)) return true;
    }
    return false;
  }

  private static String opaqueTag(String t) {
    String s = t.trim();
    return s.startsWith("W/") ? s.substring(2) : s;
  }

  /** 'return=minimal' among the request's Prefer headers (RFC 7240 section 4.2). */
  static boolean prefersMinimal(List<String> prefer) {
    if (prefer == null) return false;
    for (String header : prefer) {
      for (String p : header.split(",")) {
        String token = p.split(";", 2)[0].replaceAll("\\s+", "").toLowerCase(Locale.ROOT);
        if (token.equals("return=minimal")) return true;
      }
    }
    return false;
  }

  private static boolean allow(HttpExchange ex, String method, String wanted) throws IOException {
    if (wanted.equals(method)) return true;
    ex.getResponseHeaders().set("Allow", wanted);
    send(ex, 405, errors(method + " is not allowed here; use " + wanted));
    return false;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> objectBody(HttpExchange ex) throws IOException {
    byte[] raw = readBody(ex);
    if (raw == null) {
      send(ex, 413, errors("request body larger than " + MAX_BODY + " bytes"));
      return null;
    }
    Object v;
    try {
      v = Json.parse(new String(raw, StandardCharsets.UTF_8));
    } catch (Json.BadJson e) {
      send(ex, 400, errors(e.getMessage()));
      return null;
    }
    if (!(v instanceof Map)) {
      send(ex, 400, errors("body must be a JSON object"));
      return null;
    }
    return (Map<String, Object>) v;
  }

  /** The list under {@code key} (absent or null: empty); a 400 is sent and null returned if it is not a list of strings. */
  private static List<String> strings(HttpExchange ex, Map<String, Object> body, String key)
      throws IOException {
    Object v = body.get(key);
    List<String> out = new ArrayList<>();
    if (v == null) return out;
    if (!(v instanceof List<?> l)) {
      send(ex, 400, errors("\"" + key + "\" must be a list of strings"));
      return null;
    }
    for (Object o : l) {
      if (!(o instanceof String s)) {
        send(ex, 400, errors("\"" + key + "\" must be a list of strings"));
        return null;
      }
      out.add(s);
    }
    return out;
  }

  private static byte[] readBody(HttpExchange ex) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      int n;
      while ((n = in.read(buf)) > 0) {
        b.write(buf, 0, n);
        if (b.size() > MAX_BODY) return null;
      }
      return b.toByteArray();
    }
  }

  private static String clip(String s) {
    return s.length() > 80 ? s.substring(0, 80) + "…" : s;
  }

  private static Map<String, Object> errors(String... messages) {
    return Map.of("errors", List.of(messages));
  }

  private static void send(HttpExchange ex, int status, Object body) throws IOException {
    byte[] b = Json.write(body).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    // Answers are state, not documents: never stored, unless a route said otherwise (a versioned one).
    if (!ex.getResponseHeaders().containsKey("Cache-Control")) ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }
}
