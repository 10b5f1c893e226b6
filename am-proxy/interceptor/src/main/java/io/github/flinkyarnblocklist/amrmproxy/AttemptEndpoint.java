package io.github.flinkyarnblocklist.amrmproxy;

import java.util.LinkedHashMap;
import java.util.Map;

/** GET /amrm/v1/attempt: the attempt this proxy fronts, its AM container as the NodeManager knows it, and this jar's version. */
final class AttemptEndpoint extends Endpoint {
  AttemptEndpoint() {
    super("GET");
  }

  @Override
  Answer answer(Request r, ProxyHttpServer.Binding b) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("applicationId", b.applicationId());
    m.put("appAttemptId", b.appAttemptId());
    String am = b.amContainerId();
    if (am != null) m.put("amContainerId", am);
    m.put("registered", b.state().registered());
    String version = InterceptorVersion.get();
    if (version != null) m.put("interceptorVersion", version);
    return Answer.json(200, m);
  }
}
