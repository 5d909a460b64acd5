package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.ReleaseOutcome;
import dev.turnstile.spi.LockStore;
import dev.turnstile.testkit.ClockStepHolder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQLite: the database is a file and every process judges time by its own clock (SqliteDialect),
 * so the stepped holder's clock is the store's clock for its own statements: stepped back, its
 * lockAtLeastFor still ends at the acquire's time plus lockAtLeastFor; stepped ahead, it sees its
 * own lease as over and is told so, while the others keep seeing it until its TTL.
 */
class SqliteClockStepTest extends JdbcClockStepSupport {
    @Override String jdbcUrl() { return TestDatabases.SQLITE; }
    @Override protected boolean storeClockIsTheClients() { return true; }

    @TempDir
    Path holderDir;

    /**
     * A holder whose clock ran an hour ahead from before its acquire releases after its minimum
     * hold: the lock is free for everyone at once, not kept for the clock's lead (the release used
     * to write that clock's now as the end).
     */
    @Test
    void aHolderAheadReleasingAfterItsMinimumHoldFreesTheLockAtOnce() throws Exception {
        String name = "ahead-" + UUID.randomUUID();
        try (LockStore observer = newStore()) {
            observer.heldLocks();
            try (ClockStepHolder h = ClockStepHolder.start(storeUrl(), name, Duration.ofSeconds(30), Duration.ofMillis(300), holderDir)) {
                h.stepClock("+1h", 3_600_000L);
                h.acquire();
                TimeUnit.MILLISECONDS.sleep(500);
                assertThat(h.release()).isEqualTo(ReleaseOutcome.RELEASED);
                long released = System.nanoTime();
                Optional<Long> free = ClockStepHolder.firstFree(observer, name, released + TimeUnit.SECONDS.toNanos(2));
                assertThat(free).as("the lock after the ahead holder's release, for a process whose clock is right").isPresent();
            }
        }
    }
}
