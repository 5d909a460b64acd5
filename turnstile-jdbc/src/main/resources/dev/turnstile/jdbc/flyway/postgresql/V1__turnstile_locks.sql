-- Turnstile's lock table as a Flyway migration, shipped in turnstile-jdbc (docs/migrations.md).
-- Run this location with its own schema-history table (turnstile_schema_history), not in your own
-- location: its version would interleave with yours. Never edit it: a schema change will be a V2.
-- Turnstile lock table for PostgreSQL. Times are epoch milliseconds by the database clock.
-- Rows are never deleted: the fence column must keep growing across releases.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        VARCHAR(255) NOT NULL PRIMARY KEY,
    owner       VARCHAR(255) NOT NULL,
    token       VARCHAR(64)  NOT NULL,
    fence       BIGINT       NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
