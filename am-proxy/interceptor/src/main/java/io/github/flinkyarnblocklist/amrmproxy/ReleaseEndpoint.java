package io.github.flinkyarnblocklist.amrmproxy;

import java.util.List;
import java.util.Map;

/** POST /amrm/v1/containers/release: containers for the next allocate's release list, stored before the answer. */
final class ReleaseEndpoint extends Endpoint {
  ReleaseEndpoint() {
    super("POST");
  }

  @Override
  Answer answer(Request r, ProxyHttpServer.Binding b) throws Refusal {
    Map<String, Object> body = Endpoint.objectBody(r);
    if (!body.containsKey("containerIds")) throw new Refusal("body must be {\"containerIds\":[…]}");
    List<String> ids = Endpoint.strings(body, "containerIds");
    for (String id : ids) {
      if (!ProxyState.isContainerId(id)) throw new Refusal("containerIds: '" + Endpoint.clip(id) + "' is not a YARN container id");
    }
    Map<String, Object> released = b.state().release(ids);
    b.changed();
    return Answer.json(200, released);
  }
}
