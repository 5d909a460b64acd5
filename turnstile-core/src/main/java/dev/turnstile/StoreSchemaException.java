package dev.turnstile;

import org.jspecify.annotations.Nullable;

/**
 * The store is reachable but not set up for Turnstile: for a SQL store, the lock or task table is
 * missing or has the wrong shape (a column missing or of the wrong type, a case-insensitive
 * collation on a name column); for work claiming also a value the column cannot hold. The message
 * names the table or column and says how to fix it ({@code turnstile schema}, the DDL printed).
 *
 * <p>Not a {@link StoreUnavailableException}: retrying does not help, so callers that retry or skip
 * on an outage (a job runner, leadership) must not treat a misconfiguration as one.
 */
public class StoreSchemaException extends TurnstileException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to create it
     * @param cause the driver's exception, or {@code null}
     */
    public StoreSchemaException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
