package dev.turnstile;

import dev.turnstile.spi.AcquireRequest;
import dev.turnstile.spi.Grant;
import dev.turnstile.spi.HandOver;
import dev.turnstile.spi.HandsOver;
import dev.turnstile.spi.KeepsWaitingLine;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.PrunesNames;
import dev.turnstile.spi.ReleaseResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lock client: acquires leases on named locks from a {@link LockStore}. Thread-safe; make one
 * per store and share it.
 *
 * <pre>{@code
 * Turnstile turnstile = Turnstile.builder(store).build();
 * Optional<Lease> lease = turnstile.tryAcquire("coupon-issue", LockOptions.lockAtMostFor(Duration.ofSeconds(30)));
 * }</pre>
 *
 * <p>Busy is a result (an empty {@link Optional}); a store that cannot be reached raises
 * {@link StoreUnavailableException}; bad input, null included, raises
 * {@link IllegalArgumentException} whose message says what to fix, and nothing reaches the store;
 * using a closed client, or a client over a closed store, raises {@link IllegalStateException}.
 *
 * <p>Past 400 lines by its public API's documentation (a third of it) and its public
 * {@link Builder}; a waiting acquire is {@code LockWait}, a lease's life {@code HeldLease}.
 */
public final class Turnstile implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Turnstile.class);
    /** How long a release subscription stays open after its last waiter left. */
    private static final Duration WATCH_LINGER = Duration.ofSeconds(5);

    private final LockStore store;
    private final String owner;
    final Backoff backoff;
    private final long courtesyNanos;
    /** Package-private for tests that stop its timer at an exact point, as a concurrent {@link #close} would. */
    final LeaseKeeper keeper = new LeaseKeeper();
    final WaitRooms waitRooms = new WaitRooms();
    final ReleaseWatches watches;
    private final Set<HeldLease> held = ConcurrentHashMap.newKeySet();
    /** Package-private for {@link HeldLease}, which reports releases, losses and failed renewals. */
    final Listeners listeners;
    private final ConcurrentHashMap<HoldKey, ReentrantLease.Hold> reentrantHolds = new ConcurrentHashMap<>();
    /**
     * This client's last release of each name: when, for the hand-off courtesy in {@link #acquire},
     * and which token, so that the store's echo of that release does not end the courtesy.
     */
    private final ConcurrentHashMap<String, Released> lastReleased = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private record HoldKey(String name, Object context) {}

    private record Released(String token, long nanos) {}

    private Turnstile(Builder b) {
        this.store = b.store;
        this.owner = b.owner != null ? b.owner : Owners.defaultOwner();
        this.backoff = new Backoff(b.pollMin, b.pollMax);
        this.courtesyNanos = (b.courtesy != null ? b.courtesy : b.pollMin.multipliedBy(2)).toNanos();
        this.watches = new ReleaseWatches(store, keeper, this::storeReleased, b.watchLinger.toNanos());
        this.listeners = new Listeners(b.listeners);
    }

    /**
     * Starts a builder over a store.
     *
     * @param store the store, built from the client the application already has
     * @return a builder
     * @throws IllegalArgumentException if {@code store} is null
     */
    public static Builder builder(LockStore store) {
        return new Builder(Validation.notNull("store", store, "give a LockStore, e.g. JdbcLockStore.builder(dataSource).build()"));
    }

    /**
     * Checks a lock name the way every acquire does, so that a caller (a CLI, a scheduler) can
     * reject bad input before it touches anything.
     *
     * <p>Names are compared as text in Unicode normalization form C: {@code café} typed with a
     * precomposed {@code é} and with {@code e} + a combining accent is one lock, and the store sees
     * the NFC form. Nothing else is folded (case, {@code ß} and {@code ss}, full-width letters and
     * ligatures stay distinct names).
     *
     * @param name the lock name
     * @return the name in normalization form C, as every store sees it
     * @throws IllegalArgumentException if the name is null, empty, longer than 255 Unicode code points
     *     (after normalization), has control characters or lone surrogates, or starts or ends with
     *     white space
     */
    public static String checkLockName(String name) {
        return Validation.lockName(name);
    }

    /**
     * Returns the owner identity stored with every lease this client takes.
     *
     * @return the owner
     */
    public String owner() {
        return owner;
    }

    /**
     * Returns the store.
     *
     * @return the store
     */
    public LockStore store() {
        return store;
    }

    /**
     * Takes the lock with the default options if it is free, without waiting.
     *
     * @param name the lock name
     * @return the lease, or empty if another holder has it
     * @throws IllegalArgumentException if the name is empty, too long or has control characters
     * @throws StoreUnavailableException if the store cannot be reached
     * @throws IllegalStateException if this client or its store is closed
     */
    public Optional<Lease> tryAcquire(String name) {
        return tryAcquire(name, LockOptions.defaults());
    }

    /**
     * Takes the lock if it is free, without waiting.
     *
     * @param name the lock name: 1 to 255 characters, no control characters, no leading or
     *     trailing white space; stored literally
     * @param options how to hold it
     * @return the lease, or empty if another holder has it
     * @throws IllegalArgumentException if the name is invalid or the options are null
     * @throws StoreUnavailableException if the store cannot be reached; an acquire whose outcome is
     *     unknown is followed by a best-effort release of its token
     * @throws LeaseLostException on a re-entrant acquire whose outer lease is lost
     * @throws IllegalStateException if this client or its store is closed
     */
    public Optional<Lease> tryAcquire(String name, LockOptions options) {
        name = Validation.lockName(name);
        Validation.notNull("options", options, "give LockOptions.defaults() or build some with LockOptions.builder()");
        checkOpen();
        long start = System.nanoTime();
        Optional<Lease> lease;
        try {
            lease = tryAcquire(name, options, false, null);
        } catch (StoreUnavailableException e) {
            reportStoreFailure(name, e, start);
            throw e;
        }
        listeners.acquired(name, lease.isPresent() ? AcquireOutcome.ACQUIRED : AcquireOutcome.BUSY, start);
        return lease;
    }

    private void reportStoreFailure(String name, StoreUnavailableException e, long start) {
        listeners.acquired(name, AcquireOutcome.STORE_FAILURE, start);
        listeners.storeFailed(name, e);
    }

    /**
     * Returns the leases this client holds now: a snapshot, sorted by name, for gauges, admin
     * endpoints and shutdown hooks. A re-entrant hold appears once. Released and lost leases are not
     * in it. The leases are the live ones: releasing one here releases it for its holder too, so
     * read them, and leave releasing to their holders (or to {@link #close()}).
     *
     * @return an immutable list, empty when nothing is held
     */
    public List<Lease> heldLeases() {
        List<Lease> now = new ArrayList<>(held);
        now.sort(java.util.Comparator.comparing(Lease::name).thenComparingLong(Lease::fence));
        return List.copyOf(now);
    }

    /**
     * One try, for the public acquires, which have checked the name and options already (not again
     * here: the waiting loop calls this on every poll).
     *
     * @param waiting whether a busy lock will be waited for (the store may queue this client)
     * @param token the token to ask with: a waiting acquire uses one for all its tries, so that a
     *     store that queues it keeps one place in line for it; null for a fresh one
     */
    Optional<Lease> tryAcquire(String name, LockOptions options, boolean waiting, @Nullable String token) {
        checkOpen();
        if (!options.reentrant()) {
            return Optional.ofNullable(acquireOnce(name, options, waiting, token));
        }
        HoldKey key = new HoldKey(name, options.reentrancyContext());
        ReentrantLease.Hold hold = reentrantHolds.get(key);
        if (hold != null) {
            synchronized (hold) {
                if (hold.count > 0) {
                    if (!hold.lease.isHeld()) {
                        throw new LeaseLostException(hold.lease.markLost("it was lost before this re-entrant acquire"));
                    }
                    hold.count++;
                    return Optional.of(new ReentrantLease(hold, () -> reentrantHolds.remove(key, hold)));
                }
            }
        }
        HeldLease lease = acquireOnce(name, options, waiting, token);
        return lease == null ? Optional.empty() : Optional.of(adopt(name, options, lease));
    }

    /** The lease as the caller's thread gets it: wrapped for re-entry if the options ask for it. */
    Lease adopt(String name, LockOptions options, HeldLease lease) {
        if (!options.reentrant()) {
            return lease;
        }
        HoldKey key = new HoldKey(name, options.reentrancyContext());
        ReentrantLease.Hold fresh = new ReentrantLease.Hold(lease);
        fresh.count = 1;
        reentrantHolds.put(key, fresh);
        return new ReentrantLease(fresh, () -> reentrantHolds.remove(key, fresh));
    }

    /**
     * Returns the named lock as a {@link java.util.concurrent.locks.Lock}, owned by the thread that
     * locks it, each outermost hold one lease with {@code options} (see {@link DistributedLock}).
     * Nothing is asked of the store until a thread locks it.
     *
     * @param name the lock name
     * @param options how each hold's lease is held: give a keep-alive ({@code LockOptions.builder().keepAlive(true)})
     *     for holds that may outlast {@code lockAtMostFor}
     * @return the lock
     * @throws IllegalArgumentException if the name is invalid or the options are null or re-entrant
     *     (the lock counts its own re-entries, per thread)
     */
    public DistributedLock lock(String name, LockOptions options) {
        String checked = Validation.lockName(name);
        Validation.notNull("options", options, "give LockOptions.defaults() or build some with LockOptions.builder()");
        if (options.reentrant()) {
            throw new IllegalArgumentException("options for lock('" + checked + "') are re-entrant: leave reentrant() out, "
                    + "the lock counts a thread's re-entries itself");
        }
        return new LeaseLock(this, checked, options);
    }

    /**
     * Takes the lock, waiting up to {@code maxWait} for it to become free. Waiters are woken by
     * releases in this process and, on stores that can notify, by releases anywhere; besides, they
     * poll with a backoff that grows with the time waited, with jitter.
     *
     * @param name the lock name
     * @param options how to hold it
     * @param maxWait how long to wait at most; zero means one try
     * @return the lease, or empty if the lock stayed busy for {@code maxWait}
     * @throws InterruptedException if the thread is interrupted while waiting (nothing is held)
     * @throws IllegalArgumentException if the name or the wait is invalid, or the options are null
     * @throws StoreUnavailableException if the store cannot be reached
     * @throws IllegalStateException if this client or its store is closed, before or while waiting (nothing is held)
     */
    public Optional<Lease> acquire(String name, LockOptions options, Duration maxWait) throws InterruptedException {
        name = Validation.lockName(name);
        Validation.notNull("options", options, "give LockOptions.defaults() or build some with LockOptions.builder()");
        Validation.nonNegative("maxWait", maxWait);
        checkOpen();
        long start = System.nanoTime();
        Optional<Lease> lease;
        try {
            lease = waitFor(name, options, maxWait);
        } catch (StoreUnavailableException e) {
            reportStoreFailure(name, e, start);
            throw e;
        }
        listeners.acquired(name, lease.isPresent() ? AcquireOutcome.ACQUIRED : AcquireOutcome.BUSY, start);
        return lease;
    }

    private Optional<Lease> waitFor(String name, LockOptions options, Duration maxWait) throws InterruptedException {
        if (options.reentrant() && holdsReentrantly(name, options)) {
            // Not in line behind threads that wait for this very hold to end.
            Optional<Lease> again = tryAcquire(name, options, false, null);
            if (again.isPresent()) {
                return again;
            }
        }
        return new LockWait(this, name, options, maxWait).run();
    }

    /**
     * The wait ended without the lock under this token (timed out, interrupted, failed, or handed a
     * lease of another token here): the store may drop the waiter's place in its line now rather
     * than leave it to time out. Best effort: a place left behind only delays the line a little.
     */
    void stopWaiting(String name, String token) {
        try {
            store.capability(KeepsWaitingLine.class).ifPresent(line -> line.stopWaiting(name, token));
        } catch (RuntimeException e) {
            log.debug("could not leave the waiting line of lock '{}': {}", name, e.toString());
        }
    }

    private boolean holdsReentrantly(String name, LockOptions options) {
        return reentrantHolds.containsKey(new HoldKey(name, options.reentrancyContext()));
    }

    /**
     * A client that released this name a moment ago and now waits for it again would nearly
     * always win the race against the other waiters, who are asleep between polls or only just
     * woken: one process would take the lock over and over while the others starve. So it first
     * gives them their turn: it waits for the next release (by a waiter here, or one the store
     * reports) or for the hand-off courtesy to pass, whichever comes first. (Threads of this client
     * need no courtesy among themselves: they take turns in {@link WaitRooms}.)
     */
    long deferToOtherWaiters(String name, WaitRooms.Seat seat, long seen, long deadline) throws InterruptedException {
        Released last = lastReleased.get(name);
        if (last == null || courtesyNanos == 0) {
            return seen;
        }
        long wait = Math.min(last.nanos() + courtesyNanos - System.nanoTime(), deadline - System.nanoTime());
        return wait > 0 ? seat.await(seen, wait) : seen;
    }

    /**
     * Lists the locks currently held on the store (by anyone).
     *
     * @return held locks sorted by name
     * @throws StoreUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the store is closed
     */
    public List<LockInfo> heldLocks() {
        try {
            return store.heldLocks();
        } catch (RuntimeException e) {
            throw store.isClosed() ? closedStore(e) : e;
        }
    }

    /**
     * Frees a lock whoever holds it. Its holder finds out at its next renewal or release, or at once
     * if it is kept alive with an {@code onLost} callback on a store that tells of releases (Redis,
     * ZooKeeper, PostgreSQL). The fence is kept, so the next holder's fence is still greater.
     *
     * @param name the lock name
     * @return {@code true} if a held lease was ended
     * @throws IllegalArgumentException if the name is invalid
     * @throws StoreUnavailableException if the store cannot be reached
     * @throws IllegalStateException if the store is closed
     */
    public boolean forceRelease(String name) {
        name = Validation.lockName(name);
        boolean freed;
        try {
            freed = store.forceRelease(name);
        } catch (RuntimeException e) {
            throw store.isClosed() ? closedStore(e) : e;
        }
        waitRooms.signal(name);
        return freed;
    }

    /**
     * Forgets the lock names nobody has acquired for at least {@code unusedFor} and that are free now,
     * so that a store used with dynamic names (per customer, per tenant) does not grow forever (on
     * PostgreSQL, MariaDB/MySQL, H2 and MongoDB also only once their lease ended {@code unusedFor}
     * ago). Safe at any time and from any instance, beside running acquires: a held lock, or one kept
     * by {@code lockAtLeastFor}, is never touched, and a forgotten name used again gets a fence above
     * every fence it had. Run it now and
     * then (daily, say) with a period well above your longest lease, such as
     * {@code Duration.ofDays(7)}: a name's first acquire after it was forgotten costs a few more
     * round trips on the SQL stores and MongoDB, and on Redis the period is also how far the server's
     * clock may later step back without a fence repeating ({@code docs/locks.md}, "Pruning").
     *
     * @param unusedFor how long a name must have been free, from zero up to 366 days
     * @return how many names were forgotten
     * @throws UnsupportedOperationException if the store cannot prune (ZooKeeper keeps nothing for a
     *     free name, so there is nothing to prune)
     * @throws IllegalArgumentException if {@code unusedFor} is null, negative or too long
     * @throws StoreUnavailableException if the store cannot be reached (names forgotten before the
     *     failure stay forgotten, and their fences are safe)
     * @throws IllegalStateException if the store is closed
     */
    public long pruneUnused(Duration unusedFor) {
        Validation.notNull("unusedFor", unusedFor, "give how long a name must have been free, e.g. Duration.ofDays(7)");
        if (unusedFor.isNegative() || unusedFor.compareTo(LockOptions.MAX_DURATION) > 0) {
            throw new IllegalArgumentException("unusedFor is " + unusedFor + ": give a duration from zero up to "
                    + LockOptions.MAX_DURATION.toDays() + " days, well above your longest lease, e.g. Duration.ofDays(7)");
        }
        PrunesNames pruning = store.capability(PrunesNames.class).orElseThrow(() -> new UnsupportedOperationException(
                "the store " + store.description() + " cannot prune lock names (the SQL stores, MongoDB, Redis and the "
                        + "in-memory store can; ZooKeeper keeps nothing for a free name, so there is nothing to prune)"));
        try {
            return pruning.pruneUnused(unusedFor);
        } catch (RuntimeException e) {
            throw store.isClosed() ? closedStore(e) : e;
        }
    }

    /**
     * Releases every lease this client still holds (best effort) and stops its threads. Does not
     * close the store. Threads waiting in {@link #acquire} return at once with an
     * {@link IllegalStateException}; a lease being handed to one of them is released instead.
     */
    @Override
    public void close() {
        closed = true;
        waitRooms.close(); // waiters wake and find the client closed
        watches.closeAll();
        for (HeldLease lease : new ArrayList<>(held)) {
            try {
                lease.release();
            } catch (RuntimeException e) {
                log.warn("could not release lock '{}' on close: {}", lease.name(), e.toString());
            }
        }
        keeper.close();
    }

    private @Nullable HeldLease acquireOnce(String name, LockOptions options, boolean waiting, @Nullable String sharedToken) {
        for (int attempt = 1; ; attempt++) {
            String token = sharedToken != null && attempt == 1 ? sharedToken : Owners.newToken();
            long start = System.nanoTime();
            Optional<Grant> grant;
            try {
                grant = store.tryAcquire(new AcquireRequest(name, owner, token, options.lockAtMostFor(), waiting));
            } catch (RuntimeException failed) {
                if (store.isClosed()) {
                    throw closedStore(failed); // a programming error, not an outage: no ERROR log, nothing to undo
                }
                if (!(failed instanceof StoreUnavailableException e)) {
                    throw failed;
                }
                if (Thread.currentThread().isInterrupted()) {
                    log.debug("acquiring lock '{}' was interrupted", name);
                } else {
                    log.error("acquiring lock '{}' on {} failed: {}", name, store.description(), e.getMessage());
                }
                undoAmbiguousAcquire(name, token);
                throw e;
            }
            if (grant.isEmpty()) {
                log.debug("lock '{}' is busy", name);
                if (waiting && !token.equals(sharedToken)) {
                    // A retry under a fresh token may have been given a place in the store's waiting
                    // line that no later try of this wait asks for (they carry the shared token):
                    // left there, it would hold up everyone behind it until it timed out.
                    stopWaiting(name, token);
                }
                return null;
            }
            long took = System.nanoTime() - start;
            if (took > options.lockAtMostFor().toNanos() / 2) {
                // The lease is counted from before the call, so most of it is already gone (a cold
                // connection, a stalled store): hand it back rather than return a lease about to die.
                undoAmbiguousAcquire(name, token);
                if (attempt == 1) {
                    log.debug("acquiring lock '{}' took {} ms, more than half its TTL; trying once more", name, took / 1_000_000);
                    continue;
                }
                throw new StoreUnavailableException("acquiring lock '" + name + "' on " + store.description() + " took "
                        + took / 1_000_000 + " ms, more than half of lockAtMostFor (" + options.lockAtMostFor().toMillis()
                        + " ms), twice: a lease this short is mostly gone before it is granted; give a longer "
                        + "lockAtMostFor, or look at the store's latency", null);
            }
            return startLease(name, token, grant.get(), options, start);
        }
    }

    /**
     * Makes a granted lock a held lease: tracked (so {@link #close} releases it) and armed. If the
     * client closed meanwhile (its timer then refuses the lease's keep-alive and deadline check), the
     * grant is released rather than left to block everyone until its TTL.
     *
     * @throws IllegalStateException if the client is closed
     */
    private HeldLease startLease(String name, String token, Grant grant, LockOptions options, long start) {
        HeldLease lease = new HeldLease(this, store, keeper, name, owner, token, grant, options, start);
        held.add(lease);
        try {
            if (closed) {
                // close() set the flag before it went through the held leases: it may have missed this one.
                throw new RejectedExecutionException("closed");
            }
            lease.start();
            return lease;
        } catch (RejectedExecutionException closing) {
            try {
                lease.release();
            } catch (RuntimeException e) {
                log.debug("could not release lock '{}' granted as the client closed; it expires by its TTL: {}", name, e.toString());
            }
            throw closedClient();
        }
    }

    /**
     * The acquire may have committed before the error: free its token rather than strand the lock.
     * When an interrupt cut the acquire off (it may have been sent all the same), the undo goes to a
     * keeper thread: clients refuse to send on an interrupted thread (Lettuce, Curator, the MongoDB
     * driver), and the interrupted caller should not wait for the store either.
     */
    private void undoAmbiguousAcquire(String name, String token) {
        if (Thread.currentThread().isInterrupted()) {
            try {
                keeper.execute(() -> undoNow(name, token));
                return;
            } catch (RejectedExecutionException closing) {
                // the client is closing: undo here, with the interrupt set aside for the call
            }
            Thread.interrupted();
            try {
                undoNow(name, token);
            } finally {
                Thread.currentThread().interrupt();
            }
            return;
        }
        undoNow(name, token);
    }

    private void undoNow(String name, String token) {
        try {
            store.release(name, token, Duration.ZERO);
        } catch (RuntimeException ignored) {
            // The store is unreachable; the lease, if it exists, expires by its TTL.
        }
    }

    /** Whether {@link #close} was called. */
    boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw closedClient();
        }
    }

    static IllegalStateException closedClient() {
        return new IllegalStateException("this Turnstile is closed; build a new one");
    }

    /** What a store call failed with once the store is closed: the store's own word if it said so. */
    private IllegalStateException closedStore(RuntimeException failed) {
        if (failed instanceof IllegalStateException e) {
            return e;
        }
        return closedStoreException(store, failed);
    }

    static IllegalStateException closedStoreException(LockStore store, @Nullable Throwable cause) {
        return new IllegalStateException("the LockStore " + store.description() + " is closed: build a new one, and keep it "
                + "open while a Turnstile uses it", cause);
    }

    void forget(HeldLease lease) {
        held.remove(lease);
    }

    /**
     * After the store call. An echo that beats this wakes this client's waiters once too often,
     * which is harmless; only an echo during the courtesy that follows must be recognised.
     */
    private void released(String name, String token, boolean wakeWaiters) {
        if (lastReleased.size() > 4096) {
            lastReleased.clear(); // only the last few milliseconds matter
        }
        lastReleased.put(name, new Released(token, System.nanoTime()));
        if (wakeWaiters) {
            waitRooms.signal(name);
        }
    }

    /**
     * Ends a lease in the store. When a thread of this client is waiting for the lock, and the
     * store can, the lock goes straight to it in the same store call (the store checks that no
     * other client has waited longer); otherwise it is released and the waiters here are woken.
     *
     * @return what the store applied ({@link ReleaseResult#FREED} when the lock went to a waiter)
     * @throws StoreUnavailableException if the store call failed (the caller may retry the release)
     */
    ReleaseResult endLease(String name, String token, Duration lockAtLeastFor) {
        @Nullable HandsOver handing = lockAtLeastFor.isZero() && !closed ? store.capability(HandsOver.class).orElse(null) : null;
        WaitRooms.@Nullable Seat taker = handing != null ? waitRooms.claimFirst(name) : null;
        if (handing == null || taker == null) { // (no hand-over store, no seat)
            ReleaseResult applied = store.releaseReporting(name, token, lockAtLeastFor);
            released(name, token, true);
            return applied;
        }
        // The claimed seat waits, uninterruptibly, for deliver or withdraw: whatever happens below
        // (a store error, the client closing, an Error), it must get one of them.
        boolean delivered = false;
        try {
            LockOptions options = taker.options();
            String nextToken = Owners.newToken();
            long start = System.nanoTime();
            HandOver done;
            try {
                done = handing.handOver(name, token, new AcquireRequest(name, owner, nextToken, options.lockAtMostFor(), true));
            } catch (RuntimeException e) {
                undoAmbiguousAcquire(name, nextToken);
                throw e;
            }
            if (done.grant().isEmpty()) {
                // Released to a waiter of another client, which the store has woken: the waiters here
                // must not race it for the lock. (Not held at all: they may try.)
                released(name, token, !done.released());
                return done.released() ? ReleaseResult.FREED : ReleaseResult.NOT_HELD;
            }
            if (System.nanoTime() - start > options.lockAtMostFor().toNanos() / 2 || closed) {
                // As in acquireOnce: a grant that took most of its TTL is no use; the waiter tries itself.
                undoAmbiguousAcquire(name, nextToken);
                released(name, token, true);
                return ReleaseResult.FREED;
            }
            HeldLease lease;
            try {
                lease = startLease(name, nextToken, done.grant().get(), options, start);
            } catch (IllegalStateException closing) {
                released(name, token, true); // the grant was released; the waiter wakes to a closed client
                return ReleaseResult.FREED;
            }
            released(name, token, false);
            waitRooms.deliver(taker, lease);
            delivered = true;
            return ReleaseResult.FREED;
        } finally {
            if (!delivered) {
                waitRooms.withdraw(taker);
            }
        }
    }

    /**
     * A release the store reports. This client's own releases already woke its waiters (and must
     * not end the courtesy that follows them), so their echoes are dropped.
     */
    void storeReleased(String name, @Nullable String token) {
        Released last = lastReleased.get(name);
        if (token == null || last == null || !token.equals(last.token())) {
            waitRooms.signal(name);
        }
    }

    /** Builds a {@link Turnstile}. Not thread-safe. */
    public static final class Builder {
        private final LockStore store;
        private @Nullable String owner;
        private Duration pollMin = Duration.ofMillis(2);
        private Duration pollMax = Duration.ofMillis(500);
        private @Nullable Duration courtesy;
        private Duration watchLinger = WATCH_LINGER;
        private final List<TurnstileListener> listeners = new ArrayList<>();

        private Builder(LockStore store) {
            this.store = store;
        }

        /**
         * Sets the readable owner identity stored with each lease. Default: host, process id and a
         * random per-client id.
         *
         * @param owner 1 to 255 characters, no control characters
         * @return this builder
         * @throws IllegalArgumentException if invalid
         */
        public Builder owner(String owner) {
            this.owner = Validation.owner(owner);
            return this;
        }

        /**
         * Sets the bounds of the poll interval used while waiting for a lock held elsewhere. The
         * interval grows to about a tenth of the time already waited, between these bounds.
         * Default 2 ms to 500 ms.
         *
         * @param min the shortest interval, at least 1 ms
         * @param max the longest interval, at least {@code min}
         * @return this builder
         * @throws IllegalArgumentException if out of range
         */
        public Builder pollInterval(Duration min, Duration max) {
            if (min == null || max == null || min.toMillis() < 1 || max.compareTo(min) < 0
                    || max.compareTo(LockOptions.MAX_DURATION) > 0) {
                throw new IllegalArgumentException("poll interval bounds (" + min + ", " + max
                        + ") are invalid: min must be at least 1 ms and max at least min");
            }
            this.pollMin = min;
            this.pollMax = max;
            return this;
        }

        /**
         * Sets the hand-off courtesy: how long a waiting acquire that follows this client's own
         * release of the same lock first lets other waiters take it. Default: twice the shortest
         * poll interval (4 ms), which is what a polling waiter elsewhere needs to notice the release.
         * Zero turns it off (the releaser may then take the lock again at once).
         *
         * @param courtesy zero or more, at most 1 s
         * @return this builder
         * @throws IllegalArgumentException if negative or longer than 1 s
         */
        public Builder handOffCourtesy(Duration courtesy) {
            if (courtesy == null || courtesy.isNegative() || courtesy.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("hand-off courtesy " + courtesy + " is invalid: give 0 to 1 s");
            }
            this.courtesy = courtesy;
            return this;
        }

        /**
         * Adds a listener told of every acquire, release, loss and store failure of the client (for
         * metrics and tracing). Several may be added; they are called in the order added. A listener
         * that throws is logged and ignored.
         *
         * @param listener the listener
         * @return this builder
         * @throws IllegalArgumentException if {@code listener} is null
         */
        public Builder listener(TurnstileListener listener) {
            listeners.add(Validation.notNull("listener", listener, "give a TurnstileListener, or add none"));
            return this;
        }

        /** For tests: how long a release subscription outlives its last waiter. */
        Builder watchLinger(Duration linger) {
            this.watchLinger = linger;
            return this;
        }

        /**
         * Builds the client.
         *
         * @return the client
         * @throws IllegalStateException if the store is already closed
         */
        public Turnstile build() {
            if (store.isClosed()) {
                throw closedStoreException(store, null);
            }
            return new Turnstile(this);
        }
    }
}
