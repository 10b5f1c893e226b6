package io.github.flinkyarnblocklist.amrmproxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The real listener over real loopback HTTP: routing by secret, errors, bodies. */
class ProxyHttpServerTest {
  private ProxyHttpServer server;
  private final ProxyState a = new ProxyState(16);
  private final ProxyState b = new ProxyState(16);
  private final String secretA = Secrets.derive(new byte[32], "application_1_0001");
  private final String secretB = Secrets.derive(new byte[32], "application_1_0002");
  private final HttpClient http = HttpClient.newHttpClient();

  private static ProxyHttpServer.Binding bind(String app, ProxyState s) {
    return new ProxyHttpServer.Binding() {
      public String applicationId() { return app; }
      public String appAttemptId() { return app.replace("application", "appattempt") + "_000001"; }
      public ProxyState state() { return s; }
    };
  }

  @BeforeEach
  void start() throws Exception {
    server = ProxyHttpServer.acquire("127.0.0.1", 0);
    server.register(secretA, bind("application_1_0001", a));
    server.register(secretB, bind("application_1_0002", b));
  }

  @AfterEach
  void stop() {
    server.release();
  }

  private HttpResponse<String> call(String method, String path, String secret, String body) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(server.address() + path));
    if (secret != null) r.header("Authorization", "Bearer " + secret);
    r.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void eachSecretReachesOnlyItsOwnApplication() throws Exception {
    assertNotEquals(secretA, secretB);
    assertEquals(401, call("GET", "/amrm/v1/attempt", null, null).statusCode());
    assertEquals(401, call("GET", "/amrm/v1/attempt", "0".repeat(64), null).statusCode());
    HttpResponse<String> r = call("POST", "/amrm/v1/blacklist", null, "{\"blacklistAdditions\":[\"n1\"]}");
    assertEquals(401, r.statusCode());
    assertTrue(call("GET", "/amrm/v1/attempt", secretB, null).body().contains("application_1_0002"));
    assertEquals(200, call("POST", "/amrm/v1/blacklist", secretB, "{\"blacklistAdditions\":[\"n1\"]}").statusCode());
    assertEquals("{\"blacklist\":[],\"owners\":{}}", call("GET", "/amrm/v1/blacklist", secretA, null).body());
    assertEquals("{\"blacklist\":[\"n1\"],\"owners\":{\"blocklist\":[\"n1\"]}}", call("GET", "/amrm/v1/blacklist", secretB, null).body());
  }

  @Test
  void theAttemptNamesTheInterceptorsVersion() throws Exception {
    String expected = System.getProperty("blocklist.expectedInterceptorVersion");
    assertTrue(expected != null && !expected.isEmpty(), "Maven passes the project's version");
    Object attempt = Json.parse(call("GET", "/amrm/v1/attempt", secretA, null).body());
    assertEquals(expected, ((java.util.Map<?, ?>) attempt).get("interceptorVersion"));
  }

  @Test
  void badInputIsA4xxAndChangesNothing() throws Exception {
    assertEquals(400, call("POST", "/amrm/v1/blacklist", secretA, "{\"blacklistAdditions\":[\"n1\",\"*\"]}").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/blacklist", secretA, "{\"blacklistAdditions\":\"n1\"}").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/blacklist", secretA, "{\"owner\":\"am\",\"blacklistAdditions\":[\"n1\"]}").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/blacklist", secretA, "{nope").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/blacklist", secretA, "[]").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/containers/release", secretA, "{\"containerIds\":[\"x\"]}").statusCode());
    assertEquals(400, call("POST", "/amrm/v1/containers/release", secretA, "{}").statusCode());
    assertEquals(400, call("GET", "/amrm/v1/completed-containers?after=-1", secretA, null).statusCode());
    assertEquals(405, call("DELETE", "/amrm/v1/blacklist", secretA, null).statusCode());
    assertEquals(404, call("GET", "/amrm/v1/nope", secretA, null).statusCode());
    assertEquals("{\"blacklist\":[],\"owners\":{}}", call("GET", "/amrm/v1/blacklist", secretA, null).body());
  }

  @Test
  void ownersReleaseAndCompletedOverHttp() throws Exception {
    String before = a.etag();
    HttpResponse<String> r = call("POST", "/amrm/v1/blacklist", secretA,
        "{\"owner\":\"speculation\",\"blacklistAdditions\":[\"n2\"]}");
    assertEquals("{\"blacklist\":[\"n2\"],\"owners\":{\"speculation\":[\"n2\"]},\"etag\":"
        + Json.write(a.etag()) + ",\"previousEtag\":" + Json.write(before) + "}", r.body());
    r = call("POST", "/amrm/v1/containers/release", secretA,
        "{\"containerIds\":[\"container_1652313600000_0001_01_000002\"]}");
    assertEquals("{\"released\":[],\"unknown\":[\"container_1652313600000_0001_01_000002\"]}", r.body());
    assertEquals("{\"containers\":[],\"next\":0,\"epoch\":" + Json.write(a.completedAfter(0).get("epoch")) + "}",
        call("GET", "/amrm/v1/completed-containers?after=0", secretA, null).body());
    assertEquals("{\"containers\":[]}", call("GET", "/amrm/v1/containers", secretA, null).body());
  }

  private HttpResponse<String> call(String method, String path, String secret, String body,
      String header, String value) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(server.address() + path));
    r.header("Authorization", "Bearer " + secret).header(header, value);
    r.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theBlacklistIsVersionedByAnEtagAndAReaderHoldingItGets304() throws Exception {
    HttpResponse<String> r = call("GET", "/amrm/v1/blacklist", secretA, null);
    String tag = r.headers().firstValue("ETag").orElseThrow();
    assertEquals(a.etag(), tag);
    assertEquals("no-cache", r.headers().firstValue("Cache-Control").orElseThrow());
    r = call("GET", "/amrm/v1/blacklist", secretA, null, "If-None-Match", tag);
    assertEquals(304, r.statusCode());
    assertEquals("", r.body());
    assertEquals(tag, r.headers().firstValue("ETag").orElseThrow());
    assertEquals(304, call("GET", "/amrm/v1/blacklist", secretA, null, "If-None-Match", "\"x\", W/" + tag).statusCode());
    assertEquals(304, call("GET", "/amrm/v1/blacklist", secretA, null, "If-None-Match", "*").statusCode());
    // Another owner writes: the tag the reader holds is no longer current.
    r = call("POST", "/amrm/v1/blacklist", secretA, "{\"owner\":\"speculation\",\"blacklistAdditions\":[\"n4\"]}",
        "Prefer", "return=minimal");
    assertEquals(200, r.statusCode());
    assertEquals("return=minimal", r.headers().firstValue("Preference-Applied").orElseThrow());
    assertEquals("{\"etag\":" + Json.write(a.etag()) + ",\"previousEtag\":" + Json.write(tag) + "}", r.body());
    assertEquals(a.etag(), r.headers().firstValue("ETag").orElseThrow());
    r = call("GET", "/amrm/v1/blacklist", secretA, null, "If-None-Match", tag);
    assertEquals(200, r.statusCode());
    assertEquals("{\"blacklist\":[\"n4\"],\"owners\":{\"speculation\":[\"n4\"]}}", r.body());
    assertNotEquals(tag, r.headers().firstValue("ETag").orElseThrow());
    // Each application has its own versions.
    assertNotEquals(a.etag(), call("GET", "/amrm/v1/blacklist", secretB, null).headers().firstValue("ETag").orElseThrow());
  }

  @Test
  void ifNoneMatchAndPreferAreParsedAsTheRfcsWriteThem() {
    assertTrue(BlacklistEndpoint.noneMatchHolds("\"a-1\"", "\"a-1\""));
    assertTrue(BlacklistEndpoint.noneMatchHolds(" \"b\" ,W/\"a-1\"", "\"a-1\""));
    assertTrue(BlacklistEndpoint.noneMatchHolds("*", "\"a-1\""));
    assertEquals(false, BlacklistEndpoint.noneMatchHolds(null, "\"a-1\""));
    assertEquals(false, BlacklistEndpoint.noneMatchHolds("\"a-2\"", "\"a-1\""));
    assertTrue(BlacklistEndpoint.prefersMinimal(java.util.List.of("respond-async, return=minimal; x=1")));
    assertTrue(BlacklistEndpoint.prefersMinimal(java.util.List.of("Return = Minimal")));
    assertEquals(false, BlacklistEndpoint.prefersMinimal(java.util.List.of("return=representation")));
    assertEquals(false, BlacklistEndpoint.prefersMinimal(null));
  }

  @Test
  void aBindingOfAnEarlierAttemptDoesNotTakeTheSecretFromALaterOne() throws Exception {
    ProxyState older = new ProxyState(16);
    ProxyHttpServer.Binding first = new ProxyHttpServer.Binding() {
      public String applicationId() { return "application_1_0001"; }
      public String appAttemptId() { return "appattempt_1_0001_000001"; }
      public ProxyState state() { return older; }
    };
    ProxyHttpServer.Binding third = new ProxyHttpServer.Binding() {
      public String applicationId() { return "application_1_0001"; }
      public String appAttemptId() { return "appattempt_1_0001_000003"; }
      public ProxyState state() { return a; }
    };
    assertTrue(server.register(secretA, third), "a later attempt replaces the earlier one");
    assertEquals(false, server.register(secretA, first), "a pipeline rebuilt for an earlier attempt does not");
    assertTrue(call("GET", "/amrm/v1/attempt", secretA, null).body().contains("appattempt_1_0001_000003"));
    server.unregister(secretA, first);
    assertTrue(call("GET", "/amrm/v1/attempt", secretA, null).body().contains("appattempt_1_0001_000003"), "its unregister leaves the later one");
  }
}
