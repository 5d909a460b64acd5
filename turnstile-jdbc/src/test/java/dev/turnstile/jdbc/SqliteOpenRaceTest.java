package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.turnstile.spi.LockStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Several stores opening one new SQLite file at the same moment all open it (CI once failed
 * {@code turnstile run}'s test with SQLITE_IOERR_DELETE_NOENT when the test and the command opened
 * the embedded file together; before, 19 of 800 such opens failed).
 */
class SqliteOpenRaceTest {
    // 60 rounds of four: without turns and retry about 2 % of opens failed, so all 240 passing by
    // chance is under one in a hundred. With turns alone, 2,000 opens passed.
    @TempDir Path dir;

    @Test
    void storesOpeningOneNewFileTogetherAllOpenIt() throws Exception {
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<String> failures = new ArrayList<>();
        try {
            for (int round = 0; round < 60; round++) {
                Path db = Files.createDirectories(dir.resolve("r" + round)).resolve("locks.db");
                CyclicBarrier together = new CyclicBarrier(threads);
                List<Future<LockStore>> opens = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    opens.add(pool.submit(() -> {
                        together.await();
                        return new JdbcLockStoreFactory().open("jdbc:sqlite:" + db);
                    }));
                }
                for (Future<LockStore> open : opens) {
                    try {
                        open.get().close();
                    } catch (ExecutionException e) {
                        failures.add(String.valueOf(e.getCause()));
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void aLostRaceIsTriedAgainUntilTheOpenSucceeds() throws Exception {
        try (Connection connection = DriverManager.getConnection("jdbc:sqlite::memory:")) {
            AtomicInteger tries = new AtomicInteger();
            Connection opened = SqliteOpenRace.open("test.db", () -> {
                int n = tries.incrementAndGet();
                if (n == 1) {
                    throw new SQLException("[SQLITE_BUSY] The database file is locked (database is locked)", null, 5);
                }
                if (n == 2) {
                    throw new SQLException("[SQLITE_IOERR_DELETE_NOENT] The file being deleted does not exist", null, 10);
                }
                if (n == 3) {
                    throw new SQLException("[SQLITE_IOERR_FSTAT] I/O error in the VFS layer while trying to invoke fstat()",
                            null, 10);
                }
                return connection;
            }, Duration.ofSeconds(5));
            assertThat(opened).isSameAs(connection);
            assertThat(tries).hasValue(4);
        }
    }

    @Test
    void anyOtherFailureIsReportedAtOnce() {
        AtomicInteger tries = new AtomicInteger();
        assertThatThrownBy(() -> SqliteOpenRace.open("test.db", () -> {
            tries.incrementAndGet();
            throw new SQLException("[SQLITE_IOERR_WRITE] disk I/O error", null, 10);
        }, Duration.ofSeconds(5))).hasMessageContaining("SQLITE_IOERR_WRITE");
        assertThat(tries).hasValue(1);
    }

    @Test
    void aRaceThatOutlastsTheBudgetReportsItsLastFailure() {
        AtomicInteger tries = new AtomicInteger();
        assertThatThrownBy(() -> SqliteOpenRace.open("test.db", () -> {
            throw new SQLException("[SQLITE_BUSY] try " + tries.incrementAndGet(), null, 5);
        }, Duration.ofMillis(100))).hasMessage("[SQLITE_BUSY] try " + tries.get());
        assertThat(tries.get()).isGreaterThan(1);
    }
}
