package dev.turnstile.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@link JdbcLockRegistry} over a {@link DefaultLockRepository} on the shared
 * pool, with a 30 s time to live and the default 100 ms idle between tries.
 */
final class SpringContender implements Contender, WaitingContender {
    /** The bench's own region, so set-up can clear its rows without touching anyone else's. */
    static final String REGION = "bench";

    private final DefaultLockRepository repository;
    private final JdbcLockRegistry registry;

    SpringContender(DataSource dataSource) {
        repository = new DefaultLockRepository(dataSource);
        repository.setRegion(REGION);
        repository.setTimeToLive(30_000);
        // Outside an application context nobody injects the transaction manager or calls the
        // lifecycle hooks; without afterSingletonsInstantiated() the repository has no transaction templates.
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        registry = new JdbcLockRegistry(repository);
    }

    @Override
    public String id() {
        return "SPRING";
    }

    @Override
    public boolean acquireRelease(String lockName) {
        Lock lock = registry.obtain(lockName);
        if (!lock.tryLock()) {
            return false;
        }
        lock.unlock();
        return true;
    }

    @Override
    public Held acquire(String lockName, Duration maxWait) throws InterruptedException {
        Lock lock = registry.obtain(lockName);
        if (!lock.tryLock(maxWait.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("lock '" + lockName + "' stayed busy for " + maxWait);
        }
        return lock::unlock;
    }

    @Override
    public void close() {
        repository.close();
    }
}
