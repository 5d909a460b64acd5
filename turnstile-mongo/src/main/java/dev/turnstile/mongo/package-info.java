/**
 * Lock and claim stores on MongoDB.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.mongo;

import org.jspecify.annotations.NullMarked;
