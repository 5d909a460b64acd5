package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** turnstile prune: on the embedded store, PostgreSQL and Redis; what it refuses and what it never creates. */
class PruneCommandTest {
    @TempDir Path dir;

    private static final LockOptions MINUTE = LockOptions.lockAtMostFor(Duration.ofMinutes(1));

    @Test
    void prunesFreeNamesOnTheEmbeddedStoreAndKeepsHeldOnes() throws Exception {
        Cli cli = new Cli(dir);
        assertThat(cli.run("prune", "--unused-for", "0s").out()).as("no file yet: nothing to prune, nothing created")
                .contains("pruned 0 lock names unused for 0ms");
        assertThat(cli.embeddedDb()).doesNotExist();
        for (int i = 0; i < 3; i++) {
            assertThat(cli.run("run", "--lock", "tenant-" + i, "--", "true").code()).isZero();
        }
        try (LockStore store = LockStores.open(cli.embeddedUrl())) {
            Turnstile held = Turnstile.builder(store).build();
            var lease = held.tryAcquire("held-one", MINUTE).orElseThrow();
            Thread.sleep(20);
            Cli.Result r = cli.run("prune", "--unused-for", "0s");
            assertThat(r.code()).as(r.all()).isZero();
            assertThat(r.out()).contains("pruned 3 lock names unused for 0ms");
            assertThat(cli.run("locks").out()).contains("held-one");
            long fence = lease.fence();
            lease.release();
            assertThat(cli.run("prune", "--unused-for", "7d").out()).contains("pruned 0 lock names unused for 168h");
            Path fenceFile = dir.resolve("fence.txt");
            assertThat(cli.run("run", "--lock", "tenant-1", "--", "sh", "-c", "echo $TURNSTILE_FENCE > " + fenceFile).code()).isZero();
            assertThat(java.nio.file.Files.readString(fenceFile).strip()).as("a pruned name's next fence is above the floor")
                    .isEqualTo("2");
            assertThat(fence).isEqualTo(1);
        }
    }

    @Test
    void prunesOnPostgresWithoutCreatingATable() throws Exception {
        Cli cli = new Cli(dir);
        String table = "prune_cli_" + UUID.randomUUID().toString().substring(0, 8);
        String url = RunCommandTest.PG + "&turnstile.table=" + table;
        Cli.Result missing = cli.run("prune", "--store", url, "--unused-for", "1d");
        assertThat(missing.code()).as(missing.all()).isEqualTo(69);
        assertThat(missing.err()).contains(table);
        assertThat(cli.run("schema", "--store", url, "--apply").code()).isZero();
        assertThat(cli.run("run", "--store", url, "--lock", "a", "--", "true").code()).isZero();
        Thread.sleep(20);
        assertThat(cli.run("prune", "--store", url, "--unused-for", "1d").out()).contains("pruned 0 lock names");
        assertThat(cli.run("prune", "--store", url, "--unused-for", "1ms").out()).contains("pruned 1 lock name unused for 1ms");
        try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test?user=postgres");
                Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table + " WHERE name = 'a'")) {
                rs.next();
                assertThat(rs.getLong(1)).isZero();
            }
            s.execute("DROP TABLE " + table);
        }
    }

    @Test
    void prunesOnRedis() throws Exception {
        Cli cli = new Cli(dir);
        String prefix = "prune" + UUID.randomUUID().toString().substring(0, 8) + ":";
        String url = RedisRunTest.REDIS + "?turnstile.prefix=" + prefix;
        assertThat(cli.run("run", "--store", url, "--lock", "r", "--", "true").code()).isZero();
        Thread.sleep(20);
        assertThat(cli.run("prune", "--store", url, "--unused-for", "10ms").out()).contains("pruned 1 lock name unused for 10ms");
        assertThat(cli.run("prune", "--store", url, "--unused-for", "10ms").out()).contains("pruned 0 lock names");
    }

    @Test
    void badDurationsAndStoresThatCannotPruneAreRefused() throws Exception {
        Cli cli = new Cli(dir);
        for (String bad : new String[] {"-1s", "367d", "P400D", "7x", "", "1e3s", "٣d"}) {
            Cli.Result r = cli.run("prune", "--unused-for", bad);
            assertThat(r.code()).as(bad + ": " + r.all()).isEqualTo(64);
            assertThat(r.err()).as(bad).contains("--unused-for");
        }
        Cli.Result none = cli.run("prune");
        assertThat(none.code()).isEqualTo(64);
        assertThat(none.err()).contains("Missing required option: '--unused-for=DURATION'");
        try (TestingServer server = new TestingServer(true)) {
            Cli.Result zk = cli.run("prune", "--store", "zookeeper://" + server.getConnectString() + "/p", "--unused-for", "1d");
            assertThat(zk.code()).as(zk.all()).isEqualTo(64);
            assertThat(zk.err()).contains("ZooKeeper keeps nothing for a free name");
        }
        assertThat(cli.embeddedDb()).doesNotExist();
    }
}
