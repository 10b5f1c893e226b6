package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the proxy contract needs, written by hand: the interceptor runs inside the
 * NodeManager and must not add a JSON library (or a second copy of one) to its classpath.
 * The parser accepts any JSON value (RFC 8259) with bounded nesting and size, and maps objects to
 * LinkedHashMap, arrays to ArrayList, numbers to Double/Long, strings, booleans and null.
 */
public final class Json {
  private Json() {}

  /** A body that is not JSON, or not of the expected shape: the client gets a 400 with this message. */
  public static final class BadJson extends Exception {
    public BadJson(String message) {
      super(message);
    }
  }

  private static final int MAX_DEPTH = 32;

  public static Object parse(String text) throws BadJson {
    Parser p = new Parser(text);
    p.ws();
    Object v = p.value(0);
    p.ws();
    if (p.i != text.length()) throw new BadJson("unexpected text after the JSON value at offset " + p.i);
    return v;
  }

  private static final class Parser {
    final String s;
    int i;

    Parser(String s) {
      this.s = s;
    }

    void ws() {
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') i++;
        else break;
      }
    }

    BadJson err(String what) {
      return new BadJson("malformed JSON: " + what + " at offset " + i);
    }

    Object value(int depth) throws BadJson {
      if (depth > MAX_DEPTH) throw err("nesting too deep");
      if (i >= s.length()) throw err("unexpected end");
      char c = s.charAt(i);
      switch (c) {
        case '{': return object(depth);
        case '[': return array(depth);
        case '"': return string();
        case 't': return literal("true", Boolean.TRUE);
        case 'f': return literal("false", Boolean.FALSE);
        case 'n': return literal("null", null);
        default:
          if (c == '-' || (c >= '0' && c <= '9')) return number();
          throw err("unexpected character '" + c + "'");
      }
    }

    Object literal(String word, Object v) throws BadJson {
      if (!s.startsWith(word, i)) throw err("unexpected token");
      i += word.length();
      return v;
    }

    Object number() throws BadJson {
      int start = i;
      if (s.charAt(i) == '-') i++;
      boolean frac = false;
      while (i < s.length()) {
        char c = s.charAt(i);
        if (c >= '0' && c <= '9') i++;
        else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
          frac = true;
          i++;
        } else break;
      }
      String t = s.substring(start, i);
      try {
        if (!frac) return Long.parseLong(t);
        return Double.parseDouble(t);
      } catch (NumberFormatException e) {
        throw err("bad number '" + t + "'");
      }
    }

    String string() throws BadJson {
      i++; // opening quote
      StringBuilder b = new StringBuilder();
      while (true) {
        if (i >= s.length()) throw err("unterminated string");
        char c = s.charAt(i++);
        if (c == '"') return b.toString();
        if (c < 0x20) throw err("control character in string");
        if (c != '\\') {
          b.append(c);
          continue;
        }
        if (i >= s.length()) throw err("unterminated escape");
        char e = s.charAt(i++);
        switch (e) {
          case '"': b.append('"'); break;
          case '\\': b.append('\\'); break;
          case '/': b.append('/'); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'n': b.append('\n'); break;
          case 'r': b.append('\r'); break;
          case 't': b.append('\t'); break;
          case 'u':
            if (i + 4 > s.length()) throw err("short \\u escape");
            try {
              b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            } catch (NumberFormatException x) {
              throw err("bad \\u escape");
            }
            i += 4;
            break;
          default: throw err("bad escape");
        }
      }
    }

    /** Past an array's or object's opening bracket: true when `close` follows at once (it is empty). */
    boolean openedEmpty(char close) {
      i++;
      ws();
      if (i < s.length() && s.charAt(i) == close) {
        i++;
        return true;
      }
      return false;
    }

    /** After a member: true at ',' (another follows), false at `close`; anything else is malformed. */
    boolean anotherBefore(char close, String what) throws BadJson {
      ws();
      if (i >= s.length()) throw err("unterminated " + what);
      char c = s.charAt(i++);
      if (c == close) return false;
      if (c != ',') throw err("expected ',' or '" + close + "'");
      return true;
    }

    List<Object> array(int depth) throws BadJson {
      List<Object> out = new ArrayList<>();
      if (openedEmpty(']')) return out;
      do {
        ws();
        out.add(value(depth + 1));
      } while (anotherBefore(']', "array"));
      return out;
    }

    Map<String, Object> object(int depth) throws BadJson {
      Map<String, Object> out = new LinkedHashMap<>();
      if (openedEmpty('}')) return out;
      do {
        ws();
        if (i >= s.length() || s.charAt(i) != '"') throw err("expected a key");
        String k = string();
        ws();
        if (i >= s.length() || s.charAt(i++) != ':') throw err("expected ':'");
        ws();
        out.put(k, value(depth + 1));
      } while (anotherBefore('}', "object"));
      return out;
    }
  }

  // ---- writing ----

  public static String write(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v);
    return b.toString();
  }

  @SuppressWarnings("unchecked")
  private static void write(StringBuilder b, Object v) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof String) {
      quote(b, (String) v);
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
      b.append(v);
    } else if (v instanceof Map) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
        if (!first) b.append(',');
        first = false;
        quote(b, e.getKey());
        b.append(':');
        write(b, e.getValue());
      }
      b.append('}');
    } else if (v instanceof Collection) {
      b.append('[');
      boolean first = true;
      for (Object o : (Collection<Object>) v) {
        if (!first) b.append(',');
        first = false;
        write(b, o);
      }
      b.append(']');
    } else {
      throw new IllegalArgumentException("cannot write " + v.getClass());
    }
  }

  private static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"': b.append("\\\""); break;
        case '\\': b.append("\\\\"); break;
        case '\n': b.append("\\n"); break;
        case '\r': b.append("\\r"); break;
        case '\t': b.append("\\t"); break;
        default:
          if (c < 0x20 || c == 0x2028 || c == 0x2029) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
      }
    }
    b.append('"');
  }
}
