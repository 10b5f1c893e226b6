package io.github.flinkyarnblocklist.amrmproxy;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import org.apache.hadoop.yarn.server.nodemanager.Context;
import org.apache.hadoop.yarn.server.nodemanager.amrmproxy.AMRMProxyApplicationContext;

/**
 * The NodeManager context of an AMRMProxy application context on every supported Hadoop: 3.4 and
 * later name the getter getNMContext(), 3.3 getNMCotext() (sic); one jar must link on both.
 */
final class NmContexts {
  private static final Method GETTER = getter();

  private NmContexts() {}

  private static Method getter() {
    for (String name : new String[] {"getNMContext", "getNMCotext"}) {
      try {
        return AMRMProxyApplicationContext.class.getMethod(name);
      } catch (NoSuchMethodException e) {
        // the other spelling
      }
    }
    return null;
  }

  /** The context's NodeManager context, or null when it has none (or this Hadoop has no getter). */
  static Context of(AMRMProxyApplicationContext ctx) {
    if (ctx == null || GETTER == null) return null;
    try {
      return (Context) GETTER.invoke(ctx);
    } catch (IllegalAccessException | InvocationTargetException e) {
      return null;
    }
  }

  /** Which getter this Hadoop has (for the log and the matrix test). */
  static String getterName() {
    return GETTER == null ? "none" : GETTER.getName();
  }
}
