package dev.turnstile.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * PostgreSQL's forced-release notice reaches the holder when the two sides spell the table
 * differently ({@code public.locks} and {@code locks}: one table), as the attack found it did not.
 */
class PostgresForcedReleaseTest {

    @Test
    void aHolderIsToldWhateverSchemaSpellingEachSideUses() throws Exception {
        String table = "forced_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String base = TestDatabases.with(TestDatabases.POSTGRES, "turnstile.createTable=true");
        try (LockStore holderStore = new JdbcLockStoreFactory().open(TestDatabases.with(base, "turnstile.table=public." + table));
                LockStore adminStore = new JdbcLockStoreFactory().open(TestDatabases.with(base, "turnstile.table=" + table));
                Turnstile holder = Turnstile.builder(holderStore).build();
                Turnstile admin = Turnstile.builder(adminStore).build()) {
            String name = "spelled";
            CompletableFuture<Long> told = new CompletableFuture<>();
            Lease lease = holder.tryAcquire(name, LockOptions.builder().lockAtMostFor(Duration.ofSeconds(30)).keepAlive(true)
                    .onLost(loss -> told.complete(System.nanoTime())).build()).orElseThrow();
            Thread.sleep(700); // the listener starts once the lease has lived 200 ms
            long forced = System.nanoTime();
            assertThat(admin.forceRelease(name)).isTrue();
            long at = told.get(5, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(at - forced)).as("told by NOTIFY, not at a renewal (10 s)").isLessThan(Duration.ofSeconds(1));
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.NOT_OWNER);
        }
    }
}
