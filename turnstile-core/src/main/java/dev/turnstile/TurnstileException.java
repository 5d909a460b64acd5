package dev.turnstile;

import org.jspecify.annotations.Nullable;

/**
 * Root of every exception Turnstile throws on purpose. Unchecked: a caller that cannot handle a
 * store failure should not be forced to write a catch block for it.
 *
 * <p>"The lock is busy" is never an exception: it is an empty result.
 */
public abstract class TurnstileException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message that says what happened and what to do.
     *
     * @param message the message
     * @param cause the underlying failure, or {@code null}
     */
    protected TurnstileException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
