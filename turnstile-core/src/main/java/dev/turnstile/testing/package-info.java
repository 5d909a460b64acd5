/**
 * A lock store in memory, for tests of code that uses Turnstile.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.testing;

import org.jspecify.annotations.NullMarked;
