package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Collections;
import java.util.List;

/** GET /amrm/v1/completed-containers?after=: the completed ring's entries after a reader's cursor. */
final class CompletedEndpoint implements Endpoint {
  @Override
  public List<String> methods() {
    return Collections.singletonList("GET");
  }

  @Override
  public Answer answer(Request r, ProxyHttpServer.Binding b) throws Refusal {
    return Answer.json(200, b.state().completedAfter(after(r.rawQuery)));
  }

  /** The last `after=` of the query (0 when none): at most 15 digits, as the contract says. */
  static long after(String query) throws Refusal {
    long after = 0;
    if (query == null) return after;
    for (String part : query.split("&")) {
      if (!part.startsWith("after=")) continue;
      String v = part.substring(6);
      if (!v.matches("\\d{1,15}")) throw new Refusal("\"after\" must be a non-negative integer (a seq from an earlier answer)");
      after = Long.parseLong(v);
    }
    return after;
  }
}
