package dev.turnstile.integration;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLostException;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@code LockRegistry} over any Turnstile store: where an application (or
 * Spring Integration itself: aggregators, leader initiators) uses {@code JdbcLockRegistry} or
 * {@code RedisLockRegistry}, one bean of this type puts its locks on SQLite, PostgreSQL,
 * MariaDB/MySQL, H2, Redis, Redlock, ZooKeeper or MongoDB, with Turnstile's fences.
 *
 * <p>As in Spring Integration's registries, {@link #obtain} returns one lock object per key; it is
 * owned by the thread that locks it and re-entrant for that thread; each outermost hold is a lease
 * of the store named {@code prefix + key}, lasting {@code lockAtMostFor} (default 60 s, as
 * {@code RedisLockRegistry}'s {@code expireAfter}) unless renewed with {@link #renewLock}, by the
 * holder locking again (as in {@code JdbcLockRegistry}, which Spring Integration's
 * {@code LockRegistryLeaderInitiator} relies on to keep leadership), or kept alive by the options
 * ({@link Builder#options}). {@code unlock()} of a lease that expired or was
 * taken over throws {@link ConcurrentModificationException}, as Spring Integration's registries do,
 * with the {@link LeaseLostException} as its cause; a store that fails while locking is Spring's
 * {@link CannotAcquireLockException}, as theirs, with Turnstile's {@link StoreUnavailableException}
 * as its cause. The lock objects are also Turnstile's
 * {@link dev.turnstile.DistributedLock}: cast to reach the fence.
 */
public final class TurnstileLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock> {

    private final Turnstile turnstile;
    private final String prefix;
    private final LockOptions options;
    private final Map<String, RegistryLock> locks = new ConcurrentHashMap<>();

    private TurnstileLockRegistry(Builder b) {
        this.turnstile = b.turnstile;
        this.prefix = b.prefix;
        this.options = b.options;
    }

    /**
     * Starts a registry over a Turnstile client (which the application closes).
     *
     * @param turnstile the client whose store holds the locks
     * @return a builder
     * @throws IllegalArgumentException if {@code turnstile} is null
     */
    public static Builder builder(Turnstile turnstile) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile is null: give the application's Turnstile client");
        }
        return new Builder(turnstile);
    }

    /**
     * Returns the lock of a key: the same object for the same key until it is expired from this
     * registry ({@link #expireUnusedOlderThan}).
     *
     * @param lockKey the key, a {@code String} (as Spring Integration's registries take); after the
     *     prefix it is the lock's name
     * @return the lock, which is a {@link dev.turnstile.DistributedLock} too
     * @throws IllegalArgumentException if the key is not a String or makes an invalid lock name
     */
    @Override
    public DistributedLock obtain(Object lockKey) {
        String name = name(lockKey);
        // under the key's own lock in the map, as expiry judges it: an object handed out is fresh
        return locks.compute(name, (n, existing) -> {
            RegistryLock lock = existing != null ? existing : new RegistryLock(this, turnstile.lock(n, options), options.lockAtMostFor());
            lock.lastUsed = System.nanoTime();
            return lock;
        });
    }

    /**
     * Forgets the lock objects that no thread of this process holds or waits on and that were last
     * obtained or locked more than {@code age} milliseconds ago (the store keeps nothing for them). A
     * forgotten object refuses to lock ({@link IllegalStateException}): obtain the key again.
     *
     * @param age milliseconds
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        long now = System.nanoTime();
        for (String name : locks.keySet()) {
            // judged and removed under the key's own lock in the map, which a lock call enters too
            locks.computeIfPresent(name, (n, l) -> !l.inUse() && now - l.lastUsed > TimeUnit.MILLISECONDS.toNanos(age) ? null : l);
        }
    }

    /**
     * Counts a lock call in on {@code lock} if it is still the one this registry gives for its key,
     * under the key's lock in the map, so that expiry cannot forget it from then on.
     */
    private boolean enter(RegistryLock lock) {
        boolean[] current = {false};
        locks.computeIfPresent(lock.name(), (n, l) -> {
            if (l == lock) {
                lock.calls.incrementAndGet();
                current[0] = true;
            }
            return l;
        });
        return current[0];
    }

    /**
     * Extends the calling thread's hold of a key's lock by the registry's {@code lockAtMostFor}.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold it
     * @throws IllegalStateException if its lease was lost meanwhile
     * @throws DataAccessResourceFailureException if the store cannot be reached
     */
    @Override
    public void renewLock(Object lockKey) {
        renewLock(lockKey, options.lockAtMostFor());
    }

    /**
     * Extends the calling thread's hold of a key's lock by {@code timeToLive}.
     *
     * @throws IllegalMonitorStateException if the calling thread does not hold it
     * @throws IllegalStateException if its lease was lost meanwhile
     * @throws DataAccessResourceFailureException if the store cannot be reached
     * @throws IllegalArgumentException if {@code timeToLive} is null or not a valid lease time
     */
    @Override
    public void renewLock(Object lockKey, Duration timeToLive) {
        String name = name(lockKey);
        RegistryLock lock = locks.get(name);
        Lease lease = lock == null ? null : lock.lock.lease().orElse(null);
        if (lease == null) {
            throw new IllegalMonitorStateException("the lock of key '" + lockKey + "' is not held by thread '"
                    + Thread.currentThread().getName() + "': only its holder can renew it");
        }
        try {
            lease.extend(timeToLive);
        } catch (LeaseLostException e) {
            throw new IllegalStateException("cannot renew the lock of key '" + lockKey + "': " + e.getMessage(), e);
        } catch (StoreUnavailableException e) {
            throw new DataAccessResourceFailureException("cannot renew the lock of key '" + lockKey + "': " + e.getMessage(), e);
        }
    }

    private String name(Object lockKey) {
        if (!(lockKey instanceof String key)) {
            // as Spring Integration's registries: a key without a stable text (Object@1b6d…) would name
            // another lock in every process
            throw new IllegalArgumentException("lockKey must be a String, not " + (lockKey == null ? "null"
                    : lockKey.getClass().getName()) + ": give the key's text, such as a message group id");
        }
        return Turnstile.checkLockName(prefix + key);
    }

    /** Spring Integration's lock over Turnstile's, with its unlock's exception and TTL methods. */
    private static final class RegistryLock implements DistributedLock, dev.turnstile.DistributedLock {
        private final TurnstileLockRegistry registry;
        final dev.turnstile.DistributedLock lock;
        /** What a re-entry renews the hold to, when it gives no time of its own. */
        private final Duration ttl;
        volatile long lastUsed = System.nanoTime();
        /** Lock calls in progress (waiting ones too): a lock in use is not forgotten. */
        final java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();

        RegistryLock(TurnstileLockRegistry registry, dev.turnstile.DistributedLock lock, Duration ttl) {
            this.registry = registry;
            this.lock = lock;
            this.ttl = ttl;
        }

        /**
         * After a lock call that may have re-entered: as in Spring Integration's JDBC registry, the
         * holder locking again renews the hold in the store (its {@code LockRegistryLeaderInitiator}
         * keeps leadership this way). A lease lost meanwhile undoes the re-entry and says so.
         */
        private void renewIfReentered(boolean wasHeld, Duration holdTtl) {
            if (!wasHeld) {
                return;
            }
            try {
                lock.lease().ifPresent(l -> l.extend(holdTtl));
            } catch (RuntimeException e) {
                lock.unlock(); // the inner hold just counted: undone, the outer unlock still reports a loss
                throw e instanceof LeaseLostException
                        ? new CannotAcquireLockException("cannot lock '" + lock.name() + "' again: " + e.getMessage(), e) : e;
            }
        }

        boolean inUse() {
            return calls.get() > 0 || lock.isLocked();
        }

        @Override
        public void lock() {
            locking(ttl, () -> {
                lock.lock();
                return true;
            });
        }

        @Override
        public void lock(Duration holdTtl) {
            locking(holdTtl, () -> {
                lock.lock(holdTtl);
                return true;
            });
        }

        @Override
        public void lockInterruptibly() throws InterruptedException {
            attempt(ttl, () -> {
                lock.lockInterruptibly();
                return true;
            });
        }

        @Override
        public boolean tryLock() {
            return locking(ttl, lock::tryLock);
        }

        @Override
        public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
            return attempt(ttl, () -> lock.tryLock(time, unit));
        }

        @Override
        public boolean tryLock(Duration waitTime, Duration holdTtl) throws InterruptedException {
            return attempt(holdTtl, () -> lock.tryLock(waitTime, holdTtl));
        }

        /** One lock call that may wait and be interrupted. */
        @FunctionalInterface
        private interface Attempt {
            boolean run() throws InterruptedException;
        }

        /** One lock call: a re-entry renews the hold, and a store failure is Spring's exception. */
        private boolean attempt(Duration holdTtl, Attempt attempt) throws InterruptedException {
            if (!registry.enter(this)) {
                if (!lock.isLocked()) {
                    // as Spring Integration's JdbcLock: a forgotten lock would be a second lock of its key here
                    throw new IllegalStateException("the lock '" + lock.name() + "' was forgotten by its registry "
                            + "(expireUnusedOlderThan): obtain it again");
                }
                calls.incrementAndGet(); // held while forgotten cannot happen (expiry skips a lock in use); be safe
            }
            try {
                Lease before = lock.lease().orElse(null);
                boolean held = before != null && before.isHeld();
                boolean locked = attempt.run();
                // a re-entry only if the hold's lease is the same one: a lost lease gets a new one, nothing to renew
                renewIfReentered(held && locked && lock.lease().orElse(null) == before, holdTtl);
                if (locked) {
                    lastUsed = System.nanoTime();
                }
                return locked;
            } catch (StoreUnavailableException e) {
                throw cannotLock(e);
            } finally {
                calls.decrementAndGet();
            }
        }

        /** As {@link #attempt}, for the calls that are not interruptible ({@code lock()}, {@code tryLock()}). */
        private boolean locking(Duration holdTtl, java.util.function.BooleanSupplier call) {
            try {
                return attempt(holdTtl, call::getAsBoolean);
            } catch (InterruptedException e) {
                throw new IllegalStateException("a call that does not wait was interrupted", e); // cannot happen
            }
        }

        /** What Spring Integration's registries throw when their store fails: Spring's, with Turnstile's as the cause. */
        private CannotAcquireLockException cannotLock(StoreUnavailableException e) {
            return new CannotAcquireLockException("cannot lock '" + lock.name() + "': " + e.getMessage(), e);
        }

        @Override
        public void unlock() {
            try {
                lock.unlock();
            } catch (StoreUnavailableException e) {
                throw new DataAccessResourceFailureException("cannot unlock '" + lock.name() + "' (try again: the hold "
                        + "is kept): " + e.getMessage(), e);
            } catch (LeaseLostException e) {
                ConcurrentModificationException ex = new ConcurrentModificationException("the lock '" + lock.name()
                        + "' was released in the store before unlock (" + e.loss().reason() + "): the data it protected "
                        + "may have been changed by another holder meanwhile");
                ex.initCause(e);
                throw ex;
            }
        }

        @Override
        public Condition newCondition() {
            return lock.newCondition();
        }

        @Override
        public String name() {
            return lock.name();
        }

        @Override
        public boolean isLocked() {
            return lock.isLocked();
        }

        @Override
        public boolean isHeldByCurrentThread() {
            return lock.isHeldByCurrentThread();
        }

        @Override
        public long fence() {
            return lock.fence();
        }

        @Override
        public java.util.Optional<Lease> lease() {
            return lock.lease();
        }

        @Override
        public String toString() {
            return "TurnstileLockRegistry.Lock{name='" + lock.name() + "'}";
        }
    }

    /** Builds a {@link TurnstileLockRegistry}. Not thread-safe. */
    public static final class Builder {
        private final Turnstile turnstile;
        private String prefix = "";
        private LockOptions options = LockOptions.lockAtMostFor(Duration.ofSeconds(60));

        private Builder(Turnstile turnstile) {
            this.turnstile = turnstile;
        }

        /**
         * Sets what goes before each key in the lock's name, to keep the registry's locks apart from
         * others on the store (as Spring Integration's {@code region}). Default: none.
         *
         * @param prefix such as {@code "orders:"}
         * @return this builder
         * @throws IllegalArgumentException if {@code prefix} is null
         */
        public Builder prefix(String prefix) {
            if (prefix == null) {
                throw new IllegalArgumentException("prefix is null: give \"\" for none");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * Sets each hold's time to live, which {@link TurnstileLockRegistry#renewLock(Object)} extends
         * by. Default: 60 s.
         *
         * @param lockAtMostFor the lease time
         * @return this builder
         * @throws IllegalArgumentException if it is null or outside 10 ms to 366 days
         */
        public Builder lockAtMostFor(Duration lockAtMostFor) {
            this.options = options.toBuilder().lockAtMostFor(lockAtMostFor).build();
            return this;
        }

        /**
         * Sets the leases' options whole: for example a keep-alive, so that a hold lasts until
         * {@code unlock()} while this process lives, with a loss callback. Not re-entrant options:
         * the locks count a thread's re-entries themselves.
         *
         * @param options the lease options
         * @return this builder
         * @throws IllegalArgumentException if {@code options} is null or re-entrant
         */
        public Builder options(LockOptions options) {
            if (options == null) {
                throw new IllegalArgumentException("options is null: give LockOptions.builder()…build()");
            }
            if (options.reentrant()) {
                throw new IllegalArgumentException("options are re-entrant: leave reentrant() out, the registry's locks "
                        + "count a thread's re-entries themselves");
            }
            this.options = options;
            return this;
        }

        /**
         * Builds the registry.
         *
         * @return the registry
         */
        public TurnstileLockRegistry build() {
            return new TurnstileLockRegistry(this);
        }
    }
}
