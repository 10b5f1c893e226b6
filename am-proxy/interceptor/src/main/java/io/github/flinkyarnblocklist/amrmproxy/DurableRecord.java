package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a NodeManager restart must not lose of one proxy state, read back from its JSON form:
 * with work-preserving recovery the AM, its containers and the RM's blacklist live on while a new
 * interceptor is built, and the AM sends neither its blacklist nor a registration again.
 */
final class DurableRecord {
  static final long VERSION = 1;
  boolean registered;
  TreeSet<String> am;
  Map<String, TreeSet<String>> owners;
  TreeSet<String> sent;
  List<String> passRemovals;
  List<String> pendingReleases;
  Map<String, Live> live;
  Map<String, String> releasedNodes;

  /** The record read whole; IllegalArgumentException naming what is wrong when it cannot be. */
  static DurableRecord read(Object json) {
    Map<String, Object> m = map(json, "the record");
    if (!Long.valueOf(VERSION).equals(m.get("v"))) throw new IllegalArgumentException("unknown record version " + m.get("v"));
    DurableRecord r = new DurableRecord();
    r.registered = Boolean.TRUE.equals(m.get("registered"));
    r.am = new TreeSet<>(strings(m.get("am"), "am"));
    r.owners = new TreeMap<>();
    for (Map.Entry<String, Object> e : map(m.get("owners"), "owners").entrySet()) {
      TreeSet<String> set = new TreeSet<>(strings(e.getValue(), "owners." + e.getKey()));
      if (!set.isEmpty()) r.owners.put(e.getKey(), set);
    }
    r.sent = new TreeSet<>(strings(m.get("sent"), "sent"));
    r.passRemovals = strings(m.get("passRemovals"), "passRemovals");
    r.pendingReleases = strings(m.get("pendingReleases"), "pendingReleases");
    r.live = live(m.get("live"));
    r.releasedNodes = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : map(m.get("releasedNodes"), "releasedNodes").entrySet()) {
      if (!(e.getValue() instanceof String)) throw new IllegalArgumentException("releasedNodes." + e.getKey() + " is not a string");
      r.releasedNodes.put(e.getKey(), (String) e.getValue());
    }
    return r;
  }

  private static Map<String, Live> live(Object rows) {
    if (!(rows instanceof List)) throw new IllegalArgumentException("live is not a list");
    Map<String, Live> out = new LinkedHashMap<>();
    for (Object row : (List<?>) rows) {
      List<String> r = strings(row, "a live row");
      if (r.size() != 3) throw new IllegalArgumentException("a live row is not [containerId, nodeId, nodeHttpAddress]");
      out.put(r.get(0), new Live(r.get(0), r.get(1), r.get(2), "RUNNING"));
    }
    return out;
  }

  /** A live container as the record holds it. */
  static List<String> row(Live c) {
    List<String> r = new ArrayList<>();
    r.add(c.containerId());
    r.add(c.nodeId());
    r.add(c.nodeHttpAddress());
    return r;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String what) {
    if (!(o instanceof Map)) throw new IllegalArgumentException(what + " is not an object");
    return (Map<String, Object>) o;
  }

  static List<String> strings(Object o, String what) {
    if (!(o instanceof List)) throw new IllegalArgumentException(what + " is not a list");
    List<String> out = new ArrayList<>();
    for (Object x : (List<?>) o) {
      if (!(x instanceof String)) throw new IllegalArgumentException(what + " holds a non-string");
      out.add((String) x);
    }
    return out;
  }
}
