package dev.turnstile.claim;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * One task claimed by this process: what {@link TaskClaimer#claimNext} returns. The claim holds
 * the task until its lock timeout passes (longer with keep-alive), until it is ended by
 * {@link #unlock}, {@link #relock} or {@link #moveTo}, or until it is lost.
 *
 * <p>Every write through a claim is guarded by its {@linkplain #version() version}: it is applied
 * only if no one claimed the task since. A worker that stalled past the lock timeout while another
 * claimed the task gets {@link ClaimOutcome#LOST} and writes nothing: fencing for rows. Writes of
 * your own that must be fenced too can add {@code AND claim_version = ?} with {@link #version()}.
 *
 * <pre>{@code
 * claimer.claimNext(ClaimFilter.where("phase", "Deleting")).ifPresent(task -> {
 *     try (task) {                                  // close() relocks if the step did not end it
 *         if (releaseResources(task.id())) {
 *             task.moveTo("DeletingRecords");       // next phase, due at once
 *         } else {
 *             task.relock();                        // waiting on something outside: back off
 *         }
 *     }
 * });
 * }</pre>
 *
 * <p>The writes that end a claim ({@link #unlock}, {@link #relock}, {@link #moveTo}, {@link #close})
 * run to their end whatever interrupts their thread gets, before or during the call, within the
 * store's timeouts, and leave the thread interrupted: a step's {@code finally} reached through an executor's {@code shutdownNow} still
 * ends the claim rather than leaving the task claimed until its lock timeout.
 *
 * <p>Thread-safe; writes through one claim are applied one at a time. {@link #isHeld()} and
 * {@link #lost()} never wait for them: a write or keep-alive that hangs (a partitioned connection
 * with no socket timeout) does not delay the loss report past the claim's local deadline.
 */
public interface Claim extends AutoCloseable {

    /**
     * Returns the task's key as text.
     *
     * @return the key
     */
    String id();

    /**
     * Returns the task's key as the store returned it (for SQL, what the driver's
     * {@code getObject} gave: a {@link Long}, a {@link String}, …).
     *
     * @return the key
     */
    Object key();

    /**
     * Returns the claim version: greater than every version issued before for this task, and
     * what every write through this claim is guarded by.
     *
     * @return the version
     */
    long version();

    /**
     * Returns when the task was claimed, by the store's clock (a keep-alive moves the store's
     * {@code lockedAt} on, not this value).
     *
     * @return the instant
     */
    Instant lockedAt();

    /**
     * Tells whether this process can still prove it holds the task: not ended, not lost, and
     * the lock timeout (minus a margin for clock drift) not passed since the claim or the last
     * confirmed keep-alive was sent, on the monotonic clock. Never waits for a store call. Once it
     * returns {@code false} it never returns {@code true} again: a keep-alive confirmed after the
     * deadline does not revive the claim.
     *
     * @return {@code true} while held
     */
    boolean isHeld();

    /**
     * Ends the claim, step done: the task is due again at once ({@code lockedAt} back to the
     * epoch, {@code updatedAt} to now), so the next tick continues it.
     *
     * @return {@link ClaimOutcome#APPLIED}, or {@link ClaimOutcome#LOST} if someone claimed it since
     * @throws IllegalStateException if the claim was already ended
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached; the claim
     *     stays as it was and the call may be retried
     */
    ClaimOutcome unlock();

    /**
     * Ends the claim while waiting on something outside: the task is due again after about a
     * tenth of the time waited so far (since its {@code updatedAt}; a task whose
     * {@code updatedAt} was never set has waited nothing), at least the claimer's relock floor and
     * at most its lock timeout. The store computes the due time with its own
     * clock and stores it as {@code lockedAt = now - lockTimeout + delay}.
     *
     * @return {@link ClaimOutcome#APPLIED}, or {@link ClaimOutcome#LOST} if someone claimed it since
     * @throws IllegalStateException if the claim was already ended
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    ClaimOutcome relock();

    /**
     * Moves the task to another phase and ends the claim, due at once (in the new phase): sets
     * the phase column, {@code updatedAt} to now and {@code lockedAt} to the epoch, in one guarded
     * write. Moving to a final phase that no filter selects completes the task.
     *
     * @param phase the new phase: a {@link String}, {@link Integer}, {@link Long} or {@link Boolean}
     * @return {@link ClaimOutcome#APPLIED}, or {@link ClaimOutcome#LOST} if someone claimed it since
     * @throws IllegalArgumentException if the phase is null or of another type
     * @throws IllegalStateException if the claim was already ended
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    ClaimOutcome moveTo(Object phase);

    /**
     * Writes columns of the task and keeps the claim, in one guarded write.
     *
     * @param values column to value; columns are identifiers other than the key, lockedAt and
     *     version columns and the store's {@link ClaimStore#reservedColumns()}; values are
     *     {@link String}, {@link Integer}, {@link Long}, {@link Boolean} or null
     * @return {@link ClaimOutcome#APPLIED}, or {@link ClaimOutcome#LOST} if someone claimed it since
     * @throws IllegalArgumentException if a column or value is not acceptable, or the map is empty
     * @throws IllegalStateException if the claim was already ended
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    ClaimOutcome update(Map<String, ?> values);

    /**
     * Keeps the claim: sets {@code lockedAt} to the store's now, so the task stays claimed for
     * another lock timeout, counted from when this call was sent. The claimer's keep-alive calls
     * this by itself when enabled. A claim that is no longer {@linkplain #isHeld() held} is not
     * kept: nothing is written and the result is {@link ClaimOutcome#LOST}. A heartbeat confirmed
     * only after the local deadline passed is {@link ClaimOutcome#LOST} too, though the store
     * applied it; {@link #close()} or {@link #unlock()} then frees the task sooner.
     *
     * @return {@link ClaimOutcome#APPLIED}, or {@link ClaimOutcome#LOST} if someone claimed it since
     *     (then {@link #lost()} completes) or the claim's deadline passed first
     * @throws IllegalStateException if the claim was already ended
     * @throws dev.turnstile.StoreUnavailableException if the store cannot be reached
     */
    ClaimOutcome heartbeat();

    /**
     * Completes when the claim is lost while still supposed to be held: a guarded write or a
     * keep-alive was refused, or the local deadline passed without a confirmed keep-alive. The
     * deadline is checked by a timer of its own, which never waits for a store call, so the loss is
     * reported at the deadline even while a keep-alive hangs, and the deadline (the lock timeout
     * minus a drift margin after the last confirmed keep-alive was sent) comes before the store
     * lets another worker claim the task. Never completes for a claim ended normally. After a loss
     * by deadline {@link #unlock}, {@link #relock}, {@link #moveTo} and {@link #update} are still
     * tried: the version decides, and they are applied only if no one claimed the task since.
     *
     * @return a stage that completes with the loss
     */
    CompletionStage<ClaimLoss> lost();

    /**
     * Relocks the task (see {@link #relock()}) if the claim is still held and was not ended, so
     * a step that failed with an exception is retried after the backoff, not at once. Does
     * nothing for an ended or lost claim; a store failure is logged, and the task is due again
     * after the lock timeout anyway.
     */
    @Override
    void close();
}
