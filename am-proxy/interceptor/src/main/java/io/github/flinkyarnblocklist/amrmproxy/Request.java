package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** One HTTP request as the listener read it: its head first, the body once the head was let through. */
final class Request {
  final String method;
  final String path;
  /** The query as sent (not decoded), or null. */
  final String rawQuery;
  private final Map<String, List<String>> headers = new LinkedHashMap<>();
  private byte[] body = new byte[0];
  /** The application the bearer secret selected (set by the server before any endpoint runs). */
  ProxyHttpServer.Binding binding;

  Request(String method, String target) {
    this.method = method;
    int q = target.indexOf('?');
    this.path = q < 0 ? target : target.substring(0, q);
    this.rawQuery = q < 0 ? null : target.substring(q + 1);
  }

  void addHeader(String name, String value) {
    String key = name.toLowerCase(Locale.ROOT);
    List<String> values = headers.get(key);
    if (values == null) {
      values = new ArrayList<>();
      headers.put(key, values);
    }
    values.add(value);
  }

  /** The first value of the header (names compared without case), or null. */
  String header(String name) {
    List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
    return v == null || v.isEmpty() ? null : v.get(0);
  }

  /** Every value of the header, in the order sent. */
  List<String> headers(String name) {
    List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
    return v == null ? Collections.<String>emptyList() : v;
  }

  byte[] body() {
    return body;
  }

  void body(byte[] b) {
    body = b;
  }
}
