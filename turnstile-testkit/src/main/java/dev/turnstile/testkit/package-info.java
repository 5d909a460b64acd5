/**
 * The contract suites every lock and claim store must pass, and the fault tools they use.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.testkit;

import org.jspecify.annotations.NullMarked;
