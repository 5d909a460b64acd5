-- Turnstile lock table for PostgreSQL. Times are epoch milliseconds by the database clock.
-- A row stays after its release (its fence must keep growing); pruning deletes unused ones and keeps their highest fence in a floor row.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        VARCHAR(255) NOT NULL PRIMARY KEY,
    owner       VARCHAR(255) NOT NULL,
    token       VARCHAR(64)  NOT NULL,
    fence       BIGINT       NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
