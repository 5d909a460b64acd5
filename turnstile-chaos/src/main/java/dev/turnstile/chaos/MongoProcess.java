package dev.turnstile.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The harness's MongoDB-wire server: {@link MongoServerMain} (mongo-java-server over an H2 file that
 * commits every command) in a JVM of its own on a free loopback port, so it can be SIGKILLed,
 * SIGSTOPped and restarted on the same port and file, keeping what it acknowledged.
 */
public final class MongoProcess implements AutoCloseable {
    private final int port;
    private final Path dir;
    private final Path file;
    private Process process;

    /**
     * Starts a server.
     *
     * @param dir where its data file and log go
     */
    public MongoProcess(Path dir) {
        this.port = RedisServer.freePort();
        this.dir = dir;
        this.file = dir.toAbsolutePath().resolve("mongo-" + port + ".mv.db");
        start();
    }

    /** {@code 127.0.0.1:port}. */
    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** Its process id, or -1 when it is not running. */
    public synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** Starts it (again) on the same port and data file. */
    public synchronized void start() {
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", Cluster.workerClassPath(dir.getParent() != null ? dir.getParent() : dir),
                MongoServerMain.class.getName(), Integer.toString(port), file.toString());
        try {
            process = Harness.startInOwnSession(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("mongo-" + port + ".log").toFile())));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start the mongo-java-server JVM", e);
        }
        RedisServer.awaitPort(port, process, "mongo-java-server", dir);
    }

    /** SIGKILLs it: what it committed stays in its file. */
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

    /** SIGKILL and start again at once on the same file. */
    public void restart() {
        kill();
        start();
    }

    @Override
    public void close() {
        kill();
    }
}
