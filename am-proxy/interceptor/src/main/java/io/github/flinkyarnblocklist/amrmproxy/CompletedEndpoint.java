package io.github.flinkyarnblocklist.amrmproxy;


/** GET /amrm/v1/completed-containers?after=: the completed ring's entries after a reader's cursor. */
final class CompletedEndpoint extends Endpoint {
  CompletedEndpoint() {
    super("GET");
  }

  @Override
  Answer answer(Request r, ProxyHttpServer.Binding b) throws Refusal {
    return Answer.json(200, b.state().completedAfter(after(r.rawQuery)));
  }

  /** The query's `after=` (0 when none): once at most, 1 to 15 digits, as the contract says. */
  static long after(String query) throws Refusal {
    String found = null;
    if (query == null) return 0;
    for (String part : query.split("&")) {
      if (!part.startsWith("after=")) continue;
      if (found != null) throw new Refusal("\"after\" is given more than once");
      found = part.substring(6);
      if (!found.matches("\\d{1,15}")) throw new Refusal("\"after\" must be a non-negative integer (a seq from an earlier answer)");
    }
    return found == null ? 0 : Long.parseLong(found);
  }
}
