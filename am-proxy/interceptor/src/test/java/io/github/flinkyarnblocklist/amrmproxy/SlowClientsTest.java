package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that send slowly, never finish or send too much must not take the listener from the
 * others: it serves every opted-in application on the NodeManager, and anyone on the host can
 * connect without a secret.
 */
class SlowClientsTest {
  private static final String SECRET = "slow-clients-test-secret";
  private ProxyHttpServer server;
  private final ProxyState state = new ProxyState(16);
  private final List<Socket> sockets = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @BeforeEach
  void start() throws Exception {
    server = ProxyHttpServer.acquire("127.0.0.1", 0);
    server.register(SECRET, new ProxyHttpServer.Binding() {
      public String applicationId() { return "application_1_0001"; }
      public String appAttemptId() { return "appattempt_1_0001_000001"; }
      public ProxyState state() { return state; }
    });
  }

  @AfterEach
  void stop() throws IOException {
    for (Socket s : sockets) s.close();
    server.release();
  }

  private int port() {
    return URI.create(server.address()).getPort();
  }

  /** A connection that sent one byte of a request and nothing more (half-open, as a stalled client leaves it). */
  private Socket halfOpen() throws IOException {
    Socket s = new Socket("127.0.0.1", port());
    s.getOutputStream().write('G');
    s.getOutputStream().flush();
    sockets.add(s);
    return s;
  }

  private HttpResponse<String> authenticatedGet() throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create(server.address() + "/amrm/v1/attempt"))
        .header("Authorization", "Bearer " + SECRET).timeout(Duration.ofSeconds(3)).build();
    return http.send(r, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void halfOpenConnectionsDoNotStopAnAuthenticatedCall() throws Exception {
    for (int i = 0; i < 8; i++) halfOpen();
    Thread.sleep(200); // let the listener take them all up
    long t0 = System.nanoTime();
    HttpResponse<String> r = authenticatedGet();
    assertEquals(200, r.statusCode());
    assertTrue(r.body().contains("appattempt_1_0001_000001"));
    assertTrue(System.nanoTime() - t0 < 2_000_000_000L, "answered beside 8 stalled clients");
  }

  @Test
  void manyMoreHalfOpenConnectionsThanWorkersDoNotStopAnAuthenticatedCall() throws Exception {
    // Before: the 16 workers each held one for its 5 s head deadline, the rest queued behind them.
    for (int i = 0; i < 3 * HttpListener.WORKERS + 8; i++) halfOpen();
    Thread.sleep(200);
    long t0 = System.nanoTime();
    assertEquals(200, authenticatedGet().statusCode());
    assertTrue(System.nanoTime() - t0 < 2_000_000_000L, "answered beside " + sockets.size() + " stalled clients");
  }

  @Test
  void pastThePendingBoundTheOldestStalledClientsAreDroppedAndCallsStillAnswered() throws Exception {
    int extra = 20;
    for (int i = 0; i < HeadReader.MAX_PENDING + extra; i++) halfOpen();
    Thread.sleep(300);
    assertEquals(200, authenticatedGet().statusCode());
    int dropped = 0;
    for (Socket s : sockets.subList(0, extra + 1)) {
      s.setSoTimeout(2_000);
      try {
        if (s.getInputStream().read() < 0) dropped++;
      } catch (IOException reset) {
        dropped++;
      }
    }
    assertTrue(dropped >= extra, "the oldest " + extra + " were dropped: " + dropped);
  }

  /** Figures for docs/amrm-proxy.md: how long an authenticated call takes beside N stalled clients. */
  @Test
  void anAuthenticatedCallBesideNStalledClients() throws Exception {
    for (int n : new int[] {2, 16, 64, 255}) {
      while (sockets.size() < n) halfOpen();
      Thread.sleep(100);
      long[] ms = new long[7];
      for (int i = 0; i < ms.length; i++) {
        long t0 = System.nanoTime();
        assertEquals(200, authenticatedGet().statusCode());
        ms[i] = (System.nanoTime() - t0) / 1_000_000;
      }
      java.util.Arrays.sort(ms);
      System.out.println("slow-clients: beside " + n + " stalled clients an authenticated call took p50 " + ms[3] + " ms, max " + ms[6] + " ms");
      assertTrue(ms[6] < 2_000, "beside " + n + ": " + java.util.Arrays.toString(ms));
    }
  }

  /**
   * A NodeManager out of file descriptors (its own load, or connections beyond ours): accept fails,
   * and the listener must pause and go on, not end (before, the accepting thread ended on it and
   * the listener never answered again).
   */
  @Test
  void aListenerOutOfFileDescriptorsPausesAcceptingAndGoesOn() throws Exception {
    String javaBin = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    String cmd = "ulimit -n 200 && exec '" + javaBin + "' -Xmx64m -cp '" + System.getProperty("java.class.path") + "' " + ListenerInChild.class.getName() + " " + SECRET;
    java.io.File log = java.io.File.createTempFile("listener-in-child", ".log");
    log.deleteOnExit();
    Process child = new ProcessBuilder("bash", "-c", cmd).redirectError(log).start();
    try {
      String address = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)).readLine();
      assertTrue(address != null && address.startsWith("http://127.0.0.1:"), "the child's listener: " + address);
      int port = URI.create(address).getPort();
      HttpRequest r = HttpRequest.newBuilder(URI.create(address + "/amrm/v1/attempt")).header("Authorization", "Bearer " + SECRET).timeout(Duration.ofSeconds(3)).build();
      // Once first, so every class of an answer is loaded while the JVM can still open its jars.
      assertEquals(200, http.send(r, HttpResponse.BodyHandlers.ofString()).statusCode());
      List<Socket> flood = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        Socket s = new Socket();
        flood.add(s);
        try {
          s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 300);
          s.getOutputStream().write('G');
        } catch (IOException backlogFull) {
          break; // the listener took what it could and the kernel's backlog is full
        }
      }
      Thread.sleep(300);
      for (Socket s : flood) s.close();
      HttpResponse<String> answer = null;
      for (int i = 0; i < 5 && answer == null; i++) {
        try {
          answer = http.send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException notYet) {
          Thread.sleep(200);
        }
      }
      String logged = new String(java.nio.file.Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
      assertTrue(logged.contains("accept failed, pausing 100 ms: java.io.IOException: Too many open files"), "it ran out: " + logged);
      assertTrue(answer != null && answer.statusCode() == 200, "answered after running out of descriptors: " + (answer == null ? "no answer" : answer.statusCode()));
    } finally {
      child.getOutputStream().close();
      if (!child.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) child.destroyForcibly();
    }
  }

  @Test
  void aClientThatDoesNotFinishItsHeadInTimeIsAnswered408AndClosed() throws Exception {
    ProxyHttpServer quick = ProxyHttpServer.acquire("127.0.0.1", 0, 300, 300);
    try (Socket s = new Socket("127.0.0.1", URI.create(quick.address()).getPort())) {
      s.setSoTimeout(5_000);
      // One byte at a time, each within any per-read timeout: only a deadline on the whole head ends it.
      OutputStream out = s.getOutputStream();
      String answer = null;
      long t0 = System.nanoTime();
      for (int i = 0; i < 40 && answer == null; i++) {
        try {
          out.write('G');
          out.flush();
        } catch (IOException closed) {
          break;
        }
        Thread.sleep(50);
        if (s.getInputStream().available() > 0) answer = readAll(s.getInputStream());
      }
      if (answer == null) answer = readAll(s.getInputStream());
      assertTrue(answer.startsWith("HTTP/1.1 408 "), answer);
      assertTrue(System.nanoTime() - t0 < 1_500_000_000L, "within the 300 ms deadline (and scheduling)");
    } finally {
      quick.release();
    }
  }

  @Test
  void aHeadLargerThanTheBoundResetsTheConnectionAndTheListenerGoesOn() throws Exception {
    try (Socket s = new Socket("127.0.0.1", port())) {
      s.setSoTimeout(5_000);
      byte[] line = ("GET /amrm/v1/attempt HTTP/1.1\r\nX-Big: " + "a".repeat(3 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
      boolean writeFailed = false;
      try {
        s.getOutputStream().write(line);
      } catch (IOException reset) {
        writeFailed = true;
      }
      String answer = writeFailed ? "" : readQuietly(s.getInputStream());
      assertFalse(answer.startsWith("HTTP/1.1 200"), "no answer to a 3 MB head: " + answer);
    }
    assertEquals(200, authenticatedGet().statusCode());
  }

  @Test
  void aBodyLargerThanTheBoundIs413WithoutBeingRead() throws Exception {
    try (Socket s = new Socket("127.0.0.1", port())) {
      s.setSoTimeout(5_000);
      String head = "POST /amrm/v1/blacklist HTTP/1.1\r\nAuthorization: Bearer " + SECRET + "\r\nContent-Length: 2000000\r\n\r\n";
      s.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
      assertTrue(readAll(s.getInputStream()).startsWith("HTTP/1.1 413 "));
    }
  }

  private static String readAll(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
  }

  private static String readQuietly(InputStream in) {
    try {
      return readAll(in);
    } catch (IOException reset) {
      return "";
    }
  }
}
