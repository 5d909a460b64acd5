-- Turnstile lock table for SQLite. Times are epoch milliseconds by this host's clock.
-- A row stays after its release (its fence must keep growing); pruning deletes unused ones and keeps their highest fence in a floor row.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        TEXT    NOT NULL PRIMARY KEY,
    owner       TEXT    NOT NULL,
    token       TEXT    NOT NULL,
    fence       INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
