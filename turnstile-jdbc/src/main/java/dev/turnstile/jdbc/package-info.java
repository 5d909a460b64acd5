/**
 * Lock and claim stores on SQL databases: SQLite, PostgreSQL, MariaDB/MySQL and H2.
 *
 * <p>Every type here is null-marked: a parameter, return value or field may be null only where it
 * says {@code @Nullable}.
 */
@NullMarked
package dev.turnstile.jdbc;

import org.jspecify.annotations.NullMarked;
