package io.github.flinkyarnblocklist.matrix;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/** The methods, constructors and fields one class file refers to, read from its constant pool (JVMS §4.4). */
final class ClassReferences {
  /** One reference: the owner class (internal name), the member's name and its descriptor. */
  static final class Ref {
    final String kind;
    final String owner;
    final String name;
    final String descriptor;

    Ref(String kind, String owner, String name, String descriptor) {
      this.kind = kind;
      this.owner = owner;
      this.name = name;
      this.descriptor = descriptor;
    }

    @Override
    public String toString() {
      return kind + " " + owner + "." + name + descriptor;
    }
  }

  private ClassReferences() {}

  static List<Ref> read(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    if (d.readInt() != 0xCAFEBABE) throw new IOException("not a class file");
    d.readUnsignedShort();
    d.readUnsignedShort();
    int count = d.readUnsignedShort();
    Object[] pool = new Object[count];
    int[][] links = new int[count][];
    int[] tags = new int[count];
    for (int i = 1; i < count; i++) {
      int tag = d.readUnsignedByte();
      tags[i] = tag;
      switch (tag) {
        case 1: pool[i] = d.readUTF(); break;
        case 3: case 4: d.readInt(); break;
        case 5: case 6: d.readLong(); i++; break;
        case 7: case 8: case 16: case 19: case 20: links[i] = new int[] {d.readUnsignedShort()}; break;
        case 9: case 10: case 11: case 12: case 17: case 18: links[i] = new int[] {d.readUnsignedShort(), d.readUnsignedShort()}; break;
        case 15: d.readUnsignedByte(); links[i] = new int[] {d.readUnsignedShort()}; break;
        default: throw new IOException("constant pool tag " + tag + " at " + i);
      }
    }
    List<Ref> out = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      if (tags[i] != 9 && tags[i] != 10 && tags[i] != 11) continue;
      String owner = (String) pool[links[links[i][0]][0]];
      int[] nameAndType = links[links[i][1]];
      String kind = tags[i] == 9 ? "field" : "method";
      out.add(new Ref(kind, owner, (String) pool[nameAndType[0]], (String) pool[nameAndType[1]]));
    }
    return out;
  }
}
