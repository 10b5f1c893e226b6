package io.github.flinkyarnblocklist.yarntest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The launchers' control endpoint on 127.0.0.1: JSON answers to what tests read or do inside YARN.
 * A handler that throws answers 500 with the exception (a test tool: the test shows it).
 */
public final class ControlEndpoint {
  /** Answers one request with {@link #reply}. */
  public interface Handler {
    void handle(HttpExchange ex) throws Exception;
  }

  private final Function<Object, String> toJson;

  /** {@code toJson}: the caller's JSON writer (this module brings none). */
  public ControlEndpoint(Function<Object, String> toJson) {
    this.toJson = toJson;
  }

  /** Serves the handler on an ephemeral port of 127.0.0.1. */
  public HttpServer serve(Handler handler) throws IOException {
    HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    s.createContext("/", ex -> {
      try {
        handler.handle(ex);
      } catch (Exception e) {
        e.printStackTrace();
        reply(ex, 500, Map.of("errors", List.of(e.toString())));
      } finally {
        ex.close();
      }
    });
    s.start();
    return s;
  }

  public void reply(HttpExchange ex, int status, Object body) throws IOException {
    byte[] b = toJson.apply(body).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(b);
    }
  }

  /** The request's query parameters, decoded. */
  public static Map<String, String> query(HttpExchange ex) {
    String raw = ex.getRequestURI().getRawQuery();
    Map<String, String> q = new LinkedHashMap<>();
    for (String kv : raw == null ? new String[0] : raw.split("&")) {
      int eq = kv.indexOf('=');
      if (eq > 0) q.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
    }
    return q;
  }
}
