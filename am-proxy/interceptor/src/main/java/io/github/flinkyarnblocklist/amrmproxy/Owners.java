package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The blacklist's writers, each with its own host set: the AM's own (owner "am", filled only from
 * its allocate calls) and one per HTTP client; the RM gets the union, so one owner's removal never
 * lifts a host another holds. Not thread-safe: ProxyState guards it.
 */
final class Owners {
  static final String AM_OWNER = "am";
  static final String DEFAULT_OWNER = "blocklist";
  /** ResourceRequest.ANY: the RM refuses a whole allocate whose blacklist additions hold it. */
  static final String ANY = "*";
  private static final Pattern OWNER = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
  private static final int MAX_HOST = 255;

  private final Map<String, TreeSet<String>> byOwner = new TreeMap<>();
  private final TreeSet<String> am = new TreeSet<>();

  /** Why a client's update is refused (nothing changes), or null when it may be applied. */
  static String refusal(String owner, List<String> additions, List<String> removals) {
    if (!OWNER.matcher(owner).matches()) {
      return "\"owner\" must be a short token (letters, digits, '.', '_', '-'; at most 64)";
    }
    if (AM_OWNER.equals(owner)) {
      return "owner \"am\" is the ApplicationMaster's own blacklist: it changes only through the AM's allocate calls";
    }
    for (String h : additions) {
      if (ANY.equals(h)) return "Cannot add * to the blacklist!";
      String bad = hostError(h);
      if (bad != null) return "blacklistAdditions: " + bad;
    }
    for (String h : removals) {
      String bad = hostError(h);
      if (bad != null) return "blacklistRemovals: " + bad;
    }
    return null;
  }

  static String hostError(String h) {
    if (h.isEmpty()) return "a host name must not be empty";
    if (h.length() > MAX_HOST) return "a host name is at most " + MAX_HOST + " characters";
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (c <= 0x20 || c == 0x7f) return "a host name must not contain spaces or control characters";
    }
    return null;
  }

  /** Additions, then removals (a host in both ends up removed, as AMRMClient#updateBlacklist does); whether the set changed. */
  boolean update(String owner, Collection<String> additions, Collection<String> removals) {
    TreeSet<String> set = byOwner.get(owner);
    if (set == null) set = new TreeSet<>();
    boolean changed = set.addAll(additions);
    changed |= set.removeAll(removals);
    if (set.isEmpty()) byOwner.remove(owner);
    else byOwner.put(owner, set);
    return changed;
  }

  /** The AM's own delta, from its allocate; whether its set changed. */
  boolean updateAm(Collection<String> additions, Collection<String> removals) {
    boolean changed = am.addAll(additions);
    changed |= am.removeAll(removals);
    return changed;
  }

  TreeSet<String> union() {
    TreeSet<String> u = new TreeSet<>(am);
    for (TreeSet<String> s : byOwner.values()) u.addAll(s);
    return u;
  }

  /** {"blacklist":[union], "owners":{owner:[hosts]}}, the AM's own set as owner "am". */
  Map<String, Object> view() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("blacklist", new ArrayList<>(union()));
    Map<String, Object> owners = new TreeMap<>();
    if (!am.isEmpty()) owners.put(AM_OWNER, new ArrayList<>(am));
    for (Map.Entry<String, TreeSet<String>> e : byOwner.entrySet()) owners.put(e.getKey(), new ArrayList<>(e.getValue()));
    out.put("owners", owners);
    return out;
  }

  List<String> amHosts() {
    return new ArrayList<>(am);
  }

  /** The clients' sets, as the durable record stores them. */
  Map<String, Object> clientSets() {
    Map<String, Object> m = new TreeMap<>();
    for (Map.Entry<String, TreeSet<String>> e : byOwner.entrySet()) m.put(e.getKey(), new ArrayList<>(e.getValue()));
    return m;
  }

  /**
   * Takes back a stored record's sets; a client's set written to this instance already is kept
   * (its listener serves before the record is read, so what it holds is newer).
   */
  void restore(Collection<String> amHosts, Map<String, TreeSet<String>> clients) {
    Map<String, TreeSet<String>> merged = new TreeMap<>(clients);
    merged.putAll(byOwner);
    am.clear();
    am.addAll(amHosts);
    byOwner.clear();
    byOwner.putAll(merged);
  }
}
