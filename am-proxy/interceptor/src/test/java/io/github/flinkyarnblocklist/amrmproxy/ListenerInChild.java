package io.github.flinkyarnblocklist.amrmproxy;

/** A listener in a JVM of its own (SlowClientsTest starts it under a small file-descriptor limit): prints its address, ends with stdin. */
public final class ListenerInChild {
  private ListenerInChild() {}

  public static void main(String[] args) throws Exception {
    ProxyHttpServer server = ProxyHttpServer.acquire("127.0.0.1", 0);
    ProxyState state = new ProxyState(16);
    server.register(args[0], new ProxyHttpServer.Binding() {
      public String applicationId() { return "application_1_0001"; }
      public String appAttemptId() { return "appattempt_1_0001_000001"; }
      public ProxyState state() { return state; }
    });
    System.out.println(server.address());
    System.out.flush();
    while (System.in.read() >= 0) {
      // until the test closes our stdin
    }
    server.release();
  }
}
