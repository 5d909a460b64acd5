/**
 * Leadership: one active instance of a role, built on the lock API.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.leader;

import org.jspecify.annotations.NullMarked;
