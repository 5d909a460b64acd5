/**
 * A lock store on ZooKeeper, with leases bound to the client's session.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.zookeeper;

import org.jspecify.annotations.NullMarked;
