package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** turnstile run, locks and release on ZooKeeper (Curator's in-JVM testing server). */
class ZooKeeperRunTest {
    @TempDir Path dir;

    @Test
    void runLocksAndReleaseOnZooKeeper() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            String url = "zookeeper://" + server.getConnectString() + "/cli-test";
            Cli cli = new Cli(dir);
            String lock = "cli-" + UUID.randomUUID().toString().substring(0, 8);
            assertThat(cli.run("run", "--store", url, "--lock", lock, "--", "sh", "-c", "test -n \"$TURNSTILE_FENCE\"").code()).isZero();
            try (LockStore store = LockStores.open(url)) {
                Lease held = Turnstile.builder(store).owner("zk-holder").build()
                        .tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
                Cli.Result busy = cli.run("run", "--store", url, "--lock", lock, "--", "true");
                assertThat(busy.code()).isEqualTo(75);
                assertThat(busy.err()).contains("zk-holder");
                assertThat(cli.run("locks", "--store", url).out()).contains(lock).contains("zk-holder");
                assertThat(cli.run("release", "--force", "--store", url, lock).code()).isZero();
                assertThat(held.release()).hasToString("NOT_OWNER");
            }
            assertThat(cli.embeddedDb()).as("the embedded store was not touched").doesNotExist();
        }
    }

    /**
     * A ZooKeeper lease is known held only for the session timeout (less a margin) after the last
     * contact, whatever the TTL: the grace must fit in half of that. Needs the session-bound
     * {@code Lease.timeLeft()} of the ZooKeeper store (issue 22 item 2): with a TTL-based timeLeft
     * the 5 s grace fits in the 30 s TTL and the run is not refused.
     */
    @Test
    void aGraceThatDoesNotFitInTheSessionIsRefusedAndTheDefaultShortened() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            String url = "zookeeper://" + server.getConnectString() + "/cli-test?turnstile.sessionTimeout=6s";
            Cli cli = new Cli(dir);
            Path ran = dir.resolve("ran");
            Cli.Result refused = cli.run("run", "--store", url, "--lock", "graced", "--ttl", "30s", "--grace", "5s", "--",
                    "touch", ran.toString());
            assertThat(refused.code()).as(refused.all()).isEqualTo(64);
            assertThat(refused.err()).contains("--grace 5s").contains("session");
            assertThat(ran).doesNotExist();
            Cli.Result fits = cli.run("run", "--store", url, "--lock", "graced", "--ttl", "30s", "--", "touch", ran.toString());
            assertThat(fits.code()).as("released after the refusal; the default grace shortened: " + fits.all()).isZero();
            assertThat(ran).exists();
        }
    }

    @Test
    void anUnreachableEnsembleIs69AndAMalformedUrl64() {
        Cli cli = new Cli(dir);
        Cli.Result down = cli.run("run", "--store", "zookeeper://127.0.0.1:1,127.0.0.1:2/x?turnstile.connectTimeout=500ms",
                "--lock", "x", "--", "true");
        assertThat(down.code()).as(down.all()).isEqualTo(69);
        assertThat(down.err()).contains("store unavailable");
        Cli.Result bad = cli.run("run", "--store", "zookeeper://h1:2181,,h2/x", "--lock", "x", "--", "true");
        assertThat(bad.code()).as(bad.all()).isEqualTo(64);
        assertThat(bad.err()).contains("host[:port]");
    }
}
