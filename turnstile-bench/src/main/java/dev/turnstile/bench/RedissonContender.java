package dev.turnstile.bench;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redisson's {@link RLock} with a 30 s lease (so no watchdog renewal), keys {@code bench:<name>}.
 * Non-blocking: {@code tryLock(0, 30, SECONDS)}; waiting: {@code tryLock(maxWait, 30, SECONDS)},
 * which subscribes to the lock's unlock channel and retries when woken.
 */
final class RedissonContender implements Contender, WaitingContender {
    private static final long LEASE_SECONDS = 30;

    private final RedissonClient redisson;
    private final boolean ownsClient;

    RedissonContender(RedissonClient redisson, boolean ownsClient) {
        this.redisson = redisson;
        this.ownsClient = ownsClient;
    }

    @Override
    public String id() {
        return "REDISSON";
    }

    @Override
    public boolean acquireRelease(String lockName) throws InterruptedException {
        RLock lock = redisson.getLock(BenchRedis.KEY_PREFIX + lockName);
        if (!lock.tryLock(0, LEASE_SECONDS, TimeUnit.SECONDS)) {
            return false;
        }
        lock.unlock(); // throws IllegalMonitorStateException if this thread no longer held it
        return true;
    }

    @Override
    public Held acquire(String lockName, Duration maxWait) throws InterruptedException {
        RLock lock = redisson.getLock(BenchRedis.KEY_PREFIX + lockName);
        if (!lock.tryLock(maxWait.toMillis(), TimeUnit.SECONDS.toMillis(LEASE_SECONDS), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("lock '" + lockName + "' stayed busy for " + maxWait);
        }
        return lock::unlock;
    }

    @Override
    public void close() {
        if (ownsClient) {
            redisson.shutdown();
        }
    }
}
