/**
 * Actuator support of the Turnstile starter: the health indicator and the endpoint that lists held locks.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.spring.actuate;

import org.jspecify.annotations.NullMarked;
