package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Objects;

/** One live container as the AM holds it: what GET /containers lists and a completion is placed by. */
public final class Live {
  private final String containerId;
  private final String nodeId;
  private final String nodeHttpAddress;
  private final String state;

  public Live(String containerId, String nodeId, String nodeHttpAddress, String state) {
    this.containerId = containerId;
    this.nodeId = nodeId;
    this.nodeHttpAddress = nodeHttpAddress;
    this.state = state;
  }

  public String containerId() {
    return containerId;
  }

  public String nodeId() {
    return nodeId;
  }

  public String nodeHttpAddress() {
    return nodeHttpAddress;
  }

  public String state() {
    return state;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Live)) return false;
    Live l = (Live) o;
    return containerId.equals(l.containerId) && nodeId.equals(l.nodeId)
        && nodeHttpAddress.equals(l.nodeHttpAddress) && state.equals(l.state);
  }

  @Override
  public int hashCode() {
    return Objects.hash(containerId, nodeId, nodeHttpAddress, state);
  }

  @Override
  public String toString() {
    return "Live[" + containerId + " on " + nodeId + "]";
  }
}
