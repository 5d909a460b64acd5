package dev.turnstile.chaos;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Real ZooKeeper servers (Debian's {@code zookeeper} 3.8 package, started as
 * {@code java -cp zookeeper.jar QuorumPeerMain zoo.cfg}), each in a process of its own with its own
 * config, loopback ports and data directory under the run directory: one standalone server, or an
 * ensemble of three. The harness can SIGKILL, SIGSTOP/SIGCONT and restart each server on the same
 * ports and data directory (ZooKeeper syncs its transaction log before it answers, so what it
 * acknowledged survives the kill).
 *
 * <p>{@code tickTime} is 100 ms, so the servers accept session timeouts from 200 ms to 2 s and
 * expire a silent client's session within a tick of its timeout; the admin server is off and only
 * the {@code srvr}, {@code stat} and {@code ruok} four-letter words are on ({@link #mode} uses
 * {@code srvr} to find the leader).
 */
public final class ZooKeeperProcess implements AutoCloseable {
    /** The server jar; its manifest names the other jars of Debian's package. */
    static final Path JAR = Path.of(System.getProperty("turnstile.chaos.zookeeperJar", "/usr/share/java/zookeeper.jar"));
    /** A logging binding for the server's own log (same version as the package's slf4j-api); left out if missing. */
    private static final Path SLF4J_SIMPLE = Path.of("/usr/share/java/slf4j-simple.jar");
    /** ZooKeeper's tick: sessions are checked and expired on tick boundaries. */
    static final int TICK_MS = 100;

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();

    /** One server: its ports, files and process. */
    private static final class Node {
        final int id;
        final int clientPort;
        final int quorumPort;
        final int electionPort;
        final Path dataDir;
        final Path config;
        final Path log;
        Process process;

        Node(int id, Path dir) {
            this.id = id;
            this.clientPort = RedisServer.freePort();
            this.quorumPort = RedisServer.freePort();
            this.electionPort = RedisServer.freePort();
            this.dataDir = dir.resolve("zk-" + clientPort);
            this.config = dir.resolve("zk-" + clientPort + ".cfg");
            this.log = dir.resolve("zk-" + clientPort + ".log");
        }
    }

    private ZooKeeperProcess(Path dir, int size) {
        if (!Files.isRegularFile(JAR)) {
            throw new IllegalStateException("no ZooKeeper server at " + JAR + ": install Debian's zookeeper package "
                    + "(scripts/services.sh does), or point -Dturnstile.chaos.zookeeperJar at a zookeeper 3.8 jar");
        }
        this.dir = dir.toAbsolutePath();
        for (int i = 1; i <= size; i++) {
            nodes.add(new Node(i, this.dir));
        }
        try {
            for (Node n : nodes) {
                writeConfig(n);
            }
            for (int i = 0; i < size; i++) {
                launch(i);
            }
            awaitServing(30);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Starts one standalone server and waits until it serves.
     *
     * @param dir the run directory (config, data directory and log go there)
     * @return the running server
     */
    public static ZooKeeperProcess standalone(Path dir) {
        return new ZooKeeperProcess(dir, 1);
    }

    /**
     * Starts a three-server ensemble and waits until every server serves (a leader is elected and
     * both followers have joined it).
     *
     * @param dir the run directory
     * @return the running ensemble
     */
    public static ZooKeeperProcess ensemble(Path dir) {
        return new ZooKeeperProcess(dir, 3);
    }

    private void writeConfig(Node n) {
        StringBuilder cfg = new StringBuilder()
                .append("tickTime=").append(TICK_MS).append('\n')
                // a follower has 2 s to sync with a new leader and 1 s of silence before it is dropped
                .append("initLimit=20\nsyncLimit=10\n")
                .append("dataDir=").append(n.dataDir).append('\n')
                .append("clientPort=").append(n.clientPort).append('\n')
                .append("clientPortAddress=127.0.0.1\n")
                .append("admin.enableServer=false\n")
                .append("4lw.commands.whitelist=srvr,stat,ruok\n")
                // the harness's runs are short: no purge thread, no JMX
                .append("autopurge.purgeInterval=0\n")
                .append("jmx.enabled=false\n");
        if (nodes.size() > 1) {
            for (Node o : nodes) {
                cfg.append("server.").append(o.id).append("=127.0.0.1:").append(o.quorumPort).append(':').append(o.electionPort)
                        .append('\n');
            }
        }
        try {
            Files.createDirectories(n.dataDir);
            Files.writeString(n.dataDir.resolve("myid"), n.id + "\n");
            Files.writeString(n.config, cfg.toString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private synchronized void launch(int i) {
        Node n = nodes.get(i);
        String cp = JAR + (Files.isRegularFile(SLF4J_SIMPLE) ? java.io.File.pathSeparator + SLF4J_SIMPLE : "");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx128m",
                "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-Dzookeeper.admin.enableServer=false",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", cp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", n.config.toString());
        try {
            n.process = Harness.startInOwnSession(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(n.log.toFile())));
        } catch (IOException e) {
            throw new IllegalStateException("cannot start ZooKeeper server " + n.id, e);
        }
    }

    /** How many servers: 1 (standalone) or 3. */
    public int size() {
        return nodes.size();
    }

    /** Every server's {@code 127.0.0.1:port}, in server-id order. */
    public List<String> hostPorts() {
        return nodes.stream().map(n -> "127.0.0.1:" + n.clientPort).toList();
    }

    /**
     * A server's process id.
     *
     * @param i the server's index (0-based)
     * @return its pid, or -1 when it is not running
     */
    public synchronized long pid(int i) {
        Process p = nodes.get(i).process;
        return p == null ? -1 : p.pid();
    }

    /**
     * SIGKILLs one server.
     *
     * @param i the server's index
     */
    public synchronized void kill(int i) {
        Node n = nodes.get(i);
        if (n.process != null) {
            n.process.destroyForcibly();
            try {
                n.process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            n.process = null;
        }
    }

    /**
     * Starts one server again on its ports and data directory, and waits until it serves (in an
     * ensemble: has joined a leader).
     *
     * @param i the server's index
     */
    public void start(int i) {
        launch(i);
        awaitServing(i, 30);
    }

    /** SIGKILLs every server and starts them again on the same data, then waits until all serve. */
    public void restart() {
        for (int i = 0; i < nodes.size(); i++) {
            kill(i);
        }
        for (int i = 0; i < nodes.size(); i++) {
            launch(i);
        }
        awaitServing(30);
    }

    /**
     * What a server says it is, by the {@code srvr} four-letter word.
     *
     * @param i the server's index
     * @return {@code leader}, {@code follower} or {@code standalone}; {@code null} when it does not
     *     answer or is not serving (no quorum, election under way)
     */
    public String mode(int i) {
        String answer = fourLetterWord(nodes.get(i).clientPort, "srvr");
        if (answer == null) {
            return null;
        }
        for (String line : answer.split("\n")) {
            if (line.startsWith("Mode:")) {
                return line.substring("Mode:".length()).trim();
            }
        }
        return null;
    }

    /** The index of the server that says it leads (or the standalone server), or -1 if none does. */
    public int leader() {
        for (int i = 0; i < nodes.size(); i++) {
            if (pid(i) < 0) {
                continue;
            }
            String m = mode(i);
            if ("leader".equals(m) || "standalone".equals(m)) {
                return i;
            }
        }
        return -1;
    }

    /** Waits until every running server serves. */
    private void awaitServing(int seconds) {
        for (int i = 0; i < nodes.size(); i++) {
            awaitServing(i, seconds);
        }
    }

    private void awaitServing(int i, int seconds) {
        Node n = nodes.get(i);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (mode(i) == null) {
            Process p;
            synchronized (this) {
                p = n.process;
            }
            if (p == null || !p.isAlive()) {
                throw new IllegalStateException("ZooKeeper server " + n.id + " exited; see " + n.log);
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("ZooKeeper server " + n.id + " did not serve on 127.0.0.1:" + n.clientPort
                        + " within " + seconds + " s; see " + n.log);
            }
            Harness.sleep(50);
        }
    }

    /**
     * Sends a four-letter word and returns the answer, or null if the server does not answer within
     * 1 s (a live server answers in milliseconds; a SIGSTOPped one accepts the connection in the
     * kernel and never answers, and callers poll, so a short wait costs nothing).
     */
    static String fourLetterWord(int port, String word) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            s.setSoTimeout(1000);
            OutputStream out = s.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            in.transferTo(buf);
            String answer = buf.toString(StandardCharsets.UTF_8);
            // a server without quorum answers "This ZooKeeper instance is not currently serving requests"
            return answer.contains("Mode:") ? answer : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public void close() {
        for (int i = 0; i < nodes.size(); i++) {
            kill(i);
        }
    }
}
