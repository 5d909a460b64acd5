/**
 * A Spring Integration {@code LockRegistry} over Turnstile's stores: {@link dev.turnstile.integration.TurnstileLockRegistry}.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.integration;

import org.jspecify.annotations.NullMarked;
