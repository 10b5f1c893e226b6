package io.github.flinkyarnblocklist.amrmproxy;

/** A completed container as an allocate answer reports it (its node comes from the live table). */
public final class Finished {
  private final String containerId;
  private final int exitStatus;
  private final String diagnostics;

  public Finished(String containerId, int exitStatus, String diagnostics) {
    this.containerId = containerId;
    this.exitStatus = exitStatus;
    this.diagnostics = diagnostics;
  }

  public String containerId() {
    return containerId;
  }

  public int exitStatus() {
    return exitStatus;
  }

  public String diagnostics() {
    return diagnostics;
  }
}
