/**
 * Spring Boot auto-configuration of the Turnstile Micrometer metrics.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.micrometer.autoconfigure;

import org.jspecify.annotations.NullMarked;
