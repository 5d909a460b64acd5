package dev.turnstile.leader;

import dev.turnstile.Lease;
import dev.turnstile.LeaseLoss;
import dev.turnstile.LockOptions;
import dev.turnstile.StoreUnavailableException;
import dev.turnstile.Turnstile;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds a named role for as long as this process is alive and healthy: the "one active instance"
 * of a blue-green pair or a scaled-out service. Every instance starts a {@code Leadership} on the
 * same role; one is granted it, the others stand by, waiting for the lock (woken by the store where
 * it can notify, otherwise polling) and take over when the holder hands it back or dies.
 *
 * <pre>{@code
 * Leadership leadership = Leadership.builder(turnstile, "billing-scheduler")
 *         .lockAtMostFor(Duration.ofSeconds(10))     // a dead leader is replaced within this
 *         .onGranted(term -> scheduler.start(term.fence()))
 *         .onRevoked(term -> scheduler.stop())
 *         .build();
 * leadership.start();
 * ...
 * leadership.close();                                // hands the role back: a standby takes it at once
 * }</pre>
 *
 * <p>The holder keeps its lease alive (renewed every {@code lockAtMostFor / 3}). It loses the role
 * when a renewal is refused, or when renewals keep failing (the store unreachable) until the
 * lease's local deadline; {@code onRevoked} is then called at once, and that is before the store
 * can grant the role to another instance (the deadline is the acquire or last renewal plus the TTL
 * minus a drift margin, on this process's monotonic clock). So a revoked leader must stop its
 * work promptly in {@code onRevoked}; anything it writes after that should carry the term's fence
 * so that a resource can refuse it. After a loss this instance stands by again.
 *
 * <p>Callbacks run one at a time ({@code onRevoked} never overlaps {@code onGranted}), on a
 * Turnstile or leadership thread; keep them short. A callback that throws is logged at ERROR; an
 * {@code onGranted} that throws hands the role back. Built on the lock API, so it works on every
 * store. Close the {@code Leadership} before the {@link Turnstile} it uses: closing the client first
 * releases the role without calling {@code onRevoked}.
 *
 * <p>Past 400 lines by its public API's documentation and its public {@link Builder}.
 */
public final class Leadership implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Leadership.class);

    private final Turnstile turnstile;
    private final String role;
    private final Duration lockAtMostFor;
    private final Duration retryDelay;
    private final Consumer<Term> onGranted;
    private final Consumer<Term> onRevoked;
    private final ReentrantLock callbacks = new ReentrantLock();

    private final Object state = new Object();
    private @Nullable Thread thread; // guarded by state
    private Phase phase = Phase.NEW; // guarded by state

    /**
     * Where the leadership is: NEW until {@link #start}; STANDING while its thread holds a term or
     * waits to try again; ACQUIRING while it waits for the lock, the only time {@link #close} may
     * interrupt it; CLOSED for good.
     */
    private enum Phase { NEW, STANDING, ACQUIRING, CLOSED }
    private volatile @Nullable Held current;

    /** The term being held: its lease, and a future completed when it has ended (revoked, handed back). */
    private static final class Held {
        final Term term;
        final Lease lease;
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        boolean revoked; // guarded by Leadership.callbacks
        boolean announced; // guarded by Leadership.callbacks: onGranted was called

        Held(Term term, Lease lease) {
            this.term = term;
            this.lease = lease;
        }
    }

    private Leadership(Builder b) {
        this.turnstile = b.turnstile;
        this.role = b.role;
        this.lockAtMostFor = b.lockAtMostFor;
        this.retryDelay = b.retryDelay;
        this.onGranted = b.onGranted;
        this.onRevoked = b.onRevoked;
    }

    /**
     * Starts a builder for a role.
     *
     * @param turnstile the lock client
     * @param role the role's name, used as the lock name
     * @return a builder
     * @throws IllegalArgumentException if {@code turnstile} is null or {@code role} is not a valid lock name
     */
    public static Builder builder(Turnstile turnstile, String role) {
        if (turnstile == null) {
            throw new IllegalArgumentException("turnstile is null: give the Turnstile client, e.g. Turnstile.builder(store).build()");
        }
        Turnstile.checkLockName(role);
        return new Builder(turnstile, role);
    }

    /**
     * Returns the role's name.
     *
     * @return the role
     */
    public String role() {
        return role;
    }

    /**
     * Starts standing for the role, on a daemon thread of its own. Returns at once.
     *
     * @throws IllegalStateException if already started or closed
     */
    public void start() {
        synchronized (state) {
            if (phase == Phase.CLOSED) {
                throw new IllegalStateException("leadership of '" + role + "' is closed: build a new one");
            }
            if (phase != Phase.NEW) {
                throw new IllegalStateException("leadership of '" + role + "' is already started");
            }
            phase = Phase.STANDING;
            thread = new Thread(this::stand, "turnstile-leadership-" + role);
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Tells whether this instance holds the role now: granted, and its lease still provably held.
     *
     * @return {@code true} while leader
     */
    public boolean isLeader() {
        Held h = current;
        return h != null && h.lease.isHeld();
    }

    /**
     * Returns this instance's current term.
     *
     * @return the term while leader, otherwise empty
     */
    public Optional<Term> currentTerm() {
        Held h = current;
        return h != null && h.lease.isHeld() ? Optional.of(h.term) : Optional.empty();
    }

    /**
     * Stops standing for the role. If this instance is the leader, {@code onRevoked} is called and
     * then the lease is released at once, so a standby is granted the role without waiting for the
     * TTL. Idempotent. Waits up to {@code lockAtMostFor} for the leadership thread to end.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (state) {
            if (phase == Phase.CLOSED) {
                return;
            }
            boolean acquiring = phase == Phase.ACQUIRING;
            phase = Phase.CLOSED;
            t = thread;
            if (t != null && acquiring) {
                t.interrupt(); // ends a wait for the lock
            }
        }
        Held h = current;
        if (h != null) {
            handBack(h, "this instance closed its leadership");
        }
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(lockAtMostFor.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The leadership thread: wait for the role, hold it until it ends, and stand by again. */
    private void stand() {
        while (true) {
            synchronized (state) {
                if (phase == Phase.CLOSED) {
                    return;
                }
                phase = Phase.ACQUIRING;
            }
            Held[] ref = new Held[1];
            LockOptions options = LockOptions.builder()
                    .lockAtMostFor(lockAtMostFor)
                    .keepAlive(true)
                    .onLost(loss -> lost(ref, loss))
                    .build();
            Optional<Lease> lease;
            try {
                lease = turnstile.acquire(role, options, lockAtMostFor);
            } catch (InterruptedException e) {
                continue; // close() interrupted the wait: the loop sees closed
            } catch (StoreUnavailableException e) {
                log.warn("standing for role '{}': the store is unavailable ({}); trying again in {} ms", role,
                        e.getMessage(), retryDelay.toMillis());
                pause();
                continue;
            } catch (IllegalStateException | dev.turnstile.StoreSchemaException e) {
                // a store that is not set up (lock table missing) is not an outage: retrying never helps
                log.error("leadership of '{}' stops: {}", role, e.getMessage());
                return;
            } finally {
                synchronized (state) {
                    if (phase == Phase.ACQUIRING) {
                        phase = Phase.STANDING;
                    }
                }
                Thread.interrupted(); // a close() interrupt that came as the acquire returned
            }
            if (lease.isEmpty()) {
                continue;
            }
            Held h = new Held(new Term(role, lease.get().fence(), lease.get().acquiredAt()), lease.get());
            synchronized (state) {
                if (phase == Phase.CLOSED) {
                    release(h.lease);
                    return;
                }
                current = h;
            }
            synchronized (ref) {
                ref[0] = h;
            }
            if (!h.lease.isHeld()) {
                lost(ref, null); // lost before the hook could see the term
            }
            if (!grant(h)) {
                pause(); // give a standby the chance to take the role this instance could not start
                continue;
            }
            try {
                h.ended.get();
            } catch (InterruptedException | ExecutionException e) {
                // not interrupted by close() (only while acquiring); the term ends by revoke or hand-back
                Thread.interrupted();
                waitUninterruptibly(h);
            }
        }
    }

    /** Announces a term; false if onGranted threw and the role was handed back. */
    private boolean grant(Held h) {
        callbacks.lock();
        try {
            if (h.revoked) {
                return true; // lost before it could be announced; the loop waits for the next term
            }
            h.announced = true;
            log.info("granted role '{}' (fence {})", role, h.term.fence());
            try {
                onGranted.accept(h.term);
            } catch (RuntimeException e) {
                log.error("onGranted for role '{}' threw; handing the role back", role, e);
                handBack(h, "onGranted threw");
                return false;
            }
            return true;
        } finally {
            callbacks.unlock();
        }
    }

    /** The lease's loss hook, on a Turnstile thread. */
    private void lost(Held[] ref, @Nullable LeaseLoss loss) {
        Held h;
        synchronized (ref) {
            h = ref[0];
        }
        if (h != null) {
            revoke(h, loss != null ? loss.reason() : "the lease was lost");
            h.ended.complete(null);
        }
    }

    /** Ends a held term cleanly: revoke, then release so a standby is granted at once. */
    private void handBack(Held h, String why) {
        revoke(h, why);
        release(h.lease);
        h.ended.complete(null);
    }

    /** Calls onRevoked once per term. */
    private void revoke(Held h, String why) {
        callbacks.lock();
        try {
            if (h.revoked) {
                return;
            }
            h.revoked = true;
            synchronized (state) {
                if (current == h) {
                    current = null;
                }
            }
            if (!h.announced) {
                log.info("role '{}' (fence {}) ended before it was announced: {}", role, h.term.fence(), why);
                return; // never granted to the application: nothing to revoke
            }
            log.info("role '{}' (fence {}) revoked: {}", role, h.term.fence(), why);
            try {
                onRevoked.accept(h.term);
            } catch (RuntimeException e) {
                log.error("onRevoked for role '{}' threw", role, e);
            }
        } finally {
            callbacks.unlock();
        }
    }

    private void release(Lease lease) {
        try {
            lease.release();
        } catch (RuntimeException e) {
            log.warn("could not hand role '{}' back ({}); it frees itself within {} ms", role, e.toString(),
                    lockAtMostFor.toMillis());
        }
    }

    private void pause() {
        try {
            Thread.sleep(retryDelay.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void waitUninterruptibly(Held h) {
        while (true) {
            try {
                h.ended.get(1, TimeUnit.SECONDS);
                return;
            } catch (InterruptedException e) {
                Thread.interrupted();
            } catch (ExecutionException e) {
                return;
            } catch (TimeoutException e) {
                // keep waiting
            }
        }
    }

    @Override
    public String toString() {
        Held h = current;
        return "Leadership{role='" + role + "', " + (h != null ? "leader, fence " + h.term.fence() : "standby") + "}";
    }

    /** Builds a {@link Leadership}. Not thread-safe. */
    public static final class Builder {
        private final Turnstile turnstile;
        private final String role;
        private Duration lockAtMostFor = Duration.ofSeconds(10);
        private Duration retryDelay = Duration.ofSeconds(1);
        private Consumer<Term> onGranted = term -> {};
        private Consumer<Term> onRevoked = term -> {};

        private Builder(Turnstile turnstile, String role) {
            this.turnstile = turnstile;
            this.role = role;
        }

        /**
         * Sets the lease's time to live: how long a dead or frozen leader keeps the role before a
         * standby is granted it. Renewed every third of it. Default 10 s.
         *
         * @param lockAtMostFor 10 ms to 366 days
         * @return this builder
         * @throws IllegalArgumentException if null, not positive or out of range
         */
        public Builder lockAtMostFor(Duration lockAtMostFor) {
            LockOptions.builder().lockAtMostFor(lockAtMostFor); // the same checks and messages as every lease
            this.lockAtMostFor = lockAtMostFor;
            return this;
        }

        /**
         * Sets how long to wait before standing again after the store was unreachable or
         * {@code onGranted} threw. Default 1 s.
         *
         * @param retryDelay 1 ms to 1 h
         * @return this builder
         * @throws IllegalArgumentException if null or out of range
         */
        public Builder retryDelay(Duration retryDelay) {
            if (retryDelay == null || retryDelay.toMillis() < 1 || retryDelay.compareTo(Duration.ofHours(1)) > 0) {
                throw new IllegalArgumentException("retryDelay " + retryDelay + " is invalid: give 1 ms to 1 h, e.g. Duration.ofSeconds(1)");
            }
            this.retryDelay = retryDelay;
            return this;
        }

        /**
         * Sets what to do when this instance is granted the role (start the leader's work).
         *
         * @param onGranted told each new term
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder onGranted(Consumer<Term> onGranted) {
            if (onGranted == null) {
                throw new IllegalArgumentException("onGranted is null: give a callback, or leave it unset for none");
            }
            this.onGranted = onGranted;
            return this;
        }

        /**
         * Sets what to do when this instance loses or hands back the role (stop the leader's work,
         * promptly: another instance may be granted the role once the lease's TTL has passed).
         *
         * @param onRevoked told when each term ends
         * @return this builder
         * @throws IllegalArgumentException if null
         */
        public Builder onRevoked(Consumer<Term> onRevoked) {
            if (onRevoked == null) {
                throw new IllegalArgumentException("onRevoked is null: give a callback, or leave it unset for none");
            }
            this.onRevoked = onRevoked;
            return this;
        }

        /**
         * Builds the leadership, not yet started.
         *
         * @return the leadership; call {@link Leadership#start()}
         */
        public Leadership build() {
            return new Leadership(this);
        }
    }
}
