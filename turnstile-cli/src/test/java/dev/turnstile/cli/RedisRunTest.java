package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** turnstile run, locks and release on Redis and Redlock. */
class RedisRunTest {
    static final String REDIS = "redis://127.0.0.1:6379";

    @TempDir Path dir;

    @Test
    void runLocksAndReleaseOnRedis() {
        Cli cli = new Cli(dir);
        String lock = "cli-" + UUID.randomUUID().toString().substring(0, 8);
        assertThat(cli.run("run", "--store", REDIS, "--lock", lock, "--", "sh", "-c", "test -n \"$TURNSTILE_FENCE\"").code()).isZero();
        try (LockStore store = LockStores.open(REDIS)) {
            Lease held = Turnstile.builder(store).owner("redis-holder").build()
                    .tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            Cli.Result busy = cli.run("run", "--store", REDIS, "--lock", lock, "--", "true");
            assertThat(busy.code()).isEqualTo(75);
            assertThat(busy.err()).contains("redis-holder");
            assertThat(cli.run("locks", "--store", REDIS).out()).contains(lock).contains("redis-holder");
            assertThat(cli.run("release", "--force", "--store", REDIS, lock).code()).isZero();
            assertThat(held.release()).hasToString("NOT_OWNER");
        }
        assertThat(cli.embeddedDb()).as("the embedded store was not touched").doesNotExist();
    }

    @Test
    void runOnRedlockOverThreeNodes() throws Exception {
        List<Process> servers = new ArrayList<>();
        try {
            List<String> hosts = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                int port;
                try (ServerSocket s = new ServerSocket(0)) {
                    port = s.getLocalPort();
                }
                servers.add(new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no").redirectOutput(dir.resolve("redis-" + port + ".log").toFile()).start());
                awaitPort(port);
                hosts.add("127.0.0.1:" + port);
            }
            String url = "redlock://" + String.join(",", hosts);
            Cli cli = new Cli(dir);
            assertThat(cli.run("run", "--store", url, "--lock", "rl", "--", "true").code()).isZero();
            assertThat(cli.run("run", "--store", url, "--lock", "rl", "--at-least", "5s", "--", "true").code()).isZero();
            assertThat(cli.run("run", "--store", url, "--lock", "rl", "--", "true").code()).as("held by --at-least").isEqualTo(75);
            servers.get(0).destroyForcibly().waitFor();
            servers.get(1).destroyForcibly().waitFor();
            Cli.Result down = cli.run("run", "--store", url, "--lock", "rl2", "--", "true");
            assertThat(down.code()).as(down.all()).isEqualTo(69);
            assertThat(down.err()).contains("Redlock nodes answered");
        } finally {
            servers.forEach(Process::destroyForcibly);
        }
    }

    @Test
    void badRedisUrlsAreUsageErrors() {
        Cli cli = new Cli(dir);
        assertThat(cli.run("run", "--store", "redlock://127.0.0.1:1,127.0.0.1:2", "--lock", "x", "--", "true").code()).isEqualTo(64);
        assertThat(cli.run("run", "--store", "redis://127.0.0.1:6379?turnstile.nope=1", "--lock", "x", "--", "true").code()).isEqualTo(64);
        Cli.Result unreachable = cli.run("run", "--store", "redis://:hunter2@127.0.0.1:1?turnstile.timeout=1s", "--lock", "x", "--", "true");
        assertThat(unreachable.code()).isEqualTo(69);
        assertThat(unreachable.all()).doesNotContain("hunter2");
    }

    /** Attack finding 2: {@code run} names the connect's cause first, as {@code locks} does. */
    @Test
    void runNamesTheConnectCause() {
        Cli cli = new Cli(dir);
        String[][] cases = {
            {"redis://127.0.0.1:6379/99", "that database number does not exist"},
            {"redis://127.0.0.1:1", "connection refused"},
            {"redis://no-such-host.invalid:6379", "unknown host"},
        };
        for (String[] c : cases) {
            Cli.Result r = cli.run("run", "--store", c[0], "--lock", "cause", "--", "true");
            assertThat(r.code()).as(r.all()).isEqualTo(69);
            assertThat(r.err()).as(c[0]).contains(c[1]);
        }
    }

    /**
     * Attack report, cosmetic: under run, a firewalled Redis printed a netty stack trace ("Failed
     * to submit a listener notification task") before the one-line error. The CLI silences the
     * driver's logging unless --verbose; the error names the cause in one line.
     */
    @Test
    void aFirewalledRedisGivesOneLineAndNoStackTrace() throws Exception {
        try (ServerSocket full = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            List<Socket> filling = new ArrayList<>();
            try {
                for (int i = 0; i < 8; i++) {
                    Socket s = new Socket();
                    filling.add(s);
                    s.connect(full.getLocalSocketAddress(), 300);
                }
            } catch (java.net.SocketTimeoutException dropped) {
                // the backlog is full: further SYNs are dropped, as by a firewall
            }
            try {
                Cli cli = new Cli(dir);
                for (int i = 0; i < 2; i++) {
                    Process p = cli.spawn(Map.of(), "run", "--store", "redis://127.0.0.1:" + full.getLocalPort()
                            + (i == 0 ? "?turnstile.connectTimeout=1s" : ""), "--lock", "fw", "--", "true");
                    assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                    assertThat(p.exitValue()).isEqualTo(69);
                }
                // and a Sentinel that refuses: Lettuce's own [WARN] line was a second line before the error
                Process sentinel = cli.spawn(Map.of(), "locks", "--store", "redis-sentinel://127.0.0.1:1#mymaster");
                assertThat(sentinel.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                assertThat(sentinel.exitValue()).isEqualTo(69);
                String out = java.nio.file.Files.readString(dir.resolve("spawned.log"));
                assertThat(out).contains("is a Sentinel running").contains("a firewall drops it").doesNotContain("\tat ").doesNotContain("Failed to submit")
                        .doesNotContain("WARN");
            } finally {
                for (Socket s : filling) {
                    s.close();
                }
            }
        }
    }

    static void awaitPort(int port) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return;
            } catch (IOException e) {
                Thread.sleep(20);
            }
        }
        throw new IllegalStateException("redis-server did not start on " + port);
    }
}
