package io.github.flinkyarnblocklist.amrmproxy;

import java.util.Map;

/** The blacklist's entity tag and, unless the reader holds that tag already, the view it names. */
public final class BlacklistRead {
  private final String etag;
  private final Map<String, Object> view;

  BlacklistRead(String etag, Map<String, Object> view) {
    this.etag = etag;
    this.view = view;
  }

  public String etag() {
    return etag;
  }

  public Map<String, Object> view() {
    return view;
  }

  public boolean notModified() {
    return view == null;
  }
}
