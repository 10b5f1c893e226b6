package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** JSON through the NodeManager's Jackson: the shapes the contract reads, and refusals that are a 400, never a crash. */
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
    assertEquals(2.5, Json.parse("2.5"));
    assertEquals("é\n", Json.parse("\"\\u00e9\\n\""));
  }

  @Test
  void malformedTextIsRefusedWithItsOffset() {
    for (String bad : List.of("[1", "[1}", "{\"a\":1 ", "{\"a\":1]", "{,}", "{\"a\" 1}", "[1,", "[1,]", "", "nope", "[1] 2")) {
      String m = refusal(bad);
      assertTrue(m.startsWith("malformed JSON: "), bad + ": " + m);
    }
    assertTrue(refusal("[1] [2]").contains("offset 4"), "the offset of what follows the value");
  }

  @Test
  void deepNestingIsRefusedNotFollowed() {
    assertTrue(refusal("[".repeat(33) + "]".repeat(33)).contains("nesting too deep"));
    // A megabyte of brackets (the body limit) is a 400, not a StackOverflowError in the NodeManager.
    assertTrue(refusal("[".repeat(1 << 20)).contains("nesting too deep"));
    assertTrue(refusal("{\"a\":".repeat(40) + "1" + "}".repeat(40)).contains("nesting too deep"));
  }
}
