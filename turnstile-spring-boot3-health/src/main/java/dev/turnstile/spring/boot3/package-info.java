/**
 * The Spring Boot 3 health indicator of the Turnstile starter.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.spring.boot3;

import org.jspecify.annotations.NullMarked;
