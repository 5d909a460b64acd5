/**
 * Micrometer metrics for Turnstile locks, jobs and leadership.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.micrometer;

import org.jspecify.annotations.NullMarked;
