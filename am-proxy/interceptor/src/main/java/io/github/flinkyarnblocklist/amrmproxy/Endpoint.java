package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** One path of the proxy contract (docs/amrm-proxy.openapi.yaml): the methods it has and what it answers. */
abstract class Endpoint {
  private final List<String> methods;

  Endpoint(String... methods) {
    this.methods = Arrays.asList(methods);
  }

  /** The methods this path has; any other is a 405 naming them in Allow. */
  final List<String> methods() {
    return methods;
  }

  /** The answer for a request the server let through (authenticated, method allowed, body read). */
  abstract Answer answer(Request r, ProxyHttpServer.Binding b) throws Refusal;

  /** A request an endpoint refuses: the answer says why (a 400 with the contract's error body). */
  static final class Refusal extends Exception {
    final Answer answer;

    Refusal(String message) {
      super(message, null, false, false);
      this.answer = Answer.error(400, message);
    }

    Refusal(Answer answer) {
      super("refused", null, false, false);
      this.answer = answer;
    }
  }

  /** The request's body as a JSON object. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> objectBody(Request r) throws Refusal {
    Object v;
    try {
      v = Json.parse(new String(r.body(), java.nio.charset.StandardCharsets.UTF_8));
    } catch (Json.BadJson e) {
      throw new Refusal(e.getMessage());
    }
    if (!(v instanceof Map)) throw new Refusal("body must be a JSON object");
    return (Map<String, Object>) v;
  }

  /** The list of strings under {@code key} (absent or null: empty). */
  static List<String> strings(Map<String, Object> body, String key) throws Refusal {
    Object v = body.get(key);
    List<String> out = new ArrayList<>();
    if (v == null) return out;
    if (!(v instanceof List)) throw new Refusal("\"" + key + "\" must be a list of strings");
    for (Object o : (List<?>) v) {
      if (!(o instanceof String)) throw new Refusal("\"" + key + "\" must be a list of strings");
      out.add((String) o);
    }
    return out;
  }

  static String clip(String s) {
    return s.length() > 80 ? s.substring(0, 80) + "…" : s;
  }
}
