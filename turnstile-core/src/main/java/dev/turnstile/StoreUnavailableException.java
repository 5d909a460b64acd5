package dev.turnstile;

import org.jspecify.annotations.Nullable;

/**
 * The lock store could not be reached or failed to answer: connection refused, timeout, wrong
 * credentials, a database error. The outcome of the operation is unknown to the store's client;
 * Turnstile never reports such an outcome as success.
 */
public class StoreUnavailableException extends TurnstileException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with the store described without secrets
     * @param cause the driver's exception, or {@code null}
     */
    public StoreUnavailableException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
