package io.github.flinkyarnblocklist.amrmproxy;

import java.util.List;
import java.util.Set;

/** What one allocate carries beyond the AM's own request; handed back on its success or failure. */
public final class Outgoing {
  public final List<String> blacklistAdditions;
  public final List<String> blacklistRemovals;
  public final List<String> releases;
  /** The union this allocate makes the RM hold once it succeeds. */
  final Set<String> union;
  /** Removals of hosts no owner holds, passed on once: sent again if the allocate fails. */
  final List<String> passed;
  /** The request's responseId (null: not known). */
  final Integer responseId;
  /** The RM may have answered this request already, and then applies nothing of it (ProxyState). */
  final boolean maybeRepeat;

  Outgoing(List<String> add, List<String> rem, List<String> rel, Set<String> union, List<String> passed, Integer responseId, boolean maybeRepeat) {
    this.blacklistAdditions = add;
    this.blacklistRemovals = rem;
    this.releases = rel;
    this.union = union;
    this.passed = passed;
    this.responseId = responseId;
    this.maybeRepeat = maybeRepeat;
  }
}
