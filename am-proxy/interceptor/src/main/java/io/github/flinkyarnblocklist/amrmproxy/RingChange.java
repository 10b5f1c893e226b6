package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Collections;
import java.util.List;

/** What an allocate did to the completed ring (entries added, older ones that fell out): what the state store must follow. */
public final class RingChange {
  static final RingChange NONE = new RingChange(Collections.<Completed>emptyList(), Collections.<Completed>emptyList());
  private final List<Completed> added;
  private final List<Completed> dropped;

  RingChange(List<Completed> added, List<Completed> dropped) {
    this.added = added;
    this.dropped = dropped;
  }

  public List<Completed> added() {
    return added;
  }

  public List<Completed> dropped() {
    return dropped;
  }

  boolean isEmpty() {
    return added.isEmpty() && dropped.isEmpty();
  }
}
