package dev.turnstile.redis;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Extra {@code redis-server} processes for the tests (cluster, Sentinel, Redlock nodes), on free
 * loopback ports, without persistence; stopped by {@link #close()} or at JVM exit at the latest.
 * The machine's own Redis on 6379 serves the standalone tests.
 */
final class RedisServers implements AutoCloseable {
    static final String STANDALONE = System.getProperty("turnstile.test.redis", "redis://127.0.0.1:6379");

    private final List<Node> nodes = new ArrayList<>();
    private final Path dir;

    /** One server process. */
    static final class Node {
        final int port;
        Process process;
        final List<String> command;

        Node(int port, List<String> command) {
            this.port = port;
            this.command = command;
        }

        String hostPort() {
            return "127.0.0.1:" + port;
        }

        long pid() {
            return process.pid();
        }
    }

    RedisServers() {
        try {
            dir = Files.createTempDirectory("turnstile-redis");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(this::close));
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    Node server(String... extra) {
        int port = freePort();
        List<String> cmd = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--daemonize", "no",
                "--logfile", dir.resolve("redis-" + port + ".log").toString()));
        cmd.addAll(List.of(extra));
        Node n = new Node(port, cmd);
        start(n);
        return n;
    }

    Node sentinel(Node master, String masterName) throws IOException {
        int port = freePort();
        Path conf = dir.resolve("sentinel-" + port + ".conf");
        Files.writeString(conf, "port " + port + "\nbind 127.0.0.1\nsentinel monitor " + masterName + " 127.0.0.1 "
                + master.port + " 1\nsentinel down-after-milliseconds " + masterName + " 5000\n");
        Node n = new Node(port, List.of("redis-server", conf.toString(), "--sentinel", "--daemonize", "no",
                "--logfile", dir.resolve("sentinel-" + port + ".log").toString()));
        start(n);
        return n;
    }

    /** A cluster of that many masters without replicas, slots assigned and agreed. */
    List<Node> cluster(int masters) throws Exception {
        return cluster(masters, 0);
    }

    /** A cluster of that many masters, each with that many replicas, slots assigned and agreed. */
    List<Node> cluster(int masters, int replicasEach) throws Exception {
        List<Node> members = new ArrayList<>();
        List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        for (int i = 0; i < masters * (1 + replicasEach); i++) {
            int p = freePort();
            Node n = server("--cluster-enabled", "yes", "--cluster-config-file", dir.resolve("nodes-" + p + ".conf").toString(),
                    "--cluster-node-timeout", "5000");
            members.add(n);
            create.add(n.hostPort());
        }
        create.addAll(List.of("--cluster-replicas", Integer.toString(replicasEach), "--cluster-yes"));
        exec(create);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (Node n : members) {
            while (!exec(List.of("redis-cli", "-p", Integer.toString(n.port), "cluster", "info")).contains("cluster_state:ok")) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("cluster did not reach state ok; logs in " + dir);
                }
                Thread.sleep(100);
            }
        }
        return members;
    }

    void start(Node n) {
        try {
            n.process = new ProcessBuilder(n.command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("out-" + n.port + ".log").toFile())).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start redis-server (is it installed? scripts/services.sh installs it)", e);
        }
        synchronized (nodes) {
            if (!nodes.contains(n)) {
                nodes.add(n);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", n.port)) {
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline || !n.process.isAlive()) {
                    throw new IllegalStateException("redis-server on port " + n.port + " did not start; logs in " + dir);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(ie);
                }
            }
        }
    }

    void kill(Node n) throws InterruptedException {
        n.process.destroyForcibly();
        n.process.waitFor();
    }

    static void signal(Node n, String signal) throws Exception {
        if (n.process.isAlive()) {
            exec(List.of("kill", "-" + signal, Long.toString(n.pid())));
        }
    }

    /**
     * Waits until {@code master}'s replica acknowledges a write within 150 ms. "online" on the
     * master's side is not yet an acknowledging replica: for about half a second after the sync a
     * write's WAIT can time out (one fresh pair in five here). The write (FLUSHALL: keyless, so any
     * master takes it on a plain connection; call it before a test writes) and its WAIT go on one
     * connection: a WAIT on a connection that wrote nothing returns at once, whatever the replica does.
     */
    static void awaitAcknowledgingReplica(Node master) {
        io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create("redis://" + master.hostPort());
        try (var connection = client.connect()) {
            var sync = connection.sync();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                    .pollInterval(java.time.Duration.ofMillis(50)).until(() -> {
                        sync.flushall();
                        return sync.waitForReplication(1, 150) == 1;
                    });
        } finally {
            client.shutdown();
        }
    }

    static String exec(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        }
        return out;
    }

    @Override
    public void close() {
        synchronized (nodes) {
            for (Node n : nodes) {
                if (n.process != null) {
                    n.process.destroyForcibly();
                }
            }
            nodes.clear();
        }
    }
}
