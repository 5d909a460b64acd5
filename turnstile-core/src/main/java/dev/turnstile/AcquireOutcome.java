package dev.turnstile;

/** What one acquire call ended with, as reported to {@link TurnstileListener#onAcquire}. */
public enum AcquireOutcome {
    /** A lease was granted. */
    ACQUIRED,
    /** Another holder has the lock (after the whole wait, for a waiting acquire). Not an error. */
    BUSY,
    /** The store could not be reached or failed; the call threw {@link StoreUnavailableException}. */
    STORE_FAILURE
}
