package io.github.flinkyarnblocklist.amrmproxy;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON through the Jackson every supported NodeManager already loads (hadoop-common depends on
 * jackson-databind in 3.3, 3.4 and 3.5), read as plain maps and lists with bounded nesting: the
 * Jackson of Hadoop 3.3 has no nesting limit of its own, and a body of brackets must be a 400.
 */
public final class Json {
  private static final int MAX_DEPTH = 32;
  private static final JsonFactory FACTORY = new JsonFactory();
  private static final ObjectMapper MAPPER = new ObjectMapper(FACTORY);

  private Json() {}

  /** A body that is not JSON: the client gets a 400 with this message. */
  public static final class BadJson extends Exception {
    public BadJson(String message) {
      super(message);
    }
  }

  /** Objects as LinkedHashMap (keys in the order sent), arrays as ArrayList, integers as Long, other numbers as Double. */
  public static Object parse(String text) throws BadJson {
    try (JsonParser p = FACTORY.createParser(text)) {
      JsonToken t = p.nextToken();
      if (t == null) throw new BadJson("malformed JSON: no value");
      Object v = value(p, t, 0);
      if (p.nextToken() != null) throw new BadJson("malformed JSON: unexpected text after the value at offset " + offset(p));
      return v;
    } catch (JsonProcessingException e) {
      throw new BadJson("malformed JSON: " + e.getOriginalMessage() + " at offset " + e.getLocation().getCharOffset());
    } catch (IOException e) {
      throw new BadJson("malformed JSON: " + e.getMessage());
    }
  }

  private static long offset(JsonParser p) {
    return p.getTokenLocation().getCharOffset();
  }

  private static Object value(JsonParser p, JsonToken t, int depth) throws IOException, BadJson {
    switch (t) {
      case START_OBJECT: return object(p, depth + 1);
      case START_ARRAY: return array(p, depth + 1);
      case VALUE_STRING: return p.getText();
      case VALUE_NUMBER_INT: return integer(p);
      case VALUE_NUMBER_FLOAT: return p.getDoubleValue();
      case VALUE_TRUE: return Boolean.TRUE;
      case VALUE_FALSE: return Boolean.FALSE;
      case VALUE_NULL: return null;
      default: throw new BadJson("malformed JSON: unexpected " + t + " at offset " + offset(p));
    }
  }

  private static JsonToken next(JsonParser p) throws IOException, BadJson {
    JsonToken t = p.nextToken();
    if (t == null) throw new BadJson("malformed JSON: unexpected end at offset " + offset(p));
    return t;
  }

  private static Object integer(JsonParser p) throws IOException {
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) return p.getDoubleValue();
    return p.getLongValue();
  }

  private static Map<String, Object> object(JsonParser p, int depth) throws IOException, BadJson {
    if (depth > MAX_DEPTH) throw new BadJson("malformed JSON: nesting too deep at offset " + offset(p));
    Map<String, Object> out = new LinkedHashMap<>();
    for (JsonToken t = next(p); t != JsonToken.END_OBJECT; t = next(p)) {
      String key = p.getCurrentName();
      out.put(key, value(p, next(p), depth));
    }
    return out;
  }

  private static List<Object> array(JsonParser p, int depth) throws IOException, BadJson {
    if (depth > MAX_DEPTH) throw new BadJson("malformed JSON: nesting too deep at offset " + offset(p));
    List<Object> out = new ArrayList<>();
    for (JsonToken t = next(p); t != JsonToken.END_ARRAY; t = next(p)) out.add(value(p, t, depth));
    return out;
  }

  /** Maps, collections, strings, numbers, booleans and null, compact. */
  public static String write(Object v) {
    try {
      return MAPPER.writeValueAsString(v);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot write " + v.getClass(), e);
    }
  }
}
