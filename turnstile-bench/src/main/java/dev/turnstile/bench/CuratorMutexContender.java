package dev.turnstile.bench;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * Curator's {@code InterProcessMutex}, the peer: one mutex object per lock name (made once, as an
 * application keeps them), {@code acquire(0, ms)} + {@code release()}. Its nodes live under
 * {@code /bench-curator/<lock name>}.
 */
final class CuratorMutexContender implements Contender, WaitingContender {
    private final CuratorFramework client;
    private final Map<String, InterProcessMutex> mutexes = new ConcurrentHashMap<>();

    CuratorMutexContender(CuratorFramework client) {
        this.client = client;
    }

    private InterProcessMutex mutex(String name) {
        return mutexes.computeIfAbsent(name, n -> new InterProcessMutex(client, "/bench-curator/" + n));
    }

    @Override
    public String id() {
        return "CURATOR_MUTEX";
    }

    @Override
    public boolean acquireRelease(String lockName) throws Exception {
        InterProcessMutex m = mutex(lockName);
        if (!m.acquire(0, TimeUnit.MILLISECONDS)) {
            return false;
        }
        m.release();
        return true;
    }

    @Override
    public Held acquire(String lockName, Duration maxWait) throws Exception {
        InterProcessMutex m = mutex(lockName);
        if (!m.acquire(maxWait.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("lock '" + lockName + "' stayed busy for " + maxWait);
        }
        return m::release;
    }

    @Override
    public void close() {
        mutexes.clear();
    }
}
