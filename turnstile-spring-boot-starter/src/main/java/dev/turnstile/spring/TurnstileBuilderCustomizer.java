package dev.turnstile.spring;

import dev.turnstile.Turnstile;

/**
 * Customizes the auto-configured {@link Turnstile} before it is built (poll intervals, hand-off
 * courtesy). Listeners need no customizer: every {@link dev.turnstile.TurnstileListener} bean is
 * registered on it.
 */
@FunctionalInterface
public interface TurnstileBuilderCustomizer {

    /**
     * Customizes the builder.
     *
     * @param builder the builder, with the owner and listeners already set
     */
    void customize(Turnstile.Builder builder);
}
