package dev.turnstile.claim;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a store must do for {@link TaskClaimer} (service provider interface). Every method is one
 * atomic step on the store, judges time by the store's own clock, and writes only if the task's
 * version still equals the caller's (the guard). Values reach the store as bound parameters or
 * document values; column names were validated as identifiers by {@link ClaimTable}.
 *
 * <p>Errors: {@link dev.turnstile.StoreUnavailableException} when the store cannot be reached or
 * fails, {@link dev.turnstile.StoreSchemaException} when it is reachable but the table lacks what
 * claiming needs. "Nothing due" and "claim lost" are results. Implementations must be thread-safe.
 */
public interface ClaimStore extends AutoCloseable {

    /**
     * Returns the table (or collection) this store claims from.
     *
     * @return the table description
     */
    ClaimTable table();

    /**
     * Claims up to {@code max} due tasks matching the filter, in {@code lockedAt} then
     * {@code updatedAt} order: those whose {@code lockedAt} is at or before the store's now minus
     * {@code lockTimeout}. Sets their {@code lockedAt} to the store's now and raises their version.
     * Tasks another caller is claiming at the same moment are skipped, not waited for.
     *
     * @param filter the filter, already checked against the table
     * @param max how many at most, at least 1
     * @param lockTimeout how long a claim holds a task
     * @return the claimed tasks, possibly none
     */
    List<ClaimedRow> claim(ClaimFilter filter, int max, Duration lockTimeout);

    /**
     * Sets {@code lockedAt} to the store's now (keeps the claim), if the version still matches.
     *
     * @param key the task's key, as {@link ClaimedRow#key()} gave it
     * @param version the claim version
     * @return {@code true} if written
     */
    boolean heartbeat(Object key, long version);

    /**
     * Ends the claim so the task is due at once: {@code lockedAt} to the epoch, {@code updatedAt}
     * to the store's now, and the given columns set, if the version still matches.
     *
     * @param key the task's key
     * @param version the claim version
     * @param values columns to set in the same write (may be empty), values as for filters or null
     * @return {@code true} if written
     */
    boolean unlock(Object key, long version, Map<String, Object> values);

    /**
     * Ends the claim so the task is due again after a delay of a tenth of the time since its
     * {@code updatedAt}, at least {@code floor} and at most {@code lockTimeout} (all by the
     * store's clock), if the version still matches; {@code updatedAt} is left alone. An
     * {@code updatedAt} that was never set (missing, null, or at or before the epoch, which is 0,
     * the SQL column's default) counts as no time waited: the delay is {@code floor}.
     *
     * @param key the task's key
     * @param version the claim version
     * @param floor the shortest delay
     * @param lockTimeout the lock timeout, also the longest delay
     * @return {@code true} if written
     */
    boolean relock(Object key, long version, Duration floor, Duration lockTimeout);

    /**
     * Sets the given columns and keeps the claim, if the version still matches.
     *
     * @param key the task's key
     * @param version the claim version
     * @param values columns to set, not empty
     * @return {@code true} if written
     */
    boolean update(Object key, long version, Map<String, Object> values);

    /**
     * Reads what the table holds, for an operator's view: per phase (at most
     * {@link ClaimSummary#MAX_PHASES}) how many tasks are free, claimed and overdue, judged by the
     * given lock timeout and the store's clock; and up to {@code maxStuck} tasks that made no
     * progress for {@code stuckAfter}, the longest first. Reads only; it scans the table, so it is
     * for a console or a health check, not for every claim.
     *
     * @param lockTimeout the claimers' lock timeout
     * @param stuckAfter how long without progress makes a task stuck
     * @param maxStuck how many stuck tasks at most, 0 to 1000
     * @return the summary
     * @throws UnsupportedOperationException if this store cannot summarize (the default)
     */
    default ClaimSummary summarize(Duration lockTimeout, Duration stuckAfter, int maxStuck) {
        throw new UnsupportedOperationException(description() + " cannot summarize its table");
    }

    /**
     * Frees a stuck task's claim, for an operator: {@code lockedAt} to the epoch (due at once) and
     * the version raised, only if the task is still as the summary showed it: at that version, not
     * free (an unlock or {@code moveTo} meanwhile wins) and with the same {@code updatedAt} (no
     * progress meanwhile). {@code updatedAt} is left alone (no progress was made). Raising the
     * version cuts the claim: its holder's next heartbeat or write fails, and it is told of the loss.
     *
     * @param task the task as {@link #summarize} returned it
     * @return {@code true} if written; {@code false} if the task is gone or changed
     * @throws dev.turnstile.StoreSchemaException if the key matched more than one row (nothing is written)
     * @throws UnsupportedOperationException if this store cannot release (the default)
     */
    default boolean release(ClaimSummary.StuckTask task) {
        throw new UnsupportedOperationException(description() + " cannot release a claim");
    }

    /**
     * Returns the columns the store keeps to itself besides the table's key, lockedAt and version
     * columns, which {@link Claim#update} refuses to write (MongoDB: {@code _id}, which a document
     * cannot change). Empty by default.
     *
     * @return column names, compared without regard to case
     */
    default Set<String> reservedColumns() {
        return Set.of();
    }

    /**
     * Returns how the store names itself in messages; no secrets.
     *
     * @return the description
     */
    String description();

    /** Releases what the store opened itself; a store over the caller's client leaves it open. */
    @Override
    void close();
}
