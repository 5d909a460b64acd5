package dev.turnstile.bench;

import dev.turnstile.Lease;
import dev.turnstile.LockOptions;
import dev.turnstile.ReleaseOutcome;
import dev.turnstile.Turnstile;
import dev.turnstile.jdbc.JdbcLockStore;
import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;

/** Turnstile over {@link JdbcLockStore} on the shared pool, with a 30 s lease and no keep-alive. */
final class TurnstileContender implements Contender, WaitingContender {
    private static final LockOptions OPTIONS = LockOptions.lockAtMostFor(Duration.ofSeconds(30));

    private final Turnstile turnstile;

    TurnstileContender(DataSource dataSource) {
        this.turnstile = Turnstile.builder(JdbcLockStore.builder(dataSource).build()).build();
    }

    @Override
    public String id() {
        return "TURNSTILE";
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
    }
}
