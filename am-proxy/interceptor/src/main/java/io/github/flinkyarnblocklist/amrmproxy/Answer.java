package io.github.flinkyarnblocklist.amrmproxy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** One HTTP answer: status, headers, and a JSON body (none for 304). */
final class Answer {
  final int status;
  final Map<String, String> headers = new LinkedHashMap<>();
  final byte[] body;

  private Answer(int status, byte[] body) {
    this.status = status;
    this.body = body;
    if (body != null) headers.put("Content-Type", "application/json; charset=utf-8");
  }

  /** A JSON answer; answers are state, not documents: never stored unless a route says otherwise. */
  static Answer json(int status, Object body) {
    Answer a = new Answer(status, Json.write(body).getBytes(StandardCharsets.UTF_8));
    a.headers.put("Cache-Control", "no-store");
    return a;
  }

  /** A body-less answer (304 Not Modified). */
  static Answer empty(int status) {
    return new Answer(status, null);
  }

  /** The error body of the contract: {"errors": [...]}. */
  static Answer error(int status, String... messages) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("errors", Arrays.asList(messages));
    return json(status, m);
  }

  /** The same status and headers without the body: the answer to a HEAD. */
  Answer withoutBody() {
    Answer a = new Answer(status, null);
    a.headers.putAll(headers);
    return a;
  }

  Answer header(String name, String value) {
    headers.put(name, value);
    return this;
  }

  /** A one-key JSON object, for answers and error bodies alike. */
  static Map<String, Object> object(String key, Object value) {
    return Collections.singletonMap(key, value);
  }
}
