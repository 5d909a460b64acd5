/**
 * Lock stores on Redis (standalone, Sentinel, Cluster) and Redlock over independent Redis nodes.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.redis;

import org.jspecify.annotations.NullMarked;
