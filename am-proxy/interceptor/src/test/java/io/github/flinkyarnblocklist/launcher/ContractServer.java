package io.github.flinkyarnblocklist.launcher;

import io.github.flinkyarnblocklist.amrmproxy.Json;
import io.github.flinkyarnblocklist.amrmproxy.Live;
import io.github.flinkyarnblocklist.amrmproxy.ProxyHttpServer;
import io.github.flinkyarnblocklist.amrmproxy.ProxyState;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The interceptor's HTTP side alone, with no YARN around it: its listener and routing over one
 * application's proxy state (one live worker), for the contract test that runs the OpenAPI
 * document's rules against it and against the simulator. Prints one JSON line, ends with stdin.
 */
public final class ContractServer {
  private ContractServer() {}

  public static void main(String[] args) throws Exception {
    String app = "application_1652313600000_0001";
    String worker = "container_e01_1652313600000_0001_01_000002";
    ProxyState state = new ProxyState(16);
    state.onRegistered(Collections.singletonList(new Live(worker, "nm1.blocklist.test:8041", "nm1.blocklist.test:8042", "RUNNING")));
    String secret = "contract-test-secret";
    ProxyHttpServer server = ProxyHttpServer.acquire("127.0.0.1", 0);
    server.register(secret, new ProxyHttpServer.Binding() {
      public String applicationId() { return app; }
      public String appAttemptId() { return "appattempt_1652313600000_0001_000001"; }
      public String amContainerId() { return "container_e01_1652313600000_0001_01_000001"; }
      public ProxyState state() { return state; }
    });
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("address", server.address());
    out.put("secret", secret);
    out.put("liveContainer", worker);
    System.out.println(Json.write(out));
    System.out.flush();
    while (System.in.read() >= 0) {
      // serve until the test closes our stdin
    }
    server.release();
  }
}
