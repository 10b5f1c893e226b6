package io.github.flinkyarnblocklist.amrmproxy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * GET and POST /amrm/v1/blacklist: the union and each owner's set, versioned by a strong ETag (a
 * reader holding the current tag gets 304 and nothing is serialised: the list is megabytes at
 * 100,000 hosts and the sidecar asks every second); one owner's change per POST.
 */
final class BlacklistEndpoint extends Endpoint {
  BlacklistEndpoint() {
    super("GET", "POST");
  }

  @Override
  Answer answer(Request r, ProxyHttpServer.Binding b) throws Refusal {
    return "GET".equals(r.method) ? read(r, b) : update(r, b);
  }

  private static Answer read(Request r, ProxyHttpServer.Binding b) {
    final String ifNoneMatch = r.header("If-None-Match");
    BlacklistRead read = b.state().blacklistRead(tag -> noneMatchHolds(ifNoneMatch, tag));
    Answer a = read.notModified() ? Answer.empty(304) : Answer.json(200, read.view());
    return a.header("ETag", read.etag()).header("Cache-Control", "no-cache");
  }

  private static Answer update(Request r, ProxyHttpServer.Binding b) throws Refusal {
    Map<String, Object> body = Endpoint.objectBody(r);
    Object owner = body.get("owner");
    if (owner != null && !(owner instanceof String)) throw new Refusal("\"owner\" must be a string");
    List<String> add = Endpoint.strings(body, "blacklistAdditions");
    List<String> rem = Endpoint.strings(body, "blacklistRemovals");
    UpdateOutcome out = b.state().updateBlacklist((String) owner, add, rem);
    if (out instanceof UpdateOutcome.Refused) throw new Refusal(((UpdateOutcome.Refused) out).error());
    UpdateOutcome.Updated u = (UpdateOutcome.Updated) out;
    b.changed();
    // The version the change was applied to and the one it made: a writer whose last read had
    // previousEtag knows nobody else wrote in between. 'Prefer: return=minimal': the tags only.
    boolean minimal = prefersMinimal(r.headers("Prefer"));
    Map<String, Object> answer = new LinkedHashMap<>();
    if (!minimal) answer.putAll(u.view());
    answer.put("etag", u.etag());
    answer.put("previousEtag", u.previousEtag());
    Answer a = Answer.json(200, answer).header("ETag", u.etag());
    return minimal ? a.header("Preference-Applied", "return=minimal") : a;
  }

  /** Whether If-None-Match names {@code etag} (or is '*'); weak comparison, as RFC 9110 section 13.1.2 asks. */
  static boolean noneMatchHolds(String header, String etag) {
    if (header == null) return false;
    String current = opaqueTag(etag);
    for (String t : header.split(",")) {
      String tag = t.trim();
      if (tag.equals("*") || opaqueTag(tag).equals(current)) return true;
    }
    return false;
  }

  private static String opaqueTag(String t) {
    String s = t.trim();
    return s.startsWith("W/") ? s.substring(2) : s;
  }

  /** 'return=minimal' among the request's Prefer headers (RFC 7240 section 4.2). */
  static boolean prefersMinimal(List<String> prefer) {
    if (prefer == null) return false;
    for (String header : prefer) {
      for (String p : header.split(",")) {
        String token = p.split(";", 2)[0].replaceAll("\\s+", "").toLowerCase(Locale.ROOT);
        if (token.equals("return=minimal")) return true;
      }
    }
    return false;
  }
}
