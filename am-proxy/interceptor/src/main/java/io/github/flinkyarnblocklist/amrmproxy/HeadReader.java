package io.github.flinkyarnblocklist.amrmproxy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts connections and reads their request heads on one thread, without blocking: a client
 * that sends a byte and stops holds a little memory until its deadline, never a worker, so any
 * number of them (up to MAX_PENDING, then the oldest is dropped) leaves the others answered.
 * Only a complete head goes to a worker.
 */
final class HeadReader {
  private static final Logger LOG = LoggerFactory.getLogger(HeadReader.class);
  /** Connections whose head is not complete yet; past it the oldest is reset (an honest head arrives in one packet). */
  static final int MAX_PENDING = 256;

  /** Where a complete head goes, with the bytes read past it (the start of the body). */
  interface Sink {
    void head(SocketChannel ch, Request r, byte[] rest);
  }

  private static final class Pending {
    final SocketChannel ch;
    final long deadline;
    final ByteArrayOutputStream head = new ByteArrayOutputStream(512);
    int matched;
    /** Set once the head is complete: where it ends in `head` (the rest is the body's start). */
    int headLength = -1;

    Pending(SocketChannel ch, long deadline) {
      this.ch = ch;
      this.deadline = deadline;
    }
  }

  private static final byte[] TIMED_OUT = HttpListener.bytes(Answer.error(408, "request not received in time"));

  private final ServerSocketChannel server;
  private final Selector selector;
  private final Sink sink;
  private final long headDeadlineNanos;
  private final Map<SocketChannel, Pending> pending = new LinkedHashMap<>();
  private final ByteBuffer buffer = ByteBuffer.allocate(4096);
  private final Thread thread;
  private volatile boolean stopping;
  /** Set when accept failed (out of file descriptors): accepting pauses until then instead of spinning. */
  private long acceptPausedUntil;
  private SelectionKey acceptKey;

  HeadReader(InetSocketAddress address, int backlog, long headDeadlineMs, Sink sink) throws IOException {
    this.sink = sink;
    this.headDeadlineNanos = TimeUnit.MILLISECONDS.toNanos(headDeadlineMs);
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    try {
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(address, backlog);
      server.configureBlocking(false);
      acceptKey = server.register(selector, SelectionKey.OP_ACCEPT);
    } catch (IOException e) {
      server.close();
      selector.close();
      throw e;
    }
    this.thread = new Thread(this::loop, "blocklist-amrm-proxy-accept");
    thread.setDaemon(true);
    thread.start();
  }

  InetSocketAddress address() {
    return (InetSocketAddress) server.socket().getLocalSocketAddress();
  }

  /** Closes the listening socket and every unfinished connection; the port is free when this returns. */
  void stop() {
    stopping = true;
    selector.wakeup();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void loop() {
    try {
      while (!stopping) {
        selector.select(waitMs());
        List<Pending> done = new ArrayList<>();
        List<Pending> refused = new ArrayList<>();
        Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext()) {
          SelectionKey k = it.next();
          it.remove();
          if (!k.isValid()) continue;
          if (k.isAcceptable()) acceptAll(refused);
          else if (k.isReadable()) read((Pending) k.attachment(), done, refused);
        }
        expire(System.nanoTime());
        handOver(done, refused);
        resumeAccepting();
      }
    } catch (IOException | RuntimeException e) {
      if (!stopping) LOG.error("blocklist AMRM proxy: the listener stopped", e);
    } finally {
      for (Pending p : pending.values()) close(p.ch);
      pending.clear();
      close(server);
      close(selector);
    }
  }

  /** Until the nearest deadline (the map is in accept order, so the first one's), at most a second. */
  private long waitMs() {
    if (acceptKey.interestOps() == 0) return 100;
    if (pending.isEmpty()) return 1_000;
    long ms = TimeUnit.NANOSECONDS.toMillis(pending.values().iterator().next().deadline - System.nanoTime());
    return Math.max(1, Math.min(ms + 1, 1_000));
  }

  private void acceptAll(List<Pending> refused) {
    for (SocketChannel ch = accept(); ch != null; ch = accept()) {
      if (pending.size() >= MAX_PENDING) {
        Pending oldest = pending.values().iterator().next();
        pending.remove(oldest.ch);
        refused.add(oldest);
      }
      Pending p = new Pending(ch, System.nanoTime() + headDeadlineNanos);
      try {
        ch.configureBlocking(false);
        ch.register(selector, SelectionKey.OP_READ, p);
        pending.put(ch, p);
      } catch (IOException e) {
        close(ch);
      }
    }
  }

  /** The next connection, or null; a failure (no file descriptor left) pauses accepting for 100 ms. */
  private SocketChannel accept() {
    try {
      return server.accept();
    } catch (IOException e) {
      LOG.warn("blocklist AMRM proxy: accept failed, pausing 100 ms: {}", e.toString());
      acceptKey.interestOps(0);
      acceptPausedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
      return null;
    }
  }

  private void resumeAccepting() {
    if (acceptKey.interestOps() == 0 && System.nanoTime() - acceptPausedUntil >= 0) acceptKey.interestOps(SelectionKey.OP_ACCEPT);
  }

  /** What arrived; a complete head goes to `done`, a head past the bound or malformed to `refused`. */
  private void read(Pending p, List<Pending> done, List<Pending> refused) {
    if (!pending.containsKey(p.ch)) return; // dropped for a newer one in this same round
    buffer.clear();
    int n;
    try {
      n = p.ch.read(buffer);
    } catch (IOException e) {
      n = -1;
    }
    if (n < 0) {
      pending.remove(p.ch);
      close(p.ch);
      return;
    }
    byte[] b = buffer.array();
    for (int i = 0; i < n; i++) {
      if (p.head.size() >= HttpListener.MAX_HEAD_BYTES) {
        pending.remove(p.ch);
        refused.add(p);
        return;
      }
      p.head.write(b[i]);
      boolean cr = p.matched % 2 == 0;
      p.matched = b[i] == (cr ? '\r' : '\n') ? p.matched + 1 : (b[i] == '\r' ? 1 : 0);
      if (p.matched == 4) {
        pending.remove(p.ch);
        p.headLength = p.head.size();
        p.head.write(b, i + 1, n - i - 1);
        done.add(p);
        return;
      }
    }
  }

  /** Answers 408 to the connections past their deadline and closes them. */
  private void expire(long now) {
    for (Iterator<Pending> it = pending.values().iterator(); it.hasNext();) {
      Pending p = it.next();
      if (now - p.deadline < 0) break;
      it.remove();
      try {
        p.ch.write(ByteBuffer.wrap(TIMED_OUT));
      } catch (IOException e) {
        // the client is gone
      }
      close(p.ch);
    }
  }

  /** Takes the finished connections off the selector, then hands heads to workers and resets the refused. */
  private void handOver(List<Pending> done, List<Pending> refused) throws IOException {
    if (done.isEmpty() && refused.isEmpty()) return;
    for (Pending p : done) p.ch.keyFor(selector).cancel();
    for (Pending p : refused) p.ch.keyFor(selector).cancel();
    selector.selectNow(); // deregisters them, so they can be made blocking
    selector.selectedKeys().clear(); // what became ready meanwhile is seen again at the next select
    for (Pending p : refused) reset(p.ch);
    for (Pending p : done) {
      byte[] all = p.head.toByteArray();
      Request r = HttpListener.parseHead(new String(all, 0, p.headLength, StandardCharsets.ISO_8859_1));
      if (r == null) {
        reset(p.ch);
        continue;
      }
      sink.head(p.ch, r, Arrays.copyOfRange(all, p.headLength, all.length));
    }
  }

  /** Ends the connection at once with a reset: what a head past the bound or a dropped client gets. */
  static void reset(SocketChannel ch) {
    try {
      ch.configureBlocking(true);
      ch.socket().setSoLinger(true, 0);
    } catch (IOException | RuntimeException e) {
      // closing anyway
    }
    close(ch);
  }

  static void close(java.io.Closeable c) {
    try {
      c.close();
    } catch (IOException e) {
      // nothing left to do
    }
  }
}
