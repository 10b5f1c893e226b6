package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The hand-written parser: arrays and objects share their bracket and separator handling. */
class JsonTest {
  private static String refusal(String text) {
    return assertThrows(Json.BadJson.class, () -> Json.parse(text)).getMessage();
  }

  @Test
  void arraysAndObjectsEmptyNestedAndWithSpaces() throws Exception {
    assertEquals(List.of(), Json.parse("[]"));
    assertEquals(List.of(), Json.parse("[ \n ]"));
    assertEquals(Map.of(), Json.parse("{ }"));
    assertEquals(List.of(1L, "a", List.of(), Map.of("k", true)), Json.parse(" [1, \"a\" ,[ ],{\"k\" : true}] "));
    Map<?, ?> o = (Map<?, ?>) Json.parse("{\"additions\":[\"n1\",\"n2\"],\"removals\":[],\"x\":{\"y\":null}}");
    assertEquals(List.of("additions", "removals", "x"), List.copyOf(o.keySet()), "keys in the order sent");
    assertEquals(List.of("n1", "n2"), o.get("additions"));
    assertEquals("{\"a\":[1,\"b\"]}", Json.write(Json.parse("{ \"a\" : [ 1 , \"b\" ] }")));
  }

  @Test
  void malformedArraysAndObjectsAreNamedWithTheirOffset() {
    assertEquals("malformed JSON: unterminated array at offset 2", refusal("[1"));
    assertEquals("malformed JSON: expected ',' or ']' at offset 3", refusal("[1}"));
    assertEquals("malformed JSON: unterminated object at offset 7", refusal("{\"a\":1 "));
    assertEquals("malformed JSON: expected ',' or '}' at offset 7", refusal("{\"a\":1]"));
    assertEquals("malformed JSON: expected a key at offset 1", refusal("{,}"));
    assertEquals("malformed JSON: expected ':' at offset 6", refusal("{\"a\" 1}"));
    assertEquals("malformed JSON: unexpected end at offset 3", refusal("[1,"));
    assertEquals("malformed JSON: unexpected character ']' at offset 3", refusal("[1,]"));
  }
}
