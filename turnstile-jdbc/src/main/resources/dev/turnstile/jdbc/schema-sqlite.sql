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
