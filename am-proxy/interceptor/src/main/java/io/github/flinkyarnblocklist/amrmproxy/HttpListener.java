package io.github.flinkyarnblocklist.amrmproxy;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1.1 listener: one request per connection, a deadline on the head and on the body
 * of each, a bound on the head's size. Heads are read without a thread per connection
 * (HeadReader), so clients that connect and stall hold no worker: the JDK's server had a pool of
 * two, which two half-open sockets held, and every application on the NodeManager lost its write
 * path. Only a complete head takes a worker, which checks the secret before reading any body.
 */
final class HttpListener {
  private static final Logger LOG = LoggerFactory.getLogger(HttpListener.class);
  /** Request line and headers together; the contract's requests need a few hundred bytes. */
  static final int MAX_HEAD_BYTES = 16 * 1024;
  static final int MAX_BODY_BYTES = 1 << 20;
  static final int WORKERS = 16;
  private static final int QUEUED = 64;

  /** What serves the requests: a first look at the head (to refuse before the body is read), then the request. */
  interface Handler {
    /** An answer to send without reading the body (401, 404, 405, 413…), or null to go on. */
    Answer head(Request r);

    Answer handle(Request r);
  }

  private final HeadReader heads;
  private final ThreadPoolExecutor pool;
  private final Handler handler;
  private final long bodyDeadlineMs;

  HttpListener(InetSocketAddress address, Handler handler, long headDeadlineMs, long bodyDeadlineMs) throws IOException {
    this.handler = handler;
    this.bodyDeadlineMs = bodyDeadlineMs;
    this.pool = new ThreadPoolExecutor(WORKERS, WORKERS, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<Runnable>(QUEUED), r -> {
      Thread t = new Thread(r, "blocklist-amrm-proxy-http");
      t.setDaemon(true);
      return t;
    });
    pool.allowCoreThreadTimeOut(true);
    this.heads = new HeadReader(address, QUEUED, headDeadlineMs, this::dispatch);
  }

  InetSocketAddress address() {
    return heads.address();
  }

  void stop() {
    heads.stop();
    pool.shutdownNow();
  }

  private void dispatch(SocketChannel ch, Request r, byte[] rest) {
    try {
      pool.execute(() -> serve(ch, r, rest));
    } catch (RejectedExecutionException e) {
      // Every worker busy and the queue full: this client is turned away, the others still served.
      HeadReader.reset(ch);
    }
  }

  private void serve(SocketChannel ch, Request r, byte[] rest) {
    Socket s = ch.socket();
    try {
      ch.configureBlocking(true);
      Answer a = handler.head(r);
      if (a == null) {
        InputStream in = new SequenceInputStream(new ByteArrayInputStream(rest), new BufferedInputStream(s.getInputStream(), 4096));
        r.body(readBody(s, in, r, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(bodyDeadlineMs)));
        a = handler.handle(r);
      }
      write(s.getOutputStream(), "HEAD".equals(r.method) ? a.withoutBody() : a);
    } catch (SocketTimeoutException e) {
      tryWrite(s, Answer.error(408, "request not received in time"));
    } catch (IOException e) {
      LOG.debug("blocklist AMRM proxy: connection ended: {}", e.toString());
    } catch (RuntimeException e) {
      LOG.warn("blocklist AMRM proxy: request failed", e);
      tryWrite(s, Answer.error(500, "internal error: " + e.getClass().getSimpleName()));
    } finally {
      HeadReader.close(ch);
    }
  }

  static Request parseHead(String text) {
    String[] lines = text.split("\r\n");
    String[] first = lines[0].split(" ");
    if (first.length != 3 || !first[2].startsWith("HTTP/1.") || !first[1].startsWith("/")) return null;
    Request r = new Request(first[0], first[1]);
    for (int i = 1; i < lines.length; i++) {
      if (lines[i].isEmpty()) continue;
      int colon = lines[i].indexOf(':');
      if (colon <= 0) return null;
      r.addHeader(lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim());
    }
    return r;
  }

  private static int remainingMs(long deadline) throws SocketTimeoutException {
    long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
    if (ms <= 0) throw new SocketTimeoutException("deadline passed");
    return (int) Math.min(ms, Integer.MAX_VALUE);
  }

  /** The body of Content-Length bytes (ProxyHttpServer#head has checked the length is allowed). */
  private static byte[] readBody(Socket s, InputStream in, Request r, long deadline) throws IOException {
    int length = contentLength(r);
    byte[] body = new byte[Math.max(length, 0)];
    int n = 0;
    while (n < body.length) {
      s.setSoTimeout(remainingMs(deadline));
      int got = in.read(body, n, body.length - n);
      if (got < 0) throw new IOException("body ended after " + n + " of " + body.length + " bytes");
      n += got;
    }
    return body;
  }

  /** The declared body length: 0 when absent, -1 when it cannot be read. */
  static int contentLength(Request r) {
    String v = r.header("Content-Length");
    if (v == null) return 0;
    try {
      long n = Long.parseLong(v.trim());
      return n < 0 || n > Integer.MAX_VALUE ? -1 : (int) n;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The whole answer as sent: status line, headers, `Connection: close`, body. */
  static byte[] bytes(Answer a) {
    StringBuilder h = new StringBuilder();
    h.append("HTTP/1.1 ").append(a.status).append(' ').append(reason(a.status)).append("\r\n");
    for (Map.Entry<String, String> e : a.headers.entrySet()) h.append(e.getKey()).append(": ").append(e.getValue()).append("\r\n");
    if (a.body != null) h.append("Content-Length: ").append(a.body.length).append("\r\n");
    h.append("Connection: close\r\n\r\n");
    byte[] head = h.toString().getBytes(StandardCharsets.ISO_8859_1);
    if (a.body == null) return head;
    byte[] all = Arrays.copyOf(head, head.length + a.body.length);
    System.arraycopy(a.body, 0, all, head.length, a.body.length);
    return all;
  }

  private static void write(OutputStream out, Answer a) throws IOException {
    out.write(bytes(a));
    out.flush();
  }

  private static void tryWrite(Socket s, Answer a) {
    try {
      write(s.getOutputStream(), a);
    } catch (IOException e) {
      // the client is gone
    }
  }

  static String reason(int status) {
    switch (status) {
      case 200: return "OK";
      case 304: return "Not Modified";
      case 400: return "Bad Request";
      case 401: return "Unauthorized";
      case 404: return "Not Found";
      case 405: return "Method Not Allowed";
      case 408: return "Request Timeout";
      case 411: return "Length Required";
      case 413: return "Payload Too Large";
      case 500: return "Internal Server Error";
      default: return "Status";
    }
  }
}
