package dev.turnstile.claim;

import dev.turnstile.StoreUnavailableException;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A claim: its key and version, a local deadline on the monotonic clock, and the guarded writes.
 *
 * <p>Two locks, as for leases ({@code HeldLease}): {@link #storeCalls} serialises this claim's
 * store calls, so a keep-alive can never land after an unlock and lock the task again; the
 * monitor guards the state and the timers and is never held across a store call. The deadline
 * check, {@link #isHeld()} and {@link #lost()} take only the monitor, so a store call that hangs
 * (a partitioned connection with no socket timeout) cannot delay the loss report past the
 * deadline, which comes before any other worker can claim the task.
 */
final class HeldClaim implements Claim {
    private static final Logger log = LoggerFactory.getLogger(HeldClaim.class);

    /**
     * HELD: the deadline is ahead. EXPIRED: the deadline passed and the loss was reported; the claim
     * is never held again, but a guarded write other than a heartbeat is still tried (the version
     * decides). LOST: a guarded write was refused; nothing more is tried. ENDED: unlock, relock or
     * moveTo applied.
     */
    private enum State { HELD, EXPIRED, LOST, ENDED }

    private static final String DEADLINE = "the lock timeout passed without a confirmed keep-alive: another worker may "
            + "claim the task now";

    private final TaskClaimer claimer;
    private final ClaimStore store;
    private final Object key;
    private final long version;
    private final CompletableFuture<ClaimLoss> lost = new CompletableFuture<>();
    private final Instant lockedAt;
    private final ReentrantLock storeCalls = new ReentrantLock();
    private volatile long deadlineNanos; // written under this
    private volatile State state = State.HELD; // written under this
    private @Nullable String endedBy; // guarded by this
    private @Nullable ClaimLoss loss; // guarded by this
    private boolean deadlineWatched; // guarded by this
    private @Nullable ScheduledFuture<?> deadlineCheck; // guarded by this
    private @Nullable ScheduledFuture<?> keepAlive; // guarded by this

    HeldClaim(TaskClaimer claimer, ClaimedRow row, long startNanos) {
        this.claimer = claimer;
        this.store = claimer.store();
        this.key = row.key();
        this.version = row.version();
        this.lockedAt = row.lockedAt();
        this.deadlineNanos = deadlineAfter(startNanos);
    }

    /** The store's lockedAt was set after {@code sentNanos}: no one can claim the task before this. */
    private long deadlineAfter(long sentNanos) {
        return sentNanos + claimer.lockTimeout().toNanos() - TaskClaimer.driftMargin(claimer.lockTimeout());
    }

    @Override
    public String id() {
        return String.valueOf(key);
    }

    @Override
    public Object key() {
        return key;
    }

    @Override
    public long version() {
        return version;
    }

    @Override
    public Instant lockedAt() {
        return lockedAt;
    }

    @Override
    public boolean isHeld() {
        if (state != State.HELD) {
            return false;
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            expire();
            return false;
        }
        return true;
    }

    @Override
    public ClaimOutcome unlock() {
        return write("unlock", () -> store.unlock(key, version, Map.of()), true);
    }

    @Override
    public ClaimOutcome relock() {
        return write("relock", () -> store.relock(key, version, claimer.relockFloor(), claimer.lockTimeout()), true);
    }

    @Override
    public ClaimOutcome moveTo(Object phase) {
        ClaimFilter.checkValue("phase", phase);
        Map<String, Object> values = Map.of(store.table().phaseColumn(), phase);
        return write("moveTo", () -> store.unlock(key, version, values), true);
    }

    @Override
    public ClaimOutcome update(Map<String, ?> values) {
        Map<String, Object> checked = checkValues(values);
        return write("update", () -> store.update(key, version, checked), false);
    }

    @Override
    public ClaimOutcome heartbeat() {
        storeCalls.lock();
        try {
            if (state == State.ENDED) {
                throw ended();
            }
            return beat();
        } finally {
            storeCalls.unlock();
        }
    }

    /**
     * Caller holds {@link #storeCalls}. A heartbeat of a claim that is no longer held writes
     * nothing: keeping the task claimed for a holder already told of the loss would only delay the
     * next worker. One confirmed after the deadline passed does not revive the claim either.
     */
    private ClaimOutcome beat() {
        if (!isHeld()) {
            return ClaimOutcome.LOST;
        }
        long sent = System.nanoTime();
        if (!store.heartbeat(key, version)) {
            markLost("a heartbeat was refused: " + REFUSED);
            return ClaimOutcome.LOST;
        }
        synchronized (this) {
            if (state == State.HELD && System.nanoTime() - deadlineNanos < 0) {
                deadlineNanos = deadlineAfter(sent);
                if (deadlineWatched) {
                    armDeadlineCheck();
                }
                return ClaimOutcome.APPLIED;
            }
        }
        expire(); // confirmed too late: the deadline passed while the heartbeat was under way
        return ClaimOutcome.LOST;
    }

    @Override
    public CompletionStage<ClaimLoss> lost() {
        if (isHeld()) {
            synchronized (this) {
                if (!deadlineWatched && state == State.HELD) {
                    deadlineWatched = true;
                    armDeadlineCheck();
                }
            }
        }
        return lost.minimalCompletionStage();
    }

    @Override
    public void close() {
        storeCalls.lock();
        try {
            if (state != State.HELD && state != State.EXPIRED) {
                return;
            }
            try {
                relock();
            } catch (StoreUnavailableException | dev.turnstile.StoreSchemaException e) {
                log.warn("task '{}': could not relock it on close ({}); it is due again after the lock timeout", id(),
                        e.getMessage());
            }
        } finally {
            storeCalls.unlock();
        }
    }

    private interface Write {
        boolean run();
    }

    private static final String REFUSED = "the task was claimed again by someone else (its version is no longer the "
            + "claim's) or no longer exists";

    private IllegalStateException ended() {
        String by;
        synchronized (this) {
            by = endedBy;
        }
        return new IllegalStateException("the claim of task '" + id() + "' was already ended by " + by
                + ": claim the task again to write to it");
    }

    /** A guarded write other than a heartbeat: tried while held and after the deadline passed (the version decides). */
    private ClaimOutcome write(String what, Write write, boolean ends) {
        storeCalls.lock();
        try {
            State s = state;
            if (s == State.ENDED) {
                throw ended();
            }
            if (s == State.LOST) {
                return ClaimOutcome.LOST;
            }
            boolean applied = ends ? writeThroughInterrupts(write) : write.run();
            if (!applied) {
                markLost("a " + what + " was refused: " + REFUSED);
                return ClaimOutcome.LOST;
            }
            if (ends) {
                synchronized (this) {
                    state = State.ENDED;
                    endedBy = what;
                    cancelTimers();
                }
            }
            return ClaimOutcome.APPLIED;
        } finally {
            storeCalls.unlock();
        }
    }

    /**
     * Caller holds {@link #storeCalls}. An ending write runs to its end whatever interrupts the
     * calling thread gets (a step's {@code finally} after an executor's {@code shutdownNow}): the
     * MongoDB driver checks for an interrupt before it sends and while it waits, and failed the
     * write, leaving the task claimed until its lock timeout. A pending interrupt is set aside for
     * the call; one that comes during it still cuts it off there, and the write is then made again
     * on the claimer's worker pool, waited for without being interruptible (bounded by the store's
     * timeouts). The caller gets its interrupt back.
     */
    private boolean writeThroughInterrupts(Write write) {
        boolean interrupted = Thread.interrupted();
        try {
            try {
                return write.run();
            } catch (StoreUnavailableException cut) {
                if (!Thread.interrupted()) {
                    throw cut;
                }
                interrupted = true;
            }
            long again = System.nanoTime();
            CompletableFuture<Boolean> retry = new CompletableFuture<>();
            claimer.runAsync(() -> {
                try {
                    retry.complete(write.run());
                } catch (RuntimeException | Error e) {
                    retry.completeExceptionally(e);
                }
            });
            boolean applied;
            while (true) {
                try {
                    applied = retry.get();
                    break;
                } catch (InterruptedException more) {
                    interrupted = true;
                } catch (java.util.concurrent.ExecutionException failed) {
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
            // The cut-off write may have been applied, and then its version no longer matches.
            // Made again before the claim's deadline, when no other worker can have claimed the
            // task yet, a refusal can only be that write's doing.
            return applied || again - deadlineNanos < 0;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    synchronized void armKeepAlive() {
        keepAlive = claimer.schedule(this::keepAliveTick, claimer.keepAliveNanos());
        deadlineWatched = true;
        armDeadlineCheck();
    }

    /** Runs on the claimer's worker pool: a hanging store call blocks this tick only, never the deadline check. */
    private void keepAliveTick() {
        if (state != State.HELD) {
            return;
        }
        storeCalls.lock();
        try {
            if (state == State.HELD) {
                beat();
            }
        } catch (RuntimeException e) {
            log.warn("task '{}': keep-alive failed ({}); trying again until the claim's deadline", id(), e.getMessage());
        } finally {
            storeCalls.unlock();
        }
        synchronized (this) {
            if (state == State.HELD) {
                keepAlive = claimer.schedule(this::keepAliveTick, claimer.keepAliveNanos());
            }
        }
    }

    /** Caller holds this. */
    private void armDeadlineCheck() {
        if (deadlineCheck != null) {
            deadlineCheck.cancel(false);
        }
        deadlineCheck = claimer.schedule(this::checkDeadline, deadlineNanos - System.nanoTime());
    }

    /** The timer's check: takes only the monitor, so it never waits for a store call. */
    private void checkDeadline() {
        if (state != State.HELD) {
            return;
        }
        if (System.nanoTime() - deadlineNanos >= 0) {
            expire();
            return;
        }
        synchronized (this) {
            if (state == State.HELD) {
                armDeadlineCheck(); // a confirmation moved the deadline as this check came due
            }
        }
    }

    /** The deadline passed: reported once, and the claim is never held again. */
    private void expire() {
        @Nullable ClaimLoss reported;
        synchronized (this) {
            if (state != State.HELD || System.nanoTime() - deadlineNanos < 0) {
                return;
            }
            state = State.EXPIRED;
            cancelTimers();
            reported = firstLoss(DEADLINE);
        }
        notifyLost(reported);
    }

    /** A guarded write was refused: nothing more is tried. */
    private void markLost(String reason) {
        @Nullable ClaimLoss reported;
        synchronized (this) {
            if (state == State.ENDED) {
                return;
            }
            state = State.LOST;
            cancelTimers();
            reported = firstLoss(reason);
        }
        notifyLost(reported);
    }

    /** Caller holds this. The loss to report, or null if one was already reported. */
    private @Nullable ClaimLoss firstLoss(String reason) {
        if (loss != null) {
            return null;
        }
        loss = new ClaimLoss(id(), version, reason, Instant.now());
        return loss;
    }

    /** Outside the monitor; completes on the claimer's worker pool, so callbacks never run under a caller's call. */
    private void notifyLost(@Nullable ClaimLoss reported) {
        if (reported == null) {
            return;
        }
        log.warn("task '{}' (claim version {}) lost: {}", id(), version, reported.reason());
        claimer.runAsync(() -> lost.complete(reported));
    }

    /** Caller holds this. */
    private void cancelTimers() {
        if (deadlineCheck != null) {
            deadlineCheck.cancel(false);
            deadlineCheck = null;
        }
        if (keepAlive != null) {
            keepAlive.cancel(false);
            keepAlive = null;
        }
    }

    private Map<String, Object> checkValues(Map<String, ?> values) {
        if (values == null || values.isEmpty()) {
            throw new IllegalArgumentException("no values to write: give at least one column and its value");
        }
        ClaimTable t = store.table();
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, String> seen = new HashMap<>();
        for (Map.Entry<String, ?> e : values.entrySet()) {
            String column = Identifiers.column("column", e.getKey());
            for (String reserved : new String[] {t.idColumn(), t.lockedAtColumn(), t.versionColumn()}) {
                if (reserved.equalsIgnoreCase(column)) {
                    throw new IllegalArgumentException("column '" + column + "' is the key, lockedAt or version column: "
                            + "claiming writes it itself (use unlock, relock or moveTo)");
                }
            }
            for (String reserved : store.reservedColumns()) {
                if (reserved.equalsIgnoreCase(column)) {
                    throw new IllegalArgumentException("column '" + column + "' is kept by the store (" + store.description()
                            + ") and cannot be written: write the task's own columns only");
                }
            }
            if (seen.put(column.toLowerCase(java.util.Locale.ROOT), column) != null) {
                throw new IllegalArgumentException("column '" + column + "' is given twice");
            }
            if (e.getValue() != null) {
                ClaimFilter.checkValue("value for '" + column + "'", e.getValue());
            }
            out.put(column, e.getValue());
        }
        return Collections.unmodifiableMap(out);
    }

    @Override
    public String toString() {
        return "Claim[" + id() + " v" + version + " " + state + "]";
    }
}
