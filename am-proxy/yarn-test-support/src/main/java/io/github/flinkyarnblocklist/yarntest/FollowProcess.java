package io.github.flinkyarnblocklist.yarntest;

/** A test AM or worker that ends with the process that started the cluster: orphaned, nothing else would end it. */
public final class FollowProcess {
  private FollowProcess() {}

  /**
   * Halts this JVM once {@code pid} is gone, checked every {@code everyMs} on a daemon thread of its
   * own (a main loop blocked in an RM client's connect retries would not see it for minutes).
   * {@code pid <= 0}: nothing to follow.
   */
  public static void haltWhenGone(long pid, long everyMs, String who) {
    if (pid <= 0) return;
    Thread t = new Thread(() -> {
      while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
        try {
          Thread.sleep(everyMs);
        } catch (InterruptedException e) {
          return;
        }
      }
      System.err.println(who + " " + pid + " is gone; exiting");
      Runtime.getRuntime().halt(0);
    }, "follow-" + pid);
    t.setDaemon(true);
    t.start();
  }
}
