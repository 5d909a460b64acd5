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
    private final List<String> extra;
    private Process process;

    /**
     * Starts a server.
     *
     * @param dir where its log goes
     */
    public RedisServer(Path dir) {
        this(dir, List.of());
    }

    /**
     * Starts a server with extra arguments (for example {@code --replicaof host port}).
     *
     * @param dir where its log goes
     * @param extra more {@code redis-server} arguments
     */
    public RedisServer(Path dir, List<String> extra) {
        this.port = freePort();
        this.dir = dir;
        this.extra = List.copyOf(extra);
        start();
    }

    /** Its process id, or -1 when it is not running. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
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
        start(extra);
    }

    /**
     * Starts it (again) on the same port, empty, with these extra arguments instead of its own.
     *
     * @param args more {@code redis-server} arguments
     */
    public synchronized void start(List<String> args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no",
                "--logfile", dir.resolve("redis-" + port + ".log").toString()));
        cmd.addAll(args);
        try {
            process = Harness.startInOwnSession(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis-" + port + ".out").toFile())));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start redis-server (is it installed? scripts/services.sh installs it)", e);
        }
        awaitPort(port, process, "redis-server", dir);
    }

    /** Waits up to 15 s for a server process to accept connections on a loopback port. */
    static void awaitPort(int port, Process process, String what, Path dir) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (true) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline || !process.isAlive()) {
                    throw new IllegalStateException(what + " on port " + port + " did not start; see " + dir);
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
