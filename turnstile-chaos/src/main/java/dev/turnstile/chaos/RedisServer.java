package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} process of the harness's own, on a free loopback port, without persistence
 * (no RDB, no AOF), so that a restart forgets everything. The machine's Redis on 6379 is never
 * touched.
 */
public final class RedisServer implements AutoCloseable {
    private final int port;
    private final Path dir;
    private Process process;

    /**
     * Starts a server.
     *
     * @param dir where its log goes
     */
    public RedisServer(Path dir) {
        this.port = freePort();
        this.dir = dir;
        start();
    }

    /** A free loopback port. */
    public static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** Its port. */
    public int port() {
        return port;
    }

    /** Starts it (again) on the same port, empty. */
    public synchronized void start() {
        List<String> cmd = List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no",
                "--logfile", dir.resolve("redis-" + port + ".log").toString());
        try {
            process = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis-" + port + ".out").toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start redis-server (is it installed? scripts/services.sh installs it)", e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline || !process.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + port + " did not start; see " + dir);
                }
                Harness.sleep(10);
            }
        }
    }

    /** SIGKILLs it: everything it held is gone. */
    public synchronized void kill() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    /** SIGKILL and start again at once, empty. */
    public void restart() {
        kill();
        start();
    }

    @Override
    public void close() {
        kill();
    }
}
