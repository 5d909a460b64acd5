package dev.turnstile.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A TCP proxy on 127.0.0.1 in front of one server, for tests of what a client does while its
 * network is partitioned: {@link #hold()} stops every byte in both directions with the sockets
 * left open (a partition in which TCP keeps retransmitting, so a driver without a socket timeout
 * waits for ever), and {@link #release()} lets the held bytes flow on, in order, as TCP would
 * redeliver them. Nothing is dropped. Each accepted connection gets its own upstream connection
 * and a reader and a writer thread per direction (daemons). A trimmed copy of the chaos harness's
 * {@code TcpProxy}, which the testkit cannot depend on.
 */
public final class PartitionProxy implements AutoCloseable {
    private final String targetHost;
    private final int targetPort;
    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean held;
    private volatile boolean closed;

    /**
     * Starts a proxy on a free loopback port.
     *
     * @param targetHost the server's host
     * @param targetPort the server's port
     * @throws UncheckedIOException if no local port can be opened
     */
    public PartitionProxy(String targetHost, int targetPort) {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        try {
            this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Thread acceptor = new Thread(this::acceptLoop, "partition-proxy-accept-" + port());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * Returns the local port clients connect to instead of the server's.
     *
     * @return the port
     */
    public int port() {
        return server.getLocalPort();
    }

    /** Stops every byte in both directions, on every connection, new ones included; sockets stay open. */
    public void hold() {
        held = true;
    }

    /** Lets the held bytes, and every later one, flow again. */
    public void release() {
        held = false;
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

    private static final byte[] EOF = new byte[0];

    private void relay(Socket from, Socket to, String direction) {
        LinkedBlockingQueue<byte[]> queue = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            byte[] buf = new byte[16384];
            try {
                InputStream in = from.getInputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    queue.add(Arrays.copyOf(buf, n));
                }
            } catch (IOException e) {
                // the socket closed
            }
            queue.add(EOF);
        }, "partition-proxy-" + direction + "-read-" + port());
        Thread writer = new Thread(() -> {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    byte[] chunk = queue.take();
                    awaitReleased();
                    if (chunk == EOF) {
                        to.shutdownOutput();
                        return;
                    }
                    out.write(chunk);
                    out.flush();
                }
            } catch (IOException e) {
                closeQuietly(from);
                closeQuietly(to);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "partition-proxy-" + direction + "-write-" + port());
        reader.setDaemon(true);
        writer.setDaemon(true);
        reader.start();
        writer.start();
    }

    private void awaitReleased() throws InterruptedException {
        synchronized (gate) {
            while (held && !closed) {
                gate.wait(50);
            }
        }
    }

    /** Closes the listening socket and every relayed connection; held bytes are dropped. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Socket s : sockets) {
            closeQuietly(s);
        }
        synchronized (gate) {
            gate.notifyAll();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
