package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Objects;

/** One entry of the completed ring, numbered by its position under the ring's epoch. */
public final class Completed {
  private final long seq;
  private final String containerId;
  private final String nodeId;
  private final int exitStatus;
  private final String diagnostics;
  private final long finishedAt;

  public Completed(long seq, String containerId, String nodeId, int exitStatus, String diagnostics, long finishedAt) {
    this.seq = seq;
    this.containerId = containerId;
    this.nodeId = nodeId;
    this.exitStatus = exitStatus;
    this.diagnostics = diagnostics;
    this.finishedAt = finishedAt;
  }

  public long seq() {
    return seq;
  }

  public String containerId() {
    return containerId;
  }

  public String nodeId() {
    return nodeId;
  }

  public int exitStatus() {
    return exitStatus;
  }

  public String diagnostics() {
    return diagnostics;
  }

  public long finishedAt() {
    return finishedAt;
  }

  /** The same entry under another number (a restored ring is renumbered under its new epoch). */
  Completed renumbered(long n) {
    return new Completed(n, containerId, nodeId, exitStatus, diagnostics, finishedAt);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Completed)) return false;
    Completed c = (Completed) o;
    return seq == c.seq && exitStatus == c.exitStatus && finishedAt == c.finishedAt
        && containerId.equals(c.containerId) && nodeId.equals(c.nodeId) && diagnostics.equals(c.diagnostics);
  }

  @Override
  public int hashCode() {
    return Objects.hash(seq, containerId, nodeId, exitStatus, diagnostics, finishedAt);
  }

  @Override
  public String toString() {
    return "Completed[" + seq + " " + containerId + " on " + nodeId + " exit " + exitStatus + "]";
  }
}
