package io.github.flinkyarnblocklist.amrmproxy;

import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * What one application's proxy knows, with no Hadoop type in it so it is tested on its own.
 *
 * <p>Blacklist ownership: the AM's own blacklist requests (what its AMRMClient puts in each
 * allocate) form the owner {@code am}; HTTP clients each change only their own owner's set (the
 * sidecar's is {@code blocklist}). The RM is sent the union: on every allocate the proxy replaces
 * the AM's blacklist delta by the difference between the union and what it has already sent, so a
 * host one owner removes stays on the RM's blacklist while another owner holds it.
 *
 * <p>Releases asked for over HTTP join the next allocate's release list; live containers are
 * tracked from allocate and register responses; completed ones go into a bounded ring with a
 * sequence number.
 */
public final class ProxyState {
  public static final String AM_OWNER = "am";
  public static final String DEFAULT_OWNER = "blocklist";
  /** ResourceRequest.ANY: the RM refuses a whole allocate whose blacklist additions hold it. */
  public static final String ANY = "*";
  private static final Pattern OWNER = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$");
  private static final Pattern CONTAINER_ID =
      Pattern.compile("^container_(e\\d+_)?\\d{10,19}_\\d{4,}_\\d{2,}_\\d{6,}$");
  private static final int MAX_HOST = 255;

  /** One live container as the AM holds it. */
  public record Live(String containerId, String nodeId, String nodeHttpAddress, String state) {}

  /** One entry of the completed ring. */
  public record Completed(long seq, String containerId, String nodeId, int exitStatus,
      String diagnostics, long finishedAt) {}

  /** A completed container as an allocate response reports it (nodeId from the live table when known). */
  public record Finished(String containerId, int exitStatus, String diagnostics) {}

  /** What one allocate carries beyond the AM's own request; handed back on success or failure. */
  public static final class Outgoing {
    public final List<String> blacklistAdditions;
    public final List<String> blacklistRemovals;
    public final List<String> releases;
    final Set<String> union;
    final List<String> passed;

    Outgoing(List<String> add, List<String> rem, List<String> rel, Set<String> union, List<String> passed) {
      this.blacklistAdditions = add;
      this.blacklistRemovals = rem;
      this.releases = rel;
      this.union = union;
      this.passed = passed;
    }
  }

  /** The outcome of a client's blacklist update. */
  public sealed interface UpdateOutcome permits Updated, Refused {}

  /** {@code view}: the union and owners after the change; the entity tags after and before it. */
  public record Updated(Map<String, Object> view, String etag, String previousEtag)
      implements UpdateOutcome {}

  /** The blacklist's entity tag and, unless the reader holds that tag already, the view it names. */
  public record BlacklistRead(String etag, Map<String, Object> view) {
    public boolean notModified() {
      return view == null;
    }
  }

  public record Refused(String error) implements UpdateOutcome {}

  private final Map<String, TreeSet<String>> owners = new TreeMap<>();
  private final TreeSet<String> amOwned = new TreeSet<>();
  /** The union as the RM holds it after the last successful allocate. */
  private Set<String> sent = new TreeSet<>();
  /**
   * Removals of hosts no owner holds, passed to the RM once as AMRMClient#updateBlacklist would:
   * with keepContainersAcrossApplicationAttempts the RM hands a new attempt the previous attempt's
   * blacklist (AppSchedulingInfo#transferStateFromPreviousAppSchedulingInfo), entries this proxy
   * never sent and could otherwise never lift.
   */
  private final TreeSet<String> passRemovals = new TreeSet<>();
  private final LinkedHashSet<String> pendingReleases = new LinkedHashSet<>();
  private final Map<String, Live> live = new LinkedHashMap<>();
  /** Node of containers released here, so their completion can still name the node. */
  private final Map<String, String> releasedNodes = new LinkedHashMap<>();
  private final ArrayDeque<Completed> ring = new ArrayDeque<>();
  private final int ringSize;
  private long seq;
  private boolean registered;
  /**
   * The blacklist's version, its strong entity tag (RFC 9110 section 8.8.3): a random epoch drawn
   * when this state is made (a new attempt, a restarted NodeManager) and a counter moved by every
   * change of any owner's set, the AM's included. A reader's tag from an earlier proxy can never
   * name this one's state, even after the same number of changes. The completed ring is made with
   * this state, so the same epoch names its numbering (GET /completed-containers).
   */
  private final String epoch;
  private long version = 1;
  /**
   * Moves with every change of what {@link #durable()} holds, so the interceptor stores the record
   * only when there is something new in it.
   */
  private long durableChanges;

  public ProxyState(int ringSize) {
    if (ringSize < 1) throw new IllegalArgumentException("ring size must be positive");
    this.ringSize = ringSize;
    byte[] b = new byte[8];
    RANDOM.nextBytes(b);
    this.epoch = HexFormat.of().formatHex(b);
  }

  private static final SecureRandom RANDOM = new SecureRandom();

  // ---------------------------------------------------------------- HTTP side

  public synchronized boolean registered() {
    return registered;
  }

  /** The entity tag of what {@link #blacklistView()} answers now, quoted as the ETag header carries it. */
  public synchronized String etag() {
    return "\"" + epoch + "-" + version + "\"";
  }

  /**
   * The view and its tag, read under one lock (so a tag never names another view); no view when
   * {@code held} says the reader holds the current tag (its If-None-Match).
   */
  public synchronized BlacklistRead blacklistRead(Predicate<String> held) {
    String tag = etag();
    return new BlacklistRead(tag, held.test(tag) ? null : blacklistView());
  }

  /** {"blacklist":[union], "owners":{owner:[hosts]}} with the AM's own set as owner "am". */
  public synchronized Map<String, Object> blacklistView() {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("blacklist", new ArrayList<>(union()));
    Map<String, Object> byOwner = new TreeMap<>();
    if (!amOwned.isEmpty()) byOwner.put(AM_OWNER, new ArrayList<>(amOwned));
    for (Map.Entry<String, TreeSet<String>> e : owners.entrySet()) {
      if (!e.getValue().isEmpty()) byOwner.put(e.getKey(), new ArrayList<>(e.getValue()));
    }
    out.put("owners", byOwner);
    return out;
  }

  /**
   * One owner's change: additions, then removals (a host in both ends up removed, as with
   * AMRMClient#updateBlacklist). Refused whole, changing nothing, on a bad owner or host.
   */
  public synchronized UpdateOutcome updateBlacklist(String owner, List<String> additions,
      List<String> removals) {
    if (owner == null) owner = DEFAULT_OWNER;
    if (!OWNER.matcher(owner).matches()) {
      return new Refused("\"owner\" must be a short token (letters, digits, '.', '_', '-'; at most 64)");
    }
    if (AM_OWNER.equals(owner)) {
      return new Refused("owner \"am\" is the ApplicationMaster's own blacklist: it changes only through the AM's allocate calls");
    }
    for (String h : additions) {
      if (ANY.equals(h)) return new Refused("Cannot add * to the blacklist!");
      String bad = hostError(h);
      if (bad != null) return new Refused("blacklistAdditions: " + bad);
    }
    for (String h : removals) {
      String bad = hostError(h);
      if (bad != null) return new Refused("blacklistRemovals: " + bad);
    }
    String previous = etag();
    TreeSet<String> set = owners.computeIfAbsent(owner, k -> new TreeSet<>());
    boolean changed = set.addAll(additions);
    changed |= set.removeAll(removals);
    if (set.isEmpty()) owners.remove(owner);
    // An update that changes no set keeps the tag: GET /blacklist answers the same.
    if (changed) version++;
    Set<String> u = union();
    for (String h : removals) if (!u.contains(h)) passRemovals.add(h);
    durableChanges++;
    return new Updated(blacklistView(), etag(), previous);
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

  public static boolean isContainerId(String id) {
    return CONTAINER_ID.matcher(id).matches();
  }

  /** Ids the AM holds are released with the next allocate and stop being live at once. */
  public synchronized Map<String, Object> release(List<String> ids) {
    List<String> released = new ArrayList<>();
    List<String> unknown = new ArrayList<>();
    for (String id : new LinkedHashSet<>(ids)) {
      Live c = live.remove(id);
      if (c == null) {
        unknown.add(id);
      } else {
        pendingReleases.add(id);
        releasedNodes.put(id, c.nodeId());
        released.add(id);
      }
    }
    if (!released.isEmpty()) durableChanges++;
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("released", released);
    out.put("unknown", unknown);
    return out;
  }

  public synchronized List<Live> containers() {
    return new ArrayList<>(live.values());
  }

  /**
   * Entries after {@code after}, oldest first, the newest sequence number and this state's epoch.
   * The ring's numbering begins again at 1 whenever this state is made, so a reader's cursor is
   * only meaningful with the epoch it was read under: a reader holding another epoch reads the
   * ring from the start (a restarted proxy may already have numbered past the old cursor, so
   * {@code next < after} alone cannot tell it). An {@code after} beyond the newest is answered
   * from the start too: a reader that predates epochs remembers an earlier proxy.
   */
  public synchronized Map<String, Object> completedAfter(long after) {
    long from = after > seq ? 0 : after;
    List<Object> list = new ArrayList<>();
    for (Completed c : ring) {
      if (c.seq() <= from) continue;
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("seq", c.seq());
      m.put("containerId", c.containerId());
      m.put("nodeId", c.nodeId());
      m.put("exitStatus", c.exitStatus());
      m.put("diagnostics", c.diagnostics());
      m.put("finishedAt", c.finishedAt());
      list.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("containers", list);
    out.put("next", seq);
    out.put("epoch", epoch);
    return out;
  }

  // ---------------------------------------------------------------- allocate side

  public synchronized void onRegistered(Collection<Live> fromPreviousAttempts) {
    registered = true;
    for (Live c : fromPreviousAttempts) live.put(c.containerId(), c);
    durableChanges++;
  }

  /**
   * Folds the AM's own blacklist delta into owner "am" and computes what this allocate must carry:
   * the change of the union since the last successful allocate, and the pending releases.
   */
  public synchronized Outgoing beforeAllocate(List<String> amAdditions, List<String> amRemovals,
      List<String> amReleases) {
    boolean changed = amOwned.addAll(amAdditions);
    changed |= amOwned.removeAll(amRemovals);
    if (changed) version++;
    if (changed || !amRemovals.isEmpty() || !amReleases.isEmpty() || !pendingReleases.isEmpty()) durableChanges++;
    passRemovals.addAll(amRemovals);
    for (String id : amReleases) {
      Live c = live.remove(id);
      if (c != null) releasedNodes.put(id, c.nodeId());
    }
    Set<String> union = union();
    List<String> add = new ArrayList<>();
    for (String h : union) if (!sent.contains(h)) add.add(h);
    TreeSet<String> remSet = new TreeSet<>();
    for (String h : sent) if (!union.contains(h)) remSet.add(h);
    List<String> passed = new ArrayList<>();
    for (String h : passRemovals) {
      if (!union.contains(h)) {
        remSet.add(h);
        passed.add(h);
      }
    }
    passRemovals.clear();
    List<String> rem = new ArrayList<>(remSet);
    // The AM's own '*' is passed on as it is: the RM answers it exactly as it would without the proxy.
    List<String> rel = new ArrayList<>(pendingReleases);
    pendingReleases.clear();
    return new Outgoing(add, rem, rel, union, passed);
  }

  /** What an allocate did to the completed ring: entries added, and older ones that fell out. */
  public record RingChange(List<Completed> added, List<Completed> dropped) {
    static final RingChange NONE = new RingChange(List.of(), List.of());
  }

  public synchronized RingChange afterAllocate(Outgoing o, List<Live> allocated, List<Finished> finished,
      long now) {
    if (!sent.equals(o.union) || !allocated.isEmpty() || !finished.isEmpty()) durableChanges++;
    sent = o.union;
    for (Live c : allocated) live.put(c.containerId(), c);
    List<Completed> added = new ArrayList<>();
    List<Completed> dropped = new ArrayList<>();
    for (Finished f : finished) {
      Live c = live.remove(f.containerId());
      String node = c != null ? c.nodeId() : releasedNodes.remove(f.containerId());
      releasedNodes.remove(f.containerId());
      // YARN's ContainerStatus names no node: a container this proxy never saw allocated (the
      // previous attempt's AM container, reported to the new attempt) cannot be placed, and an
      // entry without a node is of no use to a reader that attributes failures to nodes.
      if (node == null) continue;
      seq++;
      Completed e = new Completed(seq, f.containerId(), node, f.exitStatus(),
          f.diagnostics() == null ? "" : f.diagnostics(), now);
      ring.addLast(e);
      added.add(e);
      while (ring.size() > ringSize) dropped.add(ring.removeFirst());
    }
    // Bounded like the ring: a release whose completion never comes must not pin memory forever.
    while (releasedNodes.size() > ringSize) releasedNodes.remove(releasedNodes.keySet().iterator().next());
    if (added.isEmpty()) return RingChange.NONE;
    added.removeAll(dropped);
    return new RingChange(added, dropped);
  }

  /**
   * Puts the entries of the ring this one replaces (a NodeManager restart) at its start, oldest
   * first (by the time they were received), numbered from 1 under this state's new epoch; at most
   * the ring's size, the newest kept. Readers see a new epoch and read from the start: entries
   * they had read already come again (a reader keys them by container), and entries received by
   * the old instance that no reader had read yet are not lost. Returns the entries left out.
   */
  public synchronized List<Completed> restoreRing(Collection<Completed> old) {
    List<Completed> sorted = new ArrayList<>(old);
    sorted.sort(java.util.Comparator.comparingLong(Completed::finishedAt).thenComparingLong(Completed::seq));
    List<Completed> left = new ArrayList<>();
    while (sorted.size() + ring.size() > ringSize && !sorted.isEmpty()) left.add(sorted.remove(0));
    ArrayDeque<Completed> renumbered = new ArrayDeque<>();
    long n = 0;
    for (Completed c : sorted) {
      renumbered.addLast(new Completed(++n, c.containerId(), c.nodeId(), c.exitStatus(), c.diagnostics(), c.finishedAt()));
    }
    for (Completed c : ring) {
      renumbered.addLast(new Completed(++n, c.containerId(), c.nodeId(), c.exitStatus(), c.diagnostics(), c.finishedAt()));
    }
    ring.clear();
    ring.addAll(renumbered);
    seq = n;
    return left;
  }

  /**
   * The allocate failed: its releases are retried with the next one. When the RM no longer knows
   * the attempt as registered (an RM restart), the AM registers again and the RM's blacklist for
   * it starts empty, so the whole union is sent again.
   */
  public synchronized void allocateFailed(Outgoing o, boolean rmForgotAttempt) {
    LinkedHashSet<String> again = new LinkedHashSet<>(o.releases);
    again.addAll(pendingReleases);
    pendingReleases.clear();
    pendingReleases.addAll(again);
    passRemovals.addAll(o.passed);
    if (rmForgotAttempt) sent = new TreeSet<>();
    durableChanges++;
  }

  // ---------------------------------------------------------------- NodeManager restart

  public synchronized long durableChanges() {
    return durableChanges;
  }

  /**
   * What a NodeManager restart must not lose, as JSON-ready maps and lists: with work-preserving
   * recovery the AMRMProxy builds a new interceptor for the running attempt (AMRMProxyService#recover)
   * while the AM, its containers and the RM's blacklist for the attempt live on. The AM does not
   * register again nor send its blacklist again (AMRMClient sends deltas), so the owners, what the
   * RM holds, and the live containers (the nodes their completions are attributed to) come from
   * here. The completed ring is stored entry by entry instead (it changes by one entry at a time;
   * {@link #restoreRing}); the epoch is not stored: a new instance draws its own.
   */
  public synchronized Map<String, Object> durable() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("v", 1);
    m.put("registered", registered);
    m.put("am", new ArrayList<>(amOwned));
    Map<String, Object> byOwner = new TreeMap<>();
    for (Map.Entry<String, TreeSet<String>> e : owners.entrySet()) byOwner.put(e.getKey(), new ArrayList<>(e.getValue()));
    m.put("owners", byOwner);
    m.put("sent", new ArrayList<>(sent));
    m.put("passRemovals", new ArrayList<>(passRemovals));
    m.put("pendingReleases", new ArrayList<>(pendingReleases));
    List<Object> l = new ArrayList<>();
    for (Live c : live.values()) l.add(List.of(c.containerId(), c.nodeId(), c.nodeHttpAddress()));
    m.put("live", l);
    Map<String, Object> rel = new LinkedHashMap<>(releasedNodes);
    m.put("releasedNodes", rel);
    return m;
  }

  /**
   * Takes back what {@link #durable()} stored by the interceptor this one replaces (an owner set
   * written to this instance already is kept: it is newer). The record is read whole or not at all: a record that does not parse changes nothing (the state starts empty,
   * as it did before records existed) and the reason is returned; null when it was taken.
   */
  public synchronized String restore(Object record) {
    try {
      Map<String, Object> m = map(record, "the record");
      if (!Long.valueOf(1).equals(m.get("v"))) return "unknown record version " + m.get("v");
      boolean reg = Boolean.TRUE.equals(m.get("registered"));
      TreeSet<String> am = new TreeSet<>(strings(m.get("am"), "am"));
      Map<String, TreeSet<String>> own = new TreeMap<>();
      for (Map.Entry<String, Object> e : map(m.get("owners"), "owners").entrySet()) {
        TreeSet<String> set = new TreeSet<>(strings(e.getValue(), "owners." + e.getKey()));
        if (!set.isEmpty()) own.put(e.getKey(), set);
      }
      TreeSet<String> snt = new TreeSet<>(strings(m.get("sent"), "sent"));
      List<String> pass = strings(m.get("passRemovals"), "passRemovals");
      List<String> pending = strings(m.get("pendingReleases"), "pendingReleases");
      Map<String, Live> lv = new LinkedHashMap<>();
      if (!(m.get("live") instanceof List<?> rows)) return "live is not a list";
      for (Object row : rows) {
        List<String> r = strings(row, "a live row");
        if (r.size() != 3) return "a live row is not [containerId, nodeId, nodeHttpAddress]";
        lv.put(r.get(0), new Live(r.get(0), r.get(1), r.get(2), "RUNNING"));
      }
      Map<String, String> relNodes = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : map(m.get("releasedNodes"), "releasedNodes").entrySet()) {
        if (!(e.getValue() instanceof String node)) return "releasedNodes." + e.getKey() + " is not a string";
        relNodes.put(e.getKey(), node);
      }
      // A client may have written between the new instance's init and this (its listener serves
      // at once): what it wrote is newer than the record.
      own.putAll(owners);
      registered = reg;
      amOwned.clear();
      amOwned.addAll(am);
      owners.clear();
      owners.putAll(own);
      sent = snt;
      passRemovals.addAll(pass);
      pendingReleases.clear();
      pendingReleases.addAll(pending);
      live.clear();
      live.putAll(lv);
      releasedNodes.clear();
      releasedNodes.putAll(relNodes);
      version++;
      return null;
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String what) {
    if (!(o instanceof Map)) throw new IllegalArgumentException(what + " is not an object");
    return (Map<String, Object>) o;
  }

  private static List<String> strings(Object o, String what) {
    if (!(o instanceof List<?> l)) throw new IllegalArgumentException(what + " is not a list");
    List<String> out = new ArrayList<>();
    for (Object x : l) {
      if (!(x instanceof String str)) throw new IllegalArgumentException(what + " holds a non-string");
      out.add(str);
    }
    return out;
  }

  private Set<String> union() {
    TreeSet<String> u = new TreeSet<>(amOwned);
    for (TreeSet<String> s : owners.values()) u.addAll(s);
    return u;
  }
}
