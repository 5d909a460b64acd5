package dev.turnstile.testkit;

import dev.turnstile.claim.ClaimFilter;
import dev.turnstile.claim.ClaimStore;
import dev.turnstile.claim.ClaimTable;
import dev.turnstile.claim.ClaimedRow;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A real claim store with a gate in front: while {@linkplain #hold() held}, every call waits
 * before it reaches the store, as a request stuck in a partitioned network does, and goes on to
 * the store when {@linkplain #release() released}. It also counts the heartbeats in flight, so a
 * test knows one is hanging whether the gate or a {@link PartitionProxy} holds it.
 */
final class HoldingClaimStore implements ClaimStore {
    private final ClaimStore store;
    private final Object gate = new Object();
    private final AtomicInteger heartbeatsInFlight = new AtomicInteger();
    private boolean held; // guarded by gate

    HoldingClaimStore(ClaimStore store) {
        this.store = store;
    }

    void hold() {
        synchronized (gate) {
            held = true;
        }
    }

    void release() {
        synchronized (gate) {
            held = false;
            gate.notifyAll();
        }
    }

    int heartbeatsInFlight() {
        return heartbeatsInFlight.get();
    }

    private <T> T call(Supplier<T> op) {
        synchronized (gate) {
            while (held) {
                try {
                    gate.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while held", e);
                }
            }
        }
        return op.get();
    }

    @Override
    public ClaimTable table() {
        return store.table();
    }

    @Override
    public List<ClaimedRow> claim(ClaimFilter filter, int max, Duration lockTimeout) {
        return call(() -> store.claim(filter, max, lockTimeout));
    }

    @Override
    public boolean heartbeat(Object key, long version) {
        heartbeatsInFlight.incrementAndGet();
        try {
            return call(() -> store.heartbeat(key, version));
        } finally {
            heartbeatsInFlight.decrementAndGet();
        }
    }

    @Override
    public boolean unlock(Object key, long version, Map<String, Object> values) {
        return call(() -> store.unlock(key, version, values));
    }

    @Override
    public boolean relock(Object key, long version, Duration floor, Duration lockTimeout) {
        return call(() -> store.relock(key, version, floor, lockTimeout));
    }

    @Override
    public boolean update(Object key, long version, Map<String, Object> values) {
        return call(() -> store.update(key, version, values));
    }

    @Override
    public Set<String> reservedColumns() {
        return store.reservedColumns();
    }

    @Override
    public String description() {
        return store.description();
    }

    @Override
    public void close() {
        release();
        store.close();
    }
}
