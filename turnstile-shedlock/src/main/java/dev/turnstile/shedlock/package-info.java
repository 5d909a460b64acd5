/**
 * A ShedLock {@code LockProvider} backed by a Turnstile lock store.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.shedlock;

import org.jspecify.annotations.NullMarked;
