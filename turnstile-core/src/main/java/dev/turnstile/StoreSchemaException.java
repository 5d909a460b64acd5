package dev.turnstile;

/**
 * The store is reachable but not set up for Turnstile: for a SQL store, the lock table is missing
 * or has the wrong shape. The message says how to create it ({@code turnstile schema}).
 */
public class StoreSchemaException extends StoreUnavailableException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what is missing and how to create it
     * @param cause the driver's exception, or {@code null}
     */
    public StoreSchemaException(String message, Throwable cause) {
        super(message, cause);
    }
}
