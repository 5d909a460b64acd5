/**
 * The {@code turnstile} command line: {@code run}, a distributed {@code flock} for cron, and the admin commands.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.cli;

import org.jspecify.annotations.NullMarked;
