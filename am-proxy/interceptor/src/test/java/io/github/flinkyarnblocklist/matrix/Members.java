package io.github.flinkyarnblocklist.matrix;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;

/** Whether a class-file reference resolves on the loaded classes, as the JVM would link it (JVMS §5.4.3). */
final class Members {
  private Members() {}

  static boolean resolves(Class<?> owner, ClassReferences.Ref ref) {
    if (ref.kind.equals("method") && ref.name.equals("<init>")) {
      for (Constructor<?> c : owner.getDeclaredConstructors()) if (ref.descriptor.equals(descriptor(c.getParameterTypes(), void.class))) return true;
      return false;
    }
    for (Class<?> c : supertypes(owner)) {
      if (ref.kind.equals("field")) {
        for (Field f : c.getDeclaredFields()) if (f.getName().equals(ref.name) && ref.descriptor.equals(descriptor(f.getType()))) return true;
      } else {
        for (Method m : c.getDeclaredMethods()) if (m.getName().equals(ref.name) && ref.descriptor.equals(descriptor(m.getParameterTypes(), m.getReturnType()))) return true;
      }
    }
    return false;
  }

  /** The class, its superclasses and every interface above them. */
  private static Set<Class<?>> supertypes(Class<?> c) {
    Set<Class<?>> seen = new HashSet<>();
    Deque<Class<?>> todo = new ArrayDeque<>();
    todo.add(c);
    while (!todo.isEmpty()) {
      Class<?> x = todo.poll();
      if (x == null || !seen.add(x)) continue;
      if (x.getSuperclass() != null) todo.add(x.getSuperclass());
      for (Class<?> i : x.getInterfaces()) todo.add(i);
    }
    if (c.isInterface()) seen.add(Object.class);
    return seen;
  }

  private static String descriptor(Class<?>[] params, Class<?> ret) {
    StringBuilder b = new StringBuilder("(");
    for (Class<?> p : params) b.append(descriptor(p));
    return b.append(')').append(descriptor(ret)).toString();
  }

  static String descriptor(Class<?> t) {
    if (t.isArray()) return t.getName().replace('.', '/');
    if (!t.isPrimitive()) return "L" + t.getName().replace('.', '/') + ";";
    if (t == void.class) return "V";
    if (t == boolean.class) return "Z";
    if (t == byte.class) return "B";
    if (t == char.class) return "C";
    if (t == short.class) return "S";
    if (t == int.class) return "I";
    if (t == long.class) return "J";
    if (t == float.class) return "F";
    return "D";
  }

  /** The file name of the jar a class came from, or "jdk". */
  static String jarOf(Class<?> c) {
    CodeSource cs = c.getProtectionDomain().getCodeSource();
    if (cs == null || cs.getLocation() == null) return "jdk";
    try {
      return Paths.get(cs.getLocation().toURI()).getFileName().toString();
    } catch (Exception e) {
      return cs.getLocation().toString();
    }
  }
}
