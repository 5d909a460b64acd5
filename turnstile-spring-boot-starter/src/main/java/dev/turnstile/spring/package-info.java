/**
 * Spring Boot auto-configuration of Turnstile: the store, {@code @SchedulerLock}-style jobs and leadership.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.spring;

import org.jspecify.annotations.NullMarked;
