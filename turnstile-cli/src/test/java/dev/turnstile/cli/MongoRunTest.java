package dev.turnstile.cli;

import static org.assertj.core.api.Assertions.assertThat;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.LockStores;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** turnstile run, locks and release on MongoDB (mongo-java-server in this JVM, reached over TCP). */
class MongoRunTest {
    private static MongoServer server;
    private static String url;

    @TempDir Path dir;

    @BeforeAll
    static void start() {
        server = new MongoServer(new MemoryBackend());
        server.bind("127.0.0.1", 0);
        url = "mongodb://127.0.0.1:" + server.getLocalAddress().getPort() + "/cli_test";
    }

    @AfterAll
    static void stop() {
        server.shutdownNow();
    }

    @Test
    void runLocksAndReleaseOnMongo() {
        Cli cli = new Cli(dir);
        String lock = "cli-" + UUID.randomUUID().toString().substring(0, 8);
        assertThat(cli.run("run", "--store", url, "--lock", lock, "--", "sh", "-c", "test -n \"$TURNSTILE_FENCE\"").code()).isZero();
        try (LockStore store = LockStores.open(url)) {
            Lease held = Turnstile.builder(store).owner("mongo-holder").build()
                    .tryAcquire(lock, LockOptions.lockAtMostFor(Duration.ofMinutes(1))).orElseThrow();
            Cli.Result busy = cli.run("run", "--store", url, "--lock", lock, "--", "true");
            assertThat(busy.code()).isEqualTo(75);
            assertThat(busy.err()).contains("mongo-holder");
            assertThat(cli.run("locks", "--store", url).out()).contains(lock).contains("mongo-holder");
            assertThat(cli.run("release", "--force", "--store", url, lock).code()).isZero();
            assertThat(held.release()).hasToString("NOT_OWNER");
        }
        assertThat(cli.embeddedDb()).as("the embedded store was not touched").doesNotExist();
    }

    @Test
    void badMongoUrlsAreUsageErrorsAndAnUnreachableServerIsUnavailable() {
        Cli cli = new Cli(dir);
        Cli.Result noDb = cli.run("run", "--store", "mongodb://127.0.0.1:27017", "--lock", "x", "--", "true");
        assertThat(noDb.code()).isEqualTo(64);
        assertThat(noDb.err()).contains("names no database");
        assertThat(cli.run("run", "--store", "mongodb://127.0.0.1:99999/app", "--lock", "x", "--", "true").code()).isEqualTo(64);
        assertThat(cli.run("locks", "--store", url + "?turnstile.nope=1").code()).isEqualTo(64);
        Cli.Result down = cli.run("run", "--store", "mongodb://u:hunter2@127.0.0.1:1/app?turnstile.timeout=1s", "--lock", "x", "--", "true");
        assertThat(down.code()).as(down.all()).isEqualTo(69);
        assertThat(down.all()).doesNotContain("hunter2");
        assertThat(cli.embeddedDb()).doesNotExist();
    }
}
