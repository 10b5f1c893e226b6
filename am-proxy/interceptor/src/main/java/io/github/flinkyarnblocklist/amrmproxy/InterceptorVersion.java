package io.github.flinkyarnblocklist.amrmproxy;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Pattern;

/** The jar's own version (Maven's project version, written into a resource at build time). */
final class InterceptorVersion {
  private static final Pattern VERSION = Pattern.compile("[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}");
  private static final String VALUE = read();

  private InterceptorVersion() {}

  /** The version, or null when the jar carries none that reads as one (then the field is left out, as from older jars). */
  static String get() {
    return VALUE;
  }

  private static String read() {
    Properties p = new Properties();
    try (InputStream in = InterceptorVersion.class.getResourceAsStream("interceptor.properties")) {
      if (in == null) return null;
      p.load(in);
    } catch (IOException e) {
      return null;
    }
    String v = p.getProperty("version", "").trim();
    return VERSION.matcher(v).matches() ? v : null;
  }
}
