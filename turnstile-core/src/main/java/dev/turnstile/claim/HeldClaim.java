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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A claim: its key and version, a local deadline on the monotonic clock, and the guarded writes.
 * Writes are serialised on the claim, so a keep-alive can never land after an unlock and lock the
 * task again.
 */
final class HeldClaim implements Claim {
    private static final Logger log = LoggerFactory.getLogger(HeldClaim.class);
    private enum State { HELD, ENDED, LOST }

    private final TaskClaimer claimer;
    private final ClaimStore store;
    private final Object key;
    private final long version;
    private final CompletableFuture<ClaimLoss> lost = new CompletableFuture<>();
    private final Instant lockedAt;
    private volatile long deadlineNanos;
    private volatile State state = State.HELD;
    private String endedBy;
    private ScheduledFuture<?> deadlineCheck;
    private ScheduledFuture<?> keepAlive;

    HeldClaim(TaskClaimer claimer, ClaimedRow row, long startNanos) {
        this.claimer = claimer;
        this.store = claimer.store();
        this.key = row.key();
        this.version = row.version();
        this.lockedAt = row.lockedAt();
        this.deadlineNanos = startNanos + claimer.lockTimeout().toNanos() - TaskClaimer.driftMargin(claimer.lockTimeout());
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
        return state == State.HELD && System.nanoTime() - deadlineNanos < 0;
    }

    @Override
    public synchronized ClaimOutcome unlock() {
        return end("unlock", () -> store.unlock(key, version, Map.of()));
    }

    @Override
    public synchronized ClaimOutcome relock() {
        return end("relock", () -> store.relock(key, version, claimer.relockFloor(), claimer.lockTimeout()));
    }

    @Override
    public synchronized ClaimOutcome moveTo(Object phase) {
        ClaimFilter.checkValue("phase", phase);
        Map<String, Object> values = Map.of(store.table().phaseColumn(), phase);
        return end("moveTo", () -> store.unlock(key, version, values));
    }

    @Override
    public synchronized ClaimOutcome update(Map<String, ?> values) {
        Map<String, Object> checked = checkValues(values);
        return write("update", () -> store.update(key, version, checked), false);
    }

    @Override
    public synchronized ClaimOutcome heartbeat() {
        long start = System.nanoTime();
        ClaimOutcome outcome = write("heartbeat", () -> store.heartbeat(key, version), false);
        if (outcome == ClaimOutcome.APPLIED) {
            deadlineNanos = start + claimer.lockTimeout().toNanos() - TaskClaimer.driftMargin(claimer.lockTimeout());
            rearmDeadline();
        }
        return outcome;
    }

    @Override
    public CompletionStage<ClaimLoss> lost() {
        synchronized (this) {
            if (state == State.HELD && deadlineCheck == null) {
                rearmDeadline();
            }
        }
        return lost.minimalCompletionStage();
    }

    @Override
    public synchronized void close() {
        if (state != State.HELD) {
            return;
        }
        try {
            relock();
        } catch (StoreUnavailableException e) {
            log.warn("task '{}': could not relock it on close ({}); it is due again after the lock timeout", id(),
                    e.getMessage());
        }
    }

    private interface Write {
        boolean run();
    }

    private ClaimOutcome end(String what, Write write) {
        return write(what, write, true);
    }

    private ClaimOutcome write(String what, Write write, boolean ends) {
        if (state == State.ENDED) {
            throw new IllegalStateException("the claim of task '" + id() + "' was already ended by " + endedBy
                    + ": claim the task again to write to it");
        }
        if (state == State.LOST) {
            return ClaimOutcome.LOST;
        }
        if (!write.run()) {
            markLost("a " + what + " was refused: the task was claimed again by someone else (its version is no longer "
                    + version + ") or no longer exists");
            return ClaimOutcome.LOST;
        }
        if (ends) {
            state = State.ENDED;
            endedBy = what;
            cancelTimers();
        }
        return ClaimOutcome.APPLIED;
    }

    synchronized void armKeepAlive() {
        long interval = claimer.keepAlive().toNanos();
        keepAlive = claimer.schedule(this::keepAliveTick, interval);
        rearmDeadline();
    }

    private void keepAliveTick() {
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            try {
                heartbeat();
            } catch (RuntimeException e) {
                log.warn("task '{}': keep-alive failed ({}); trying again until the claim's deadline", id(), e.getMessage());
            }
            if (state == State.HELD) {
                keepAlive = claimer.schedule(this::keepAliveTick, claimer.keepAlive().toNanos());
            }
        }
    }

    private void rearmDeadline() {
        if (deadlineCheck != null) {
            deadlineCheck.cancel(false);
        }
        long delay = deadlineNanos - System.nanoTime();
        deadlineCheck = claimer.schedule(this::deadlinePassed, delay);
    }

    private synchronized void deadlinePassed() {
        if (state == State.HELD && System.nanoTime() - deadlineNanos >= 0) {
            // Only notify: the version still decides whether a later write is applied.
            notifyLost("the lock timeout passed without a confirmed keep-alive: another worker may claim the task now");
        }
    }

    private void markLost(String reason) {
        state = State.LOST;
        cancelTimers();
        notifyLost(reason);
    }

    private void notifyLost(String reason) {
        if (lost.isDone()) {
            return;
        }
        log.warn("task '{}' (claim version {}) lost: {}", id(), version, reason);
        ClaimLoss loss = new ClaimLoss(id(), version, reason, Instant.now());
        claimer.runAsync(() -> lost.complete(loss));
    }

    private void cancelTimers() {
        if (deadlineCheck != null) {
            deadlineCheck.cancel(false);
        }
        if (keepAlive != null) {
            keepAlive.cancel(false);
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
