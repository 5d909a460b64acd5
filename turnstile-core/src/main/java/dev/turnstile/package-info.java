/**
 * The lock client: {@link dev.turnstile.Turnstile}, leases, options and the exceptions every store raises.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile;

import org.jspecify.annotations.NullMarked;
