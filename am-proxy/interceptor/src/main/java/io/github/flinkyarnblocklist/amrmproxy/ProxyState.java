package io.github.flinkyarnblocklist.amrmproxy;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * What one application's proxy knows, with no Hadoop type in it so it is tested on its own: the
 * owners' blacklist sets and what the RM holds of their union, releases asked for over HTTP, the
 * live containers, the completed ring, and a version for each reader. Every method is one
 * critical section: the allocate path and the HTTP handlers call it from their own threads.
 */
public final class ProxyState {
  public static final String AM_OWNER = Owners.AM_OWNER;
  public static final String DEFAULT_OWNER = Owners.DEFAULT_OWNER;
  private static final Pattern CONTAINER_ID =
      Pattern.compile("^container_(e\\d+_)?\\d{10,19}_\\d{4,}_\\d{2,}_\\d{6,}$");
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Owners owners = new Owners();
  /** The union as the RM holds it after the last successful allocate. */
  private Set<String> sent = new TreeSet<>();
  /**
   * Removals of hosts no owner holds, passed to the RM once as AMRMClient#updateBlacklist would:
   * the RM hands a new attempt the previous attempt's blacklist, entries this proxy never sent.
   */
  private final TreeSet<String> passRemovals = new TreeSet<>();
  private final LinkedHashSet<String> pendingReleases = new LinkedHashSet<>();
  private final Map<String, Live> live = new LinkedHashMap<>();
  /** Node of containers released here, so their completion can still name the node. */
  private final Map<String, String> releasedNodes = new LinkedHashMap<>();
  private final CompletedRing ring;
  private boolean registered;
  /**
   * The responseId of the last allocate the RM answered through this state (null: none yet), and
   * whether this state was restored and has not seen an answer since: the RM answers an allocate
   * sent again with the same responseId (its first answer lost, as in a NodeManager restart) with
   * that first answer, applying nothing of it, so its blacklist change and releases go again.
   */
  private Integer answeredResponseId;
  private boolean restoredUnanswered;
  /**
   * A random epoch drawn when this state is made (a new attempt, a restarted NodeManager): with
   * the version counter it makes the blacklist's strong entity tag, and it names the ring's
   * numbering, so a reader's tag or cursor from an earlier proxy never names this one's state.
   */
  private final String epoch;
  private long version = 1;
  /** Moves with every change of what {@link #durable()} holds, so the record is stored only when new. */
  private long durableChanges;

  public ProxyState(int ringSize) {
    this.ring = new CompletedRing(ringSize);
    byte[] b = new byte[8];
    RANDOM.nextBytes(b);
    this.epoch = Secrets.hex(b);
  }

  public static boolean isContainerId(String id) {
    return CONTAINER_ID.matcher(id).matches();
  }

  public synchronized boolean registered() {
    return registered;
  }

  /** The entity tag of what {@link #blacklistView()} answers now, quoted as the ETag header carries it. */
  public synchronized String etag() {
    return "\"" + epoch + "-" + version + "\"";
  }

  /** The view and its tag under one lock; no view when {@code held} says the reader holds the tag. */
  public synchronized BlacklistRead blacklistRead(Predicate<String> held) {
    String tag = etag();
    return new BlacklistRead(tag, held.test(tag) ? null : owners.view());
  }

  public synchronized Map<String, Object> blacklistView() {
    return owners.view();
  }

  /** One owner's change (null: the sidecar's); refused whole, changing nothing, on a bad owner or host. */
  public synchronized UpdateOutcome updateBlacklist(String owner, List<String> additions, List<String> removals) {
    String who = owner == null ? DEFAULT_OWNER : owner;
    String refusal = Owners.refusal(who, additions, removals);
    if (refusal != null) return new UpdateOutcome.Refused(refusal);
    String previous = etag();
    // An update that changes no set keeps the tag: GET /blacklist answers the same.
    if (owners.update(who, additions, removals)) version++;
    Set<String> u = owners.union();
    for (String h : removals) if (!u.contains(h)) passRemovals.add(h);
    durableChanges++;
    return new UpdateOutcome.Updated(owners.view(), etag(), previous);
  }

  /** Ids the AM holds are released with the next allocate and stop being live at once; the others are unknown. */
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

  /** Completed entries after {@code after}, the newest seq and this state's epoch (CompletedRing#after). */
  public synchronized Map<String, Object> completedAfter(long after) {
    return ring.after(after, epoch);
  }

  public synchronized void onRegistered(Collection<Live> fromPreviousAttempts) {
    registered = true;
    for (Live c : fromPreviousAttempts) live.put(c.containerId(), c);
    durableChanges++;
  }

  /**
   * Folds the AM's own blacklist delta into owner "am" and computes what this allocate carries:
   * the change of the union since the last successful allocate, and the pending releases.
   */
  public synchronized Outgoing beforeAllocate(List<String> amAdditions, List<String> amRemovals, List<String> amReleases) {
    return beforeAllocate(amAdditions, amRemovals, amReleases, null);
  }

  /** The same, for an allocate request with its responseId (null: not known). */
  public synchronized Outgoing beforeAllocate(List<String> amAdditions, List<String> amRemovals, List<String> amReleases, Integer responseId) {
    boolean changed = owners.updateAm(amAdditions, amRemovals);
    if (changed) version++;
    if (changed || !amRemovals.isEmpty() || !amReleases.isEmpty() || !pendingReleases.isEmpty()) durableChanges++;
    passRemovals.addAll(amRemovals);
    for (String id : amReleases) {
      Live c = live.remove(id);
      if (c != null) releasedNodes.put(id, c.nodeId());
    }
    Set<String> union = owners.union();
    List<String> add = new ArrayList<>();
    for (String h : union) if (!sent.contains(h)) add.add(h);
    TreeSet<String> rem = new TreeSet<>();
    for (String h : sent) if (!union.contains(h)) rem.add(h);
    List<String> passed = new ArrayList<>();
    for (String h : passRemovals) {
      if (union.contains(h)) continue;
      rem.add(h);
      passed.add(h);
    }
    passRemovals.clear();
    // The AM's own '*' is passed on as it is: the RM answers it exactly as it would without the proxy.
    List<String> rel = new ArrayList<>(pendingReleases);
    pendingReleases.clear();
    boolean maybeRepeat = restoredUnanswered || (responseId != null && responseId.equals(answeredResponseId));
    return new Outgoing(add, new ArrayList<>(rem), rel, union, passed, responseId, maybeRepeat);
  }

  /** The allocate succeeded: the RM holds the union; new containers are live, completed ones go into the ring. */
  public synchronized RingChange afterAllocate(Outgoing o, List<Live> allocated, List<Finished> finished, long now) {
    if (!sent.equals(o.union) || !allocated.isEmpty() || !finished.isEmpty()) durableChanges++;
    answeredResponseId = o.responseId;
    restoredUnanswered = false;
    // A repeat's answer is the RM's earlier one: what this allocate carried goes with the next
    // (again when it was applied after all: the RM takes a host or a release twice alike).
    if (o.maybeRepeat) requeue(o);
    else sent = o.union;
    for (Live c : allocated) live.put(c.containerId(), c);
    List<Completed> added = new ArrayList<>();
    List<Completed> dropped = new ArrayList<>();
    for (Finished f : finished) {
      Live c = live.remove(f.containerId());
      String node = c != null ? c.nodeId() : releasedNodes.get(f.containerId());
      releasedNodes.remove(f.containerId());
      // YARN's ContainerStatus names no node: a container never seen allocated here (the previous
      // attempt's AM container) cannot be placed, and a reader attributes failures to nodes.
      if (node == null) continue;
      added.add(ring.add(f.containerId(), node, f.exitStatus(), f.diagnostics(), now, dropped));
    }
    // Bounded like the ring: a release whose completion never comes must not pin memory forever.
    while (releasedNodes.size() > ring.size()) releasedNodes.remove(releasedNodes.keySet().iterator().next());
    if (added.isEmpty()) return RingChange.NONE;
    added.removeAll(dropped);
    return new RingChange(added, dropped);
  }

  /** The entries of the ring this one replaces, first, renumbered (CompletedRing#restore); the ones left out. */
  public synchronized List<Completed> restoreRing(Collection<Completed> old) {
    return ring.restore(old);
  }

  /**
   * The allocate failed: its releases and passed removals go with the next one. When the RM no
   * longer knows the attempt (an RM restart) the AM registers again and the RM's blacklist for it
   * starts empty, so the whole union is sent again.
   */
  public synchronized void allocateFailed(Outgoing o, boolean rmForgotAttempt) {
    requeue(o);
    if (rmForgotAttempt) sent = new TreeSet<>();
  }

  /** An allocate's releases and passed removals go with the next one. */
  private void requeue(Outgoing o) {
    LinkedHashSet<String> again = new LinkedHashSet<>(o.releases);
    again.addAll(pendingReleases);
    pendingReleases.clear();
    pendingReleases.addAll(again);
    passRemovals.addAll(o.passed);
    durableChanges++;
  }

  public synchronized long durableChanges() {
    return durableChanges;
  }

  /**
   * What a NodeManager restart must not lose (DurableRecord), as JSON-ready maps and lists. The
   * completed ring is stored entry by entry instead; the epoch is not stored: a new instance draws its own.
   */
  public synchronized Map<String, Object> durable() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("v", DurableRecord.VERSION);
    m.put("registered", registered);
    m.put("am", owners.amHosts());
    m.put("owners", owners.clientSets());
    m.put("sent", new ArrayList<>(sent));
    m.put("passRemovals", new ArrayList<>(passRemovals));
    m.put("pendingReleases", new ArrayList<>(pendingReleases));
    List<Object> rows = new ArrayList<>();
    for (Live c : live.values()) rows.add(DurableRecord.row(c));
    m.put("live", rows);
    m.put("releasedNodes", new LinkedHashMap<>(releasedNodes));
    return m;
  }

  /**
   * Takes back what {@link #durable()} stored in the interceptor this one replaces, whole or not
   * at all: a record that does not read changes nothing and the reason is returned; null when taken.
   */
  public synchronized String restore(Object json) {
    DurableRecord r;
    try {
      r = DurableRecord.read(json);
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    registered = r.registered;
    owners.restore(r.am, r.owners);
    sent = r.sent;
    passRemovals.addAll(r.passRemovals);
    pendingReleases.clear();
    pendingReleases.addAll(r.pendingReleases);
    live.clear();
    live.putAll(r.live);
    releasedNodes.clear();
    releasedNodes.putAll(r.releasedNodes);
    restoredUnanswered = true;
    version++;
    return null;
  }
}
