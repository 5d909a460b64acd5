package dev.turnstile;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One waiting acquire ({@link Turnstile#acquire}), from its turn among this client's threads to the
 * lock or the deadline. Read top to bottom, {@link #run} is the whole wait:
 *
 * <ol>
 *   <li>wait for its turn among this client's threads waiting for the name ({@link WaitRooms}); if
 *       the deadline passes first, one try of its own all the same, so that a free lock (or a store
 *       that is down) is not reported busy;</li>
 *   <li>give other clients' waiters their turn if this client released the name a moment ago
 *       (the hand-off courtesy);</li>
 *   <li>loop: take a lease a releasing thread of this client handed over; else try the store; else
 *       subscribe to releases the first time the lock is found busy (and try again at once, so a
 *       release in between is not missed); else sleep until a release wakes it or the backoff's
 *       poll is due;</li>
 *   <li>in every case, at the end: leave the store's waiting line unless the lease it holds is of
 *       this wait's token, close the subscription, leave the waiting room.</li>
 * </ol>
 *
 * <p>Every try of one wait carries one token: a store that keeps a waiting line (ZooKeeper) keeps
 * this waiter's place under it from try to try, and is told when the wait ends without it.
 */
final class LockWait {
    private static final Logger log = LoggerFactory.getLogger(LockWait.class);
    /** With release notifications the poll is only a safety net, so it need not be frequent. */
    private static final long NOTIFIED_POLL_FLOOR_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Turnstile turnstile;
    private final String name;
    private final LockOptions options;
    private final Duration maxWait;
    private final long start;
    private final long deadline;
    private final String token = Owners.newToken();
    private final WaitRooms.Seat seat;
    /** The release subscription: null until the lock was found busy (or one was open already). */
    private ReleaseWatches.@Nullable Handle watch;
    /** Whether a try went into the store's waiting line, which must then be left unless this wait won. */
    private boolean queued;
    /** The lease this wait got, or null. */
    private @Nullable Lease won;

    LockWait(Turnstile turnstile, String name, LockOptions options, Duration maxWait) {
        this.turnstile = turnstile;
        this.name = name;
        this.options = options;
        this.maxWait = maxWait;
        this.start = System.nanoTime();
        this.deadline = start + maxWait.toNanos();
        this.seat = turnstile.waitRooms.enter(name, options);
    }

    /** The lease, or empty once the deadline passed with the lock busy. */
    Optional<Lease> run() throws InterruptedException {
        try {
            if (!seat.awaitTurn(deadline)) {
                return won(interruptible(() -> turnstile.tryAcquire(name, options, false, token)));
            }
            // A subscription left open by an earlier wait on this name also wakes the courtesy wait.
            watch = turnstile.watches.joinIfOpen(name);
            long seen = seat.seen();
            if (seat.firstAtOnce()) {
                seen = turnstile.deferToOtherWaiters(name, seat, seen, deadline);
            }
            boolean tryNow = !seat.takenAhead();
            while (true) {
                HeldLease handed = seat.takeHanded();
                if (handed != null) {
                    return Optional.of(adoptHanded(handed));
                }
                checkInterrupted();
                if (tryNow) {
                    Optional<Lease> lease = tryStore();
                    if (lease.isPresent()) {
                        return won(lease);
                    }
                }
                tryNow = true;
                long now = System.nanoTime();
                long left = deadline - now;
                if (left <= 0) {
                    log.debug("lock '{}' stayed busy for {}", name, maxWait);
                    return Optional.empty();
                }
                if (watch == null) {
                    // Subscribe only once the lock is busy (a free lock costs no extra round trip),
                    // then try again at once so a release in between is not missed.
                    watch = turnstile.watches.open(name);
                    continue;
                }
                // Many waiters must not hammer the store when releases wake them anyway.
                long floor = watch.notifies() ? NOTIFIED_POLL_FLOOR_NANOS : 0;
                long delay = Math.max(floor, turnstile.backoff.nextDelayNanos(now - start));
                seen = seat.await(seen, Math.min(left, delay));
            }
        } finally {
            end();
        }
    }

    private Optional<Lease> won(Optional<Lease> lease) {
        won = lease.orElse(null);
        return lease;
    }

    /** A lease a releasing thread of this client handed over: kept, unless the client closed meanwhile. */
    private Lease adoptHanded(HeldLease handed) {
        if (turnstile.isClosed()) {
            handed.release(); // close() may have missed it: nothing may be held when acquire throws
            throw Turnstile.closedClient();
        }
        won = handed;
        return turnstile.adopt(name, options, handed);
    }

    /**
     * One try in the store. In the store's waiting line (where it keeps one) from the second try on,
     * even when the release subscription failed and this waiter polls: otherwise a client whose
     * notifications broke would never be first in line, and another client's threads could hand the
     * lock among themselves while it starves.
     */
    private Optional<Lease> tryStore() throws InterruptedException {
        queued |= watch != null;
        return interruptible(() -> turnstile.tryAcquire(name, options, watch != null, token));
    }

    /**
     * A try in the store, whose failure is an {@link InterruptedException} when an interrupt cut it
     * off: a store whose client stops waiting for the answer when interrupted reports that as
     * unavailable, with the thread's flag up.
     */
    private Optional<Lease> interruptible(java.util.function.Supplier<Optional<Lease>> attempt) throws InterruptedException {
        try {
            return attempt.get();
        } catch (StoreUnavailableException e) {
            checkInterrupted();
            throw e;
        }
    }

    private void checkInterrupted() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted while waiting for lock '" + name + "'");
        }
    }

    private void end() {
        if (queued && (won == null || !token.equals(won.token()))) {
            turnstile.stopWaiting(name, token);
        }
        if (watch != null) {
            watch.close();
        }
        turnstile.waitRooms.leave(name, seat, won != null);
    }
}
