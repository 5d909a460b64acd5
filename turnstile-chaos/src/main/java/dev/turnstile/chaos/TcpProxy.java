package dev.turnstile.chaos;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy on 127.0.0.1 in front of one store endpoint, for network faults without root or
 * {@code tc netem}: every accepted connection gets its own upstream connection and relay threads
 * (a reader and a writer per direction), so that it can
 *
 * <ul>
 *   <li>{@link #delay(Duration) delay} every chunk in both directions (order kept);
 *   <li>{@link #blackhole() blackhole} both directions: sockets stay open and bytes stop, as in a
 *       partition where TCP keeps retransmitting; nothing is dropped, so after {@link #heal()} the
 *       held bytes flow on, as TCP would redeliver them;
 *   <li>{@link #heal() heal}: no delay, no blackhole.
 * </ul>
 *
 * <p>New connections during a blackhole are accepted (the kernel does that) but carry nothing.
 */
public final class TcpProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile long delayNanos;
    private volatile boolean blackholed;
    private volatile boolean closed;

    /**
     * Starts a proxy on a free loopback port.
     *
     * @param targetHost the endpoint's host
     * @param targetPort the endpoint's port
     */
    public TcpProxy(String targetHost, int targetPort) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try {
            this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::acceptLoop, "proxy-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The local port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code 127.0.0.1:port}. */
    public String hostPort() {
        return "127.0.0.1:" + port();
    }

    /** Delays every chunk in both directions by {@code delay} (zero for none). */
    public void delay(Duration delay) {
        delayNanos = delay.toNanos();
        wake();
    }

    /** Stops every byte in both directions; sockets stay open. */
    public void blackhole() {
        blackholed = true;
    }

    /** Lets bytes flow again with no delay. */
    public void heal() {
        blackholed = false;
        delayNanos = 0;
        wake();
    }

    /** Tells whether bytes are stopped. */
    public boolean isBlackholed() {
        return blackholed;
    }

    private void wake() {
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket upstream = new Socket();
            try {
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                upstream.connect(new InetSocketAddress(targetHost, targetPort), 5000);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstream);
                continue;
            }
            sockets.add(client);
            sockets.add(upstream);
            relay(client, upstream, "up");
            relay(upstream, client, "down");
        }
    }

    private record Chunk(byte[] bytes, long arrivedAt) {}

    private static final Chunk EOF = new Chunk(new byte[0], 0);

    private void relay(Socket from, Socket to, String direction) {
        LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16384];
            try {
                InputStream in = from.getInputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    queue.add(new Chunk(Arrays.copyOf(buf, n), System.nanoTime()));
                }
            } catch (IOException e) {
                // the socket closed
            }
            queue.add(EOF);
        }, "proxy-" + direction + "-read-" + port());
        Thread writer = new Thread(() -> {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk c = queue.take();
                    awaitSendable(c);
                    if (c == EOF) {
                        to.shutdownOutput();
                        return;
                    }
                    out.write(c.bytes());
                    out.flush();
                }
            } catch (IOException e) {
                closeQuietly(from);
                closeQuietly(to);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "proxy-" + direction + "-write-" + port());
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    /** Waits while blackholed, and until the chunk's delay has passed. */
    private void awaitSendable(Chunk c) throws InterruptedException {
        synchronized (gate) {
            while (!closed) {
                if (blackholed) {
                    gate.wait(50);
                    continue;
                }
                long wait = c.arrivedAt() + delayNanos - System.nanoTime();
                if (wait <= 0) {
                    return;
                }
                TimeUnit.NANOSECONDS.timedWait(gate, wait);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        wake();
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
