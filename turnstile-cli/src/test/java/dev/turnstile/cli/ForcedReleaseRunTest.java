package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code release --force} stops a running {@code turnstile run} within about a second where the
 * store tells the holder (Redis pub/sub, ZooKeeper's watch on the lease node, PostgreSQL
 * LISTEN/NOTIFY), not at its next renewal (a third of the TTL: 10 s here); and the run exits 70,
 * never 0. On SQLite, which tells no one, the renewal finds it.
 */
class ForcedReleaseRunTest {
    private static final Duration TTL = Duration.ofSeconds(30);

    @TempDir Path dir;

    @Test
    void onRedis() throws Exception {
        assertStoppedPromptly(RedisRunTest.REDIS, Duration.ofMillis(1_500));
    }

    @Test
    void onPostgres() throws Exception {
        assertStoppedPromptly("jdbc:postgresql://127.0.0.1:5432/test?user=postgres&turnstile.table=forced_locks"
                + "&turnstile.createTable=true", Duration.ofMillis(1_500));
    }

    @Test
    void onZooKeeper() throws Exception {
        try (TestingServer server = new TestingServer(true)) {
            assertStoppedPromptly("zookeeper://" + server.getConnectString() + "/cli-forced", Duration.ofMillis(1_500));
        }
    }

    @Test
    void onSqliteAtTheNextRenewal() throws Exception {
        Cli cli = new Cli(dir);
        String url = "jdbc:sqlite:" + dir.resolve("forced.db") + "?turnstile.createTable=true";
        // a TTL of 3 s renews every second: found by the renewal, not told
        assertStopped(cli, url, Duration.ofSeconds(3), Duration.ofMillis(2_500));
    }

    private void assertStoppedPromptly(String url, Duration within) throws Exception {
        assertStopped(new Cli(dir), url, TTL, within);
    }

    private void assertStopped(Cli cli, String url, Duration ttl, Duration within) throws Exception {
        String lock = "forced-" + UUID.randomUUID().toString().substring(0, 8);
        Path started = dir.resolve(lock + ".started");
        Process run = cli.spawn(Map.of(), "run", "--store", url, "--lock", lock, "--ttl", ttl.toMillis() + "ms",
                "--grace", "200ms", "--", "sh", "-c", "touch '" + started + "'; exec sleep 60");
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.exists(started)) {
                assertThat(run.isAlive()).as("the run is still going (log: %s)", log()).isTrue();
                assertThat(System.nanoTime() - deadline).as("the command started").isNegative();
                Thread.sleep(20);
            }
            Thread.sleep(500); // the holder's watch is set off the acquire's path
            long forced = System.nanoTime();
            Cli.Result release = cli.run("release", "--force", "--store", url, lock);
            assertThat(release.code()).as(release.all()).isZero();
            assertThat(run.waitFor(20, TimeUnit.SECONDS)).as("the run ended (log: %s)", log()).isTrue();
            Duration took = Duration.ofNanos(System.nanoTime() - forced);
            assertThat(run.exitValue()).as("lease lost: exit 70 (log: %s)", log()).isEqualTo(70);
            assertThat(took).as("stopped after the forced release (log: %s)", log()).isLessThan(within);
        } finally {
            run.destroyForcibly();
        }
    }

    private String log() throws Exception {
        Path log = dir.resolve("spawned.log");
        return Files.exists(log) ? Files.readString(log) : "(none)";
    }
}
