package dev.turnstile.claim;

import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What a task table holds, for an operator: how many tasks each phase has, how many of them are
 * free, claimed or overdue, and the stuck tasks, oldest first. Read by {@link ClaimStore#summarize},
 * every task judged by one reading of the store's clock.
 *
 * <p>The store keeps one time per task ({@code lockedAt}), so a task that waits out a
 * {@link Claim#relock} back-off counts as claimed until the back-off ends: both are "not due yet".
 *
 * @param storeNow the store's clock when it was read, or {@code null} if the store reports none
 * @param lockTimeout the lock timeout the counts were judged by (the claimers' own)
 * @param stuckAfter how long without progress makes a task stuck
 * @param phases the counts per phase, ordered by phase; at most {@link #MAX_PHASES}
 * @param morePhases whether the table has more phases than were counted
 * @param stuck the stuck tasks, the longest without progress first
 */
public record ClaimSummary(@Nullable Instant storeNow, Duration lockTimeout, Duration stuckAfter, List<PhaseCounts> phases,
        boolean morePhases, List<StuckTask> stuck) {
    /** The most phases a summary counts: a phase column with a value per task is not a phase column. */
    public static final int MAX_PHASES = 200;

    /**
     * Checks and copies the lists.
     *
     * @param storeNow the store's clock, or null
     * @param lockTimeout the lock timeout
     * @param stuckAfter the stuck threshold
     * @param phases the counts per phase
     * @param morePhases whether phases were left out
     * @param stuck the stuck tasks
     * @throws IllegalArgumentException if a duration or a list is null
     */
    public ClaimSummary {
        if (lockTimeout == null || stuckAfter == null || phases == null || stuck == null) {
            throw new IllegalArgumentException("lockTimeout, stuckAfter, phases and stuck are required");
        }
        phases = List.copyOf(phases);
        stuck = List.copyOf(stuck);
    }

    /**
     * Checks the arguments of {@link ClaimStore#summarize}, for store implementations.
     *
     * @param lockTimeout the lock timeout, positive (a store counts it in whole milliseconds)
     * @param stuckAfter the stuck threshold, positive
     * @param maxStuck 0 to 1000
     * @throws IllegalArgumentException naming the argument to fix
     */
    public static void checkRequest(Duration lockTimeout, Duration stuckAfter, int maxStuck) {
        if (lockTimeout == null || lockTimeout.isNegative() || lockTimeout.isZero()) {
            throw new IllegalArgumentException("lock timeout is " + lockTimeout + ": give the claimers' lock timeout, positive");
        }
        if (stuckAfter == null || stuckAfter.isNegative() || stuckAfter.isZero()) {
            throw new IllegalArgumentException("stuckAfter is " + stuckAfter + ": give how long without progress makes a "
                    + "task stuck, positive");
        }
        if (maxStuck < 0 || maxStuck > 1000) {
            throw new IllegalArgumentException("maxStuck is " + maxStuck + ": give 0 to 1000");
        }
    }

    /**
     * How many tasks of one phase are in which state.
     *
     * @param phase the phase as text, or {@code null} for tasks without one
     * @param total all tasks of the phase
     * @param free not claimed: {@code lockedAt} at the epoch (never claimed, or unlocked; on MongoDB
     *     also missing); due at once
     * @param claimed claimed and within the lock timeout, or waiting out a relock back-off: not due yet
     * @param overdue due again but not claimed: a claim that lapsed (its claimer stopped without
     *     unlocking) or a back-off that ended, and no claimer has taken it yet
     * @param oldestOverdueSince when the longest-overdue task became due, or {@code null} if none is overdue
     */
    public record PhaseCounts(@Nullable String phase, long total, long free, long claimed, long overdue,
            @Nullable Instant oldestOverdueSince) {

        /**
         * The tasks in none of the three states: on the SQL stores those whose {@code lockedAt} is
         * NULL, which no claim ever selects (the shipped DDL declares it {@code NOT NULL DEFAULT 0}).
         *
         * @return {@code total - free - claimed - overdue}
         */
        public long neverClaimed() {
            return total - free - claimed - overdue;
        }
    }

    /**
     * A task that has made no progress for longer than the summary's {@code stuckAfter}: it is
     * claimed, waiting out back-offs, or overdue, and its {@code updatedAt} (set by every unlock and
     * {@code moveTo}) is older than that. A task whose {@code updatedAt} was never set is not judged.
     *
     * @param key the task's key, as the store returns it (what {@link ClaimStore#release} takes)
     * @param phase its phase as text, or {@code null}
     * @param lockedAt its {@code lockedAt}
     * @param updatedAt its {@code updatedAt}: its last progress
     * @param version its claim version: {@link ClaimStore#release} frees it only at this version
     */
    public record StuckTask(Object key, @Nullable String phase, Instant lockedAt, Instant updatedAt, long version) {
        /**
         * Checks the values.
         *
         * @param key the key
         * @param phase the phase, or null
         * @param lockedAt its lockedAt
         * @param updatedAt its updatedAt
         * @param version its version
         * @throws IllegalArgumentException if the key or a time is null
         */
        public StuckTask {
            if (key == null || lockedAt == null || updatedAt == null) {
                throw new IllegalArgumentException("key, lockedAt and updatedAt are required");
            }
        }

        /**
         * The key as text: binary keys in hexadecimal ({@code 0x…}), others as {@link String#valueOf}.
         *
         * @return the text
         */
        public String keyText() {
            return key instanceof byte[] bytes ? "0x" + HexFormat.of().formatHex(bytes) : String.valueOf(key);
        }
    }
}
