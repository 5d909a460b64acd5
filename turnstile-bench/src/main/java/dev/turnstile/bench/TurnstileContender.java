package dev.turnstile.bench;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import dev.turnstile.spi.LockStore;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Turnstile with a 30 s lease and no keep-alive, over {@link JdbcLockStore} on the shared pool or
 * over any other store (the Redis benchmarks pass a {@code RedisLockStore}).
 */
final class TurnstileContender implements Contender, WaitingContender {
    private static final LockOptions OPTIONS = LockOptions.lockAtMostFor(Duration.ofSeconds(30));

    private final Turnstile turnstile;
    private final LockStore ownedStore;

    TurnstileContender(DataSource dataSource) {
        this(JdbcLockStore.builder(dataSource).build(), false);
    }

    /**
     * @param store the store to lock on
     * @param closeStore whether {@link #close()} closes the store too (when it was opened for this
     *     contender alone, as a hand-off child's is)
     */
    TurnstileContender(LockStore store, boolean closeStore) {
        this(store, closeStore, "TURNSTILE");
    }

    /**
     * @param store the store to lock on
     * @param closeStore whether {@link #close()} closes the store too
     * @param id the label in tables (when one run compares two set-ups of Turnstile)
     */
    TurnstileContender(LockStore store, boolean closeStore, String id) {
        this.turnstile = Turnstile.builder(store).build();
        this.ownedStore = closeStore ? store : null;
        this.id = id;
    }

    private final String id;

    @Override
    public String id() {
        return id;
    }

    @Override
    public boolean acquireRelease(String lockName) {
        Optional<Lease> lease = turnstile.tryAcquire(lockName, OPTIONS);
        return lease.isPresent() && lease.get().release() == ReleaseOutcome.RELEASED;
    }

    @Override
    public Held acquire(String lockName, Duration maxWait) throws InterruptedException {
        Lease lease = turnstile.acquire(lockName, OPTIONS, maxWait)
                .orElseThrow(() -> new IllegalStateException("lock '" + lockName + "' stayed busy for " + maxWait));
        return () -> {
            ReleaseOutcome outcome = lease.release();
            if (outcome != ReleaseOutcome.RELEASED) {
                throw new IllegalStateException("release of '" + lockName + "' returned " + outcome);
            }
        };
    }

    @Override
    public void close() {
        turnstile.close();
        if (ownedStore != null) {
            ownedStore.close();
        }
    }
}
