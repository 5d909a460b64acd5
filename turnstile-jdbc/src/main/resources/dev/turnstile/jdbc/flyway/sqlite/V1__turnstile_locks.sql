-- Turnstile's lock table as a Flyway migration, shipped in turnstile-jdbc (docs/migrations.md).
-- Run this location with its own schema-history table (turnstile_schema_history), not in your own
-- location: its version would interleave with yours. Never edit it: a schema change will be a V2.
-- Turnstile lock table for SQLite. Times are epoch milliseconds by this host's clock.
-- Rows are never deleted: the fence column must keep growing across releases.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        TEXT    NOT NULL PRIMARY KEY,
    owner       TEXT    NOT NULL,
    token       TEXT    NOT NULL,
    fence       INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
