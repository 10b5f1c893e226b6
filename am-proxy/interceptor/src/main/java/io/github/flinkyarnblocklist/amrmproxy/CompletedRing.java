package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The containers the AM saw complete, oldest first, in a bounded ring numbered from 1 under the
 * proxy state's epoch: a reader pages through it with the last seq it read. Not thread-safe:
 * ProxyState guards it.
 */
final class CompletedRing {
  private final ArrayDeque<Completed> ring = new ArrayDeque<>();
  private final int size;
  private long seq;

  CompletedRing(int size) {
    if (size < 1) throw new IllegalArgumentException("ring size must be positive");
    this.size = size;
  }

  int size() {
    return size;
  }

  /** Appends one entry; the entries that fell out go into {@code dropped}. */
  Completed add(String containerId, String nodeId, int exitStatus, String diagnostics, long now, List<Completed> dropped) {
    Completed e = new Completed(++seq, containerId, nodeId, exitStatus, diagnostics == null ? "" : diagnostics, now);
    ring.addLast(e);
    while (ring.size() > size) dropped.add(ring.removeFirst());
    return e;
  }

  /**
   * Entries after {@code after}, the newest seq and the epoch. An {@code after} beyond the newest
   * is answered from the start: the reader remembers an earlier proxy (one that predates epochs
   * cannot tell otherwise).
   */
  Map<String, Object> after(long after, String epoch) {
    long from = after > seq ? 0 : after;
    List<Object> list = new ArrayList<>();
    for (Completed c : ring) {
      if (c.seq() > from) list.add(entry(c));
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("containers", list);
    out.put("next", seq);
    out.put("epoch", epoch);
    return out;
  }

  private static Map<String, Object> entry(Completed c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("seq", c.seq());
    m.put("containerId", c.containerId());
    m.put("nodeId", c.nodeId());
    m.put("exitStatus", c.exitStatus());
    m.put("diagnostics", c.diagnostics());
    m.put("finishedAt", c.finishedAt());
    return m;
  }

  /**
   * Puts the entries of the ring this one replaces (a NodeManager restart) at its start, oldest
   * first by the time they were received, all renumbered from 1; at most the ring's size, the
   * newest kept. Readers see the new epoch and read from the start: what they had read comes
   * again (they key entries by container) and what they had not is not lost. Returns the entries
   * left out.
   */
  List<Completed> restore(Collection<Completed> old) {
    List<Completed> sorted = new ArrayList<>(old);
    sorted.sort(Comparator.comparingLong(Completed::finishedAt).thenComparingLong(Completed::seq));
    List<Completed> left = new ArrayList<>();
    while (sorted.size() + ring.size() > size && !sorted.isEmpty()) left.add(sorted.remove(0));
    List<Completed> all = new ArrayList<>(sorted);
    all.addAll(ring);
    ring.clear();
    long n = 0;
    for (Completed c : all) ring.addLast(c.renumbered(++n));
    seq = n;
    return left;
  }
}
