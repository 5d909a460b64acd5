package dev.turnstile.claim;

/** What a guarded write by a {@link Claim} did. A lost claim is a result, not an exception. */
public enum ClaimOutcome {
    /** The write was applied: the claim still held the task. */
    APPLIED,
    /**
     * Nothing was written: the task was claimed again by someone else since (this claim stalled
     * past the lock timeout), or it no longer exists. Stop working on it.
     */
    LOST
}
