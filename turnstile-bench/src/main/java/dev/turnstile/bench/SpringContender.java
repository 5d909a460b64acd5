package dev.turnstile.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import javax.sql.DataSource;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A Spring Integration lock registry, all with a 30 s time to live and default idle between tries
 * (100 ms): {@link JdbcLockRegistry} over a {@link DefaultLockRepository} on the shared pool, or
 * {@link RedisLockRegistry} in its spin-lock or pub-sub mode on a Lettuce connection factory.
 */
final class SpringContender implements Contender, WaitingContender {
    /** The bench's own region (JDBC) and registry key (Redis: keys {@code bench:<name>}). */
    static final String REGION = "bench";
    private static final long TTL_MILLIS = 30_000;

    private final String id;
    private final LockRegistry registry;
    private final AutoCloseable closer;

    private SpringContender(String id, LockRegistry registry, AutoCloseable closer) {
        this.id = id;
        this.registry = registry;
        this.closer = closer;
    }

    SpringContender(DataSource dataSource) {
        this("SPRING", jdbcRegistry(dataSource));
    }

    private SpringContender(String id, DefaultLockRepository repository) {
        this(id, new JdbcLockRegistry(repository, Duration.ofMillis(TTL_MILLIS)), repository::close);
    }

    private static DefaultLockRepository jdbcRegistry(DataSource dataSource) {
        DefaultLockRepository repository = new DefaultLockRepository(dataSource);
        repository.setRegion(REGION);
        repository.setPrefix(BenchDatabase.SPRING_PREFIX);
        // Spring Integration 7 moved the time to live from the repository to the registry (above).
        // Outside an application context nobody injects the transaction manager or calls the
        // lifecycle hooks; without afterSingletonsInstantiated() the repository has no transaction templates.
        repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        return repository;
    }

    /**
     * Spring Integration's {@link RedisLockRegistry} on a started connection factory, which stays
     * the caller's.
     *
     * @param factory the connection factory
     * @param type spin lock (polls every 100 ms while waiting) or pub-sub lock (woken by the unlock)
     * @return the contender, labelled {@code SPRING_SPIN} or {@code SPRING_PUBSUB}
     */
    static SpringContender redis(RedisConnectionFactory factory, RedisLockRegistry.RedisLockType type) {
        RedisLockRegistry registry = new RedisLockRegistry(factory, REGION, TTL_MILLIS);
        registry.setRedisLockType(type);
        String id = type == RedisLockRegistry.RedisLockType.SPIN_LOCK ? "SPRING_SPIN" : "SPRING_PUBSUB";
        return new SpringContender(id, registry, registry::destroy);
    }

    @Override
    public String id() {
        return id;
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
        try {
            closer.close();
        } catch (Exception e) {
            System.err.println(id + ": close failed: " + e);
        }
    }
}
