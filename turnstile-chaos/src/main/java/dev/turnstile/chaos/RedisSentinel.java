package dev.turnstile.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Sentinel process of the harness's own, watching one master with quorum 1, quick to act:
 * the master counts as down after 1 s without an answer, and a failed failover is retried after 4 s.
 */
public final class RedisSentinel implements AutoCloseable {
    /** The master's name, as the store URL gives it ({@code #chaos}). */
    public static final String MASTER_NAME = "chaos";

    private final int port;
    private final Process process;

    /**
     * Starts a Sentinel watching a master.
     *
     * @param dir where its configuration and log go
     * @param masterPort the master's port on 127.0.0.1
     */
    public RedisSentinel(Path dir, int masterPort) {
        port = RedisServer.freePort();
        Path conf = dir.resolve("sentinel-" + port + ".conf");
        try {
            Files.writeString(conf, "port " + port + "\nbind 127.0.0.1\ndir " + dir + "\n"
                    + "sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + masterPort + " 1\n"
                    + "sentinel down-after-milliseconds " + MASTER_NAME + " 1000\n"
                    + "sentinel failover-timeout " + MASTER_NAME + " 2000\n");
            process = Harness.startInOwnSession(new ProcessBuilder("redis-server", conf.toString(), "--sentinel", "--daemonize", "no",
                    "--logfile", dir.resolve("sentinel-" + port + ".log").toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("sentinel-" + port + ".out").toFile())));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start redis-server --sentinel", e);
        }
        RedisServer.awaitPort(port, process, "redis sentinel", dir);
    }

    /** {@code 127.0.0.1:port}. */
    public String hostPort() {
        return "127.0.0.1:" + port;
    }

    /** The port Sentinel names as the master's now. */
    public int masterPort() {
        String out = Harness.exec(List.of("redis-cli", "-p", Integer.toString(port), "SENTINEL", "get-master-addr-by-name",
                MASTER_NAME), 10).trim();
        String[] lines = out.split("\\s+");
        return lines.length == 2 ? Integer.parseInt(lines[1]) : -1;
    }

    /** How many replicas of the master Sentinel knows and considers up. */
    public int replicasUp() {
        String out = Harness.exec(List.of("redis-cli", "-p", Integer.toString(port), "SENTINEL", "replicas", MASTER_NAME), 10);
        int up = 0;
        String[] lines = out.split("\n");
        for (int i = 0; i + 1 < lines.length; i++) {
            if (lines[i].trim().equals("flags") && lines[i + 1].trim().equals("slave")) {
                up++;
            }
        }
        return up;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
