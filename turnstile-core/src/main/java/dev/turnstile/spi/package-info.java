/**
 * The store SPI: what a lock store implements ({@link dev.turnstile.spi.LockStore}), the capabilities it may declare, and the factories that open stores from URLs.
 *
 * <p>Nothing here is null unless marked {@code @Nullable} (JSpecify; checked by NullAway in the build).
 */
@NullMarked
package dev.turnstile.spi;

import org.jspecify.annotations.NullMarked;
