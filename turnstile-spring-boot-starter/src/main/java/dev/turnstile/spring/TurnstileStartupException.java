package dev.turnstile.spring;

import org.jspecify.annotations.Nullable;

/**
 * The lock store cannot be used at start and the settings say that fails the start-up: Spring
 * Boot prints it through {@link TurnstileFailureAnalyzer}, as what went wrong and what to do,
 * rather than as a stack of {@code BeanCreationException}s.
 */
final class TurnstileStartupException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private final String action;

    TurnstileStartupException(String message, String action, @Nullable Throwable cause) {
        super(message, cause);
        this.action = action;
    }

    /** What the user should do. */
    String action() {
        return action;
    }
}
