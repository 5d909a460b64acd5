package dev.turnstile;

import dev.turnstile.spi.Grant;
import dev.turnstile.spi.LeaseProof;
import dev.turnstile.spi.LockStore;
import dev.turnstile.spi.NotifiesReleases;
import dev.turnstile.spi.ReleaseResult;
import dev.turnstile.spi.ReleaseWatch;
import dev.turnstile.spi.WatchesLeases;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease and its life: local deadline on the monotonic clock, keep-alive, loss detection and
 * release. Store calls for one lease are serialised, so a renewal in flight can never land after
 * the release and revive the lease.
 *
 * <p>Why one class past 400 lines: deadline, renewal, release notices and release all read and
 * write one state under one monitor ({@code this}); split, each part would need the others' locking
 * rules to be right.
 */
final class HeldLease implements Lease {
    private static final Logger log = LoggerFactory.getLogger(Lease.class);

    private enum State { HELD, RELEASED, LOST }

    private final Turnstile turnstile;
    private final LockStore store;
    private final LeaseKeeper keeper;
    private final String name;
    private final String owner;
    private final String token;
    private final Grant grant;
    private final LockOptions options;
    private final long startNanos;
    private final ReentrantLock storeCalls = new ReentrantLock();
    private final CompletableFuture<LeaseLoss> lost = new CompletableFuture<>();

    private volatile State state = State.HELD;
    private volatile long deadlineNanos;
    private volatile long confirmedNanos;
    private volatile Duration ttl;
    private volatile @Nullable ReleaseOutcome outcome;
    /** Set before {@link #state} becomes LOST, so whoever sees LOST sees the loss. */
    private volatile @Nullable LeaseLoss loss;
    /** Whether the store said others ended the lease (see {@link LeaseProof#ended}, {@link ReleaseOutcome#NOT_OWNER}). */
    private volatile boolean endedByOthers;
    private @Nullable ScheduledFuture<?> renewal; // guarded by this
    private DeadlineTimer.@Nullable Check deadlineCheck; // guarded by this
    private boolean deadlineWatched; // guarded by this
    /** The store's limit on the lease's proof (a suspended session), or {@link LeaseProof#NO_LIMIT}. */
    private volatile long proofLimitNanos = LeaseProof.NO_LIMIT; // written under this
    private @Nullable ReleaseWatch proofWatch; // guarded by this
    private @Nullable ReleaseWatch releaseWatch; // guarded by this
    private final AtomicBoolean noticeCheckPending = new AtomicBoolean();

    HeldLease(Turnstile turnstile, LockStore store, LeaseKeeper keeper, String name, String owner, String token,
            Grant grant, LockOptions options, long startNanos) {
        this.turnstile = turnstile;
        this.store = store;
        this.keeper = keeper;
        this.name = name;
        this.owner = owner;
        this.token = token;
        this.grant = grant;
        this.options = options;
        this.startNanos = startNanos;
        this.ttl = options.lockAtMostFor();
        this.confirmedNanos = startNanos;
        this.deadlineNanos = startNanos + ttl.toNanos() - driftMargin(ttl);
    }

    /**
     * Clock-rate drift and scheduling slack: 1% of the TTL plus 2 ms (as Redlock does), but at
     * least a tenth of the TTL up to 100 ms, so that a timer a little late on a loaded host still
     * reports the loss before the store can grant the lock to someone else.
     */
    static long driftMargin(Duration ttl) {
        long ttlNanos = ttl.toNanos();
        return Math.max(ttlNanos / 100 + 2_000_000L, Math.min(ttlNanos / 10, 100_000_000L));
    }

    /**
     * Arms the keep-alive and the deadline check the options ask for.
     *
     * @throws java.util.concurrent.RejectedExecutionException if the client's timer has stopped
     *     (the client is closing)
     */
    synchronized void start() {
        deadlineWatched = options.keepAlive() || options.onLost().isPresent();
        rearm();
        ReleaseWatch w = store.capability(WatchesLeases.class)
                .map(watching -> watching.watchLease(name, token, proof()))
                .orElse(ReleaseWatch.NONE);
        if (state == State.HELD) {
            proofWatch = w;
        } else {
            closeQuietly(w);
        }
        if (options.keepAlive() && options.onLost().isPresent()) {
            // Someone stops work on loss: where the store tells of releases (Redis, PostgreSQL),
            // a forced release is checked at once rather than found at the next renewal. Subscribed
            // on the keeper's thread, so that neither the acquire nor the release waits for it.
            keeper.execute(this::watchReleases);
        }
    }

    /** What a store that watches leases tells this lease: how long it is proven held, and its end. */
    private LeaseProof proof() {
        return new LeaseProof() {
            @Override
            public void provenUntil(long nanoTime) {
                limitProof(nanoTime);
            }

            @Override
            public void lost(String reason) {
                markLost(reason);
            }

            @Override
            public void ended(String reason) {
                markEnded(reason);
            }
        };
    }

    private void watchReleases() {
        if (state != State.HELD) {
            return;
        }
        ReleaseWatch r;
        try {
            NotifiesReleases notifying = store.capability(NotifiesReleases.class).orElse(null);
            if (notifying == null) {
                return;   // renewals find a forced release
            }
            r = notifying.watchReleases(name, this::releaseNoticed);
        } catch (RuntimeException e) {
            log.debug("cannot watch releases of '{}' (renewals still find a forced release): {}", name, e.toString());
            return;
        }
        synchronized (this) {
            if (state == State.HELD) {
                releaseWatch = r;
                return;
            }
        }
        closeQuietly(r);
    }

    /**
     * The store says a lease on this name ended: a forced release (no token) or this lease's own
     * token ended by someone else. Notices can be spurious, so the store is asked (a renewal, which
     * refuses a lease that is gone); notices that come while a check is pending share it.
     */
    private void releaseNoticed(@Nullable String released) {
        if (state != State.HELD || (released != null && !released.equals(token))) {
            return;
        }
        if (noticeCheckPending.compareAndSet(false, true)) {
            keeper.execute(() -> {
                noticeCheckPending.set(false); // a notice during the renewal asks for another
                renewOnce(true);
            });
        }
    }

    /**
     * The store can vouch for the lease only until {@code limit}: the deadline moves there if that is
     * earlier than the TTL's. A session-bound store moves the limit on after every answered request,
     * so the deadline may move later too, but only while it has not passed: once passed the lease is
     * lost (docs/design.md, rule 8), and a proof that comes late (the process was frozen, and its timers
     * with it) cannot revive it.
     */
    private void limitProof(long limit) {
        String reason;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0) {
                reason = deadlineReason();
            } else {
                long armed = deadlineNanos;
                proofLimitNanos = limit;
                deadlineNanos = limited(confirmedNanos + ttl.toNanos() - driftMargin(ttl));
                if (deadlineNanos - now > 0) {
                    // An earlier deadline needs the check sooner; a later one is found by the check
                    // already armed, which re-arms itself (so a limit moved on every heartbeat does
                    // not cancel and reschedule a timer each time).
                    if (deadlineWatched && deadlineNanos - armed < 0) {
                        armDeadlineCheck();
                    }
                    return;
                }
                reason = SUSPENDED;
            }
        }
        markLost(reason);
    }

    private static final String SUSPENDED = "the store's session could no longer vouch for it "
            + "(no answer from the server within the session timeout)";

    private String deadlineReason() {
        long limit = proofLimitNanos; // a racy read only picks the wording
        return limit != LeaseProof.NO_LIMIT && deadlineNanos == limit ? SUSPENDED
                : "its local deadline passed without a confirmed renewal";
    }

    private long limited(long deadline) {
        return proofLimitNanos == LeaseProof.NO_LIMIT || deadline - proofLimitNanos < 0 ? deadline : proofLimitNanos;
    }

    @Override public String name() { return name; }
    @Override public String owner() { return owner; }
    @Override public String token() { return token; }
    @Override public long fence() { return grant.fence(); }
    @Override public Instant acquiredAt() { return grant.acquiredAt(); }

    @Override
    public Instant expiresAt() {
        return grant.acquiredAt().plusNanos(confirmedNanos - startNanos).plus(ttl);
    }

    @Override
    public boolean isHeld() {
        if (state != State.HELD) {
            return false;
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            markLost(deadlineReason());
            return false;
        }
        return true;
    }

    @Override
    public Duration timeLeft() {
        long left = deadlineNanos - System.nanoTime();
        return isHeld() && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }

    @Override
    public void extend(Duration lockAtMostFor) {
        Validation.ttl("lockAtMostFor", lockAtMostFor);
        storeCalls.lock();
        try {
            if (state == State.RELEASED) {
                throw new IllegalStateException("lease on lock '" + name + "' was released; acquire it again");
            }
            if (!isHeld()) {
                // the loss as recorded; markLost gives it (or one) should it be read mid-markLost
                LeaseLoss lost = loss;
                throw new LeaseLostException(lost != null ? lost : markLost(deadlineReason()));
            }
            long t0 = System.nanoTime();
            boolean ok;
            try {
                ok = store.extend(name, token, lockAtMostFor);
            } catch (StoreUnavailableException e) {
                turnstile.listeners.storeFailed(name, e);
                throw e;
            }
            if (ok) {
                LeaseLoss late = confirmed(t0, lockAtMostFor);
                if (late != null) {
                    throw new LeaseLostException(late);
                }
            } else {
                throw new LeaseLostException(markLost("the store refused to extend it (expired, taken over or force-released)"));
            }
        } finally {
            storeCalls.unlock();
        }
    }

    @Override
    public ReleaseOutcome release() {
        return release(options.lockAtLeastFor());
    }

    @Override
    public ReleaseOutcome release(Duration lockAtLeastFor) {
        Validation.nonNegative("lockAtLeastFor", lockAtLeastFor);
        storeCalls.lock();
        try {
            ReleaseOutcome done = outcome;
            if (done != null) {
                return done;
            }
            boolean wasLost;
            synchronized (this) {
                wasLost = state == State.LOST;
                state = wasLost ? State.LOST : State.RELEASED;
                disarm();
            }
            turnstile.forget(this);
            ReleaseResult applied;
            try {
                applied = endLeaseThroughInterrupts(lockAtLeastFor, wasLost);
            } catch (StoreUnavailableException e) {
                turnstile.listeners.storeFailed(name, e);
                throw e;
            }
            long now = System.nanoTime();
            ReleaseOutcome result;
            if (applied != ReleaseResult.NOT_HELD) {
                // What the store applied, by its clock; only a store that does not say is judged by
                // the time this process measured since the acquire.
                result = switch (applied) {
                    case FREED -> ReleaseOutcome.RELEASED;
                    case KEPT_FOR_AT_LEAST -> ReleaseOutcome.SHORTENED_TO_AT_LEAST;
                    default -> now - startNanos < lockAtLeastFor.toNanos()
                            ? ReleaseOutcome.SHORTENED_TO_AT_LEAST : ReleaseOutcome.RELEASED;
                };
            } else {
                // A lease the store said others ended (forced, taken over) was not an expiry.
                boolean expired = wasLost ? !endedByOthers : now - deadlineNanos >= 0;
                result = expired ? ReleaseOutcome.ALREADY_EXPIRED : ReleaseOutcome.NOT_OWNER;
                log.warn("lock '{}' (fence {}) was no longer held at release ({}): the work it protected may have "
                        + "overlapped with another holder", name, grant.fence(), result);
            }
            outcome = result;
            if (!wasLost) {
                turnstile.listeners.released(name, grant.fence(), startNanos);
            }
            return result;
        } finally {
            storeCalls.unlock();
        }
    }

    /**
     * Ends the lease in the store whatever interrupts the calling thread gets: that is how a job's
     * {@code finally} runs after an executor's {@code shutdownNow}, and clients that check for an
     * interrupt before they send or while they wait (Lettuce, Curator, the MongoDB driver) failed
     * the release and left the lock taken until its TTL. A pending interrupt is set aside for the
     * call. One that comes during it still cuts it off there; the call is then made again on a
     * keeper thread, which no interrupt of the caller's reaches, and waited for without being
     * interruptible (bounded by the store's own timeouts). The caller gets its interrupt back.
     */
    private ReleaseResult endLeaseThroughInterrupts(Duration lockAtLeastFor, boolean wasLost) {
        boolean interrupted = Thread.interrupted();
        try {
            try {
                return turnstile.endLease(name, token, lockAtLeastFor);
            } catch (StoreUnavailableException cut) {
                if (!Thread.interrupted()) {
                    throw cut;
                }
                interrupted = true;
                log.debug("releasing lock '{}' was cut off by an interrupt ({}); releasing it again on a keeper thread",
                        name, cut.getMessage());
            }
            long again = System.nanoTime();
            CompletableFuture<ReleaseResult> retry = new CompletableFuture<>();
            Runnable call = () -> {
                try {
                    retry.complete(turnstile.endLease(name, token, lockAtLeastFor));
                } catch (RuntimeException | Error e) {
                    retry.completeExceptionally(e);
                }
            };
            try {
                keeper.execute(call);
            } catch (RejectedExecutionException closing) {
                call.run(); // the client is closing: here, the interrupt still set aside
            }
            ReleaseResult result;
            while (true) {
                try {
                    result = retry.get();
                    break;
                } catch (InterruptedException more) {
                    interrupted = true;
                } catch (ExecutionException failed) {
                    Throwable cause = failed.getCause();
                    if (cause instanceof RuntimeException r) {
                        throw r;
                    }
                    if (cause instanceof Error e) {
                        throw e;
                    }
                    throw new IllegalStateException(cause);
                }
            }
            // The cut-off call may have been applied, and the lock then is no longer this token's.
            // Asked again before the local deadline (so before the store could expire it), and
            // with no word of others ending it, that was the cut-off call's doing.
            if (result == ReleaseResult.NOT_HELD && !wasLost && !endedByOthers && again - deadlineNanos < 0) {
                return ReleaseResult.ENDED;
            }
            return result;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        release();
    }

    @Override
    public CompletionStage<LeaseLoss> lost() {
        watchDeadline();
        return lost.minimalCompletionStage();
    }

    /**
     * A third of the current TTL (the one last confirmed, so an extend to a shorter or longer TTL
     * changes the pace), or the interval set in the options if that is shorter.
     */
    private Duration renewInterval() {
        Duration third = ttl.dividedBy(3);
        Duration set = options.keepAliveIntervalIfSet();
        return set != null && set.compareTo(third) < 0 ? set : third;
    }

    /**
     * Caller holds this. Points the next renewal (if kept alive) and the deadline check (if
     * watched) at the last confirmed acquire, renewal or extend: both move with every confirmation,
     * earlier as well as later (docs/design.md, rule 8), so a shorter TTL is neither renewed too late
     * nor reported lost after the store has already freed the lock.
     */
    private void rearm() {
        if (state != State.HELD) {
            return;
        }
        if (options.keepAlive()) {
            if (renewal != null) {
                renewal.cancel(false);
            }
            renewal = keeper.schedule(() -> keeper.execute(() -> renewOnce(false)),
                    confirmedNanos + renewInterval().toNanos() - System.nanoTime());
        }
        if (deadlineWatched) {
            armDeadlineCheck();
        }
    }

    /** Caller holds this. */
    private void armDeadlineCheck() {
        if (deadlineCheck != null) {
            deadlineCheck.cancel();
        }
        deadlineCheck = keeper.checkAt(deadlineNanos, this::checkDeadline);
    }

    /**
     * Caller holds this. Never throws: it runs on the way to a loss notice and to a release, which a
     * watch that fails to close must not stop (closing one is best effort; the lease is over anyway).
     */
    private void disarm() {
        if (proofWatch != null) {
            ReleaseWatch p = proofWatch;
            proofWatch = null;
            closeQuietly(p);
        }
        if (releaseWatch != null) {
            ReleaseWatch r = releaseWatch;
            releaseWatch = null;
            try {
                keeper.execute(() -> closeQuietly(r)); // may be a round trip (Redis UNSUBSCRIBE): not on the release's path
            } catch (RejectedExecutionException closing) {
                closeQuietly(r); // the client is closing: its leases end here
            }
        }
        if (renewal != null) {
            renewal.cancel(false);
            renewal = null;
        }
        if (deadlineCheck != null) {
            deadlineCheck.cancel();
            deadlineCheck = null;
        }
    }

    private void closeQuietly(ReleaseWatch w) {
        try {
            w.close();
        } catch (RuntimeException e) {
            log.warn("lock '{}': closing the store's watch of the lease failed (ignored): {}", name, e.toString());
        }
    }

    /** A retry after a failed renewal; the deadline stays where the last confirmation put it. */
    private synchronized void scheduleRenewal(Duration delay) {
        if (state == State.HELD) {
            renewal = keeper.schedule(() -> keeper.execute(() -> renewOnce(false)), delay.toNanos());
        }
    }

    /** One renewal; {@code afterNotice}: the store told of a release, so a refusal means others ended the lease. */
    private void renewOnce(boolean afterNotice) {
        storeCalls.lock();
        try {
            if (!isHeld()) {
                return;
            }
            long t0 = System.nanoTime();
            Duration currentTtl = ttl;
            boolean ok;
            try {
                ok = store.extend(name, token, currentTtl);
            } catch (RuntimeException e) {
                if (e instanceof StoreUnavailableException unavailable) {
                    turnstile.listeners.storeFailed(name, unavailable);
                }
                long left = deadlineNanos - System.nanoTime();
                log.warn("renewing lock '{}' failed ({}); retrying, lease is lost in {} ms unless a renewal succeeds",
                        name, e.toString(), Math.max(0, left / 1_000_000));
                scheduleRenewal(Duration.ofNanos(Math.max(5_000_000L, Math.min(renewInterval().toNanos(), left / 4))));
                return;
            }
            if (ok) {
                confirmed(t0, currentTtl);
            } else if (afterNotice) {
                markEnded("it was force-released (told by the store)");
            } else {
                markLost("the store refused to renew it (expired, taken over or force-released)");
            }
        } finally {
            storeCalls.unlock();
        }
    }

    /**
     * A renewal or extend that started at {@code t0} was confirmed: the new deadline and TTL rule
     * from now on. Unless the deadline passed (or the lease was reported lost) while the store call
     * was in flight: a lease once past its deadline stays lost, whatever the store says later.
     *
     * @return null if the lease is held on, else its loss
     */
    private @Nullable LeaseLoss confirmed(long t0, Duration newTtl) {
        synchronized (this) {
            if (state == State.HELD && System.nanoTime() - deadlineNanos < 0) {
                ttl = newTtl;
                confirmedNanos = t0;
                deadlineNanos = limited(t0 + newTtl.toNanos() - driftMargin(newTtl));
                rearm();
                return null;
            }
        }
        return markLost(deadlineReason());
    }

    private synchronized void watchDeadline() {
        if (!deadlineWatched && state == State.HELD) {
            deadlineWatched = true;
            armDeadlineCheck();
        }
    }

    private void checkDeadline() {
        if (state != State.HELD) {
            return;
        }
        if (deadlineNanos - System.nanoTime() <= 0) {
            markLost(deadlineReason());
            return;
        }
        synchronized (this) {
            if (state == State.HELD) {
                armDeadlineCheck(); // a confirmation moved the deadline as this check came due
            }
        }
    }

    /** Marks the lease lost, ended by others (see {@link LeaseProof#ended}), unless it already ended. */
    private void markEnded(String reason) {
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            if (System.nanoTime() - deadlineNanos >= 0) {
                // past its deadline the lease had expired first; whoever removed it came after
                reason = deadlineReason();
            } else {
                endedByOthers = true;
            }
        }
        markLost(reason);
    }

    /** Marks the lease lost once; returns the loss (the first one if already lost). */
    LeaseLoss markLost(String reason) {
        LeaseLoss loss;
        synchronized (this) {
            if (state != State.HELD) {
                LeaseLoss earlier = this.loss;
                return earlier != null ? earlier : new LeaseLoss(name, grant.fence(), reason, Instant.now());
            }
            loss = new LeaseLoss(name, grant.fence(), reason, Instant.now());
            this.loss = loss; // before the state: a reader that sees LOST sees the loss
            state = State.LOST;
            disarm();
        }
        log.warn("lease on lock '{}' (fence {}) is lost: {}", name, grant.fence(), reason);
        turnstile.forget(this);
        keeper.execute(() -> {
            lost.complete(loss);
            options.onLost().ifPresent(callback -> {
                try {
                    callback.accept(loss);
                } catch (RuntimeException e) {
                    log.error("onLost callback for lock '{}' threw", name, e);
                }
            });
            turnstile.listeners.lost(loss); // after the holder's own hooks: stopping the work comes first
        });
        return loss;
    }

    @Override
    public String toString() {
        return "Lease{name='" + name + "', owner='" + owner + "', fence=" + grant.fence() + ", state=" + state + "}";
    }
}
