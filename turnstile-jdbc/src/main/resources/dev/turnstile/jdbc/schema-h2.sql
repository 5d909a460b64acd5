-- Turnstile lock table for H2. Times are epoch milliseconds by the database clock.
-- Rows are never deleted: the fence column must keep growing across releases.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        VARCHAR(255) NOT NULL PRIMARY KEY,
    owner       VARCHAR(255) NOT NULL,
    token       VARCHAR(64)  NOT NULL,
    fence       BIGINT       NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
