package dev.turnstile.bench;

import java.time.Duration;
import java.util.Optional;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;

/**
 * ShedLock through one of its providers. On SQL: the JdbcTemplate provider on the shared pool
 * (ShedLock 7.10.1's plain-JDBC provider, used with 6.3.0, is not on Maven Central), left at its
 * defaults: no database-time mode, so its expiry uses this JVM's clock, as the plain-JDBC one did. On Redis: whatever provider the Redis benchmark passes in.
 * ShedLock has no blocking acquire, so it only takes part in the acquire+release benchmarks.
 */
final class ShedLockContender implements Contender {
    private static final Duration AT_MOST = Duration.ofSeconds(30);

    private final LockProvider provider;
    private final String id;

    ShedLockContender(DataSource dataSource) {
        this(new JdbcTemplateLockProvider(dataSource, BenchDatabase.SHEDLOCK_TABLE));
    }

    ShedLockContender(LockProvider provider) {
        this(provider, "SHEDLOCK");
    }

    /**
     * @param provider the provider
     * @param id the label in tables (when one run compares two set-ups of ShedLock)
     */
    ShedLockContender(LockProvider provider, String id) {
        this.provider = provider;
        this.id = id;
    }

    @Override
    public String id() {
        return id;
    }

    @Override
    public boolean acquireRelease(String lockName) {
        Optional<SimpleLock> lock = provider.lock(new LockConfiguration(ClockProvider.now(), lockName, AT_MOST, Duration.ZERO));
        if (lock.isEmpty()) {
            return false;
        }
        lock.get().unlock(); // returns nothing, owner-checked or not (Redis: only with safeUpdate)
        return true;
    }
}
