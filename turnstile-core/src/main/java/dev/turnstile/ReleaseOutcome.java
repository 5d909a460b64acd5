package dev.turnstile;

/** What {@link Lease#release()} did. */
public enum ReleaseOutcome {
    /** The lock is free now. */
    RELEASED,
    /**
     * The release came before {@code lockAtLeastFor} had passed, so the lease was shortened to end
     * at acquire time plus {@code lockAtLeastFor} instead of being freed at once.
     */
    SHORTENED_TO_AT_LEAST,
    /** An inner re-entrant release: an outer acquire of the same owner context still holds the lock. */
    STILL_HELD,
    /**
     * The lease had already expired before the release (by this process's deadline); another holder
     * may have taken the lock. Logged at WARN: the protected work ran partly unprotected.
     */
    ALREADY_EXPIRED,
    /**
     * The store no longer held this lease although its local deadline had not passed: it was
     * force-released or taken over. Logged at WARN.
     */
    NOT_OWNER
}
