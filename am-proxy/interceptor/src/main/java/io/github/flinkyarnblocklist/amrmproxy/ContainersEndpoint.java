package io.github.flinkyarnblocklist.amrmproxy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** GET /amrm/v1/containers: the live containers as the AM holds them (never one released here). */
final class ContainersEndpoint extends Endpoint {
  ContainersEndpoint() {
    super("GET");
  }

  @Override
  Answer answer(Request r, ProxyHttpServer.Binding b) {
    List<Object> list = new ArrayList<>();
    for (Live c : b.state().containers()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("containerId", c.containerId());
      m.put("nodeId", c.nodeId());
      m.put("nodeHttpAddress", c.nodeHttpAddress());
      m.put("state", c.state());
      list.add(m);
    }
    return Answer.json(200, Answer.object("containers", list));
  }
}
