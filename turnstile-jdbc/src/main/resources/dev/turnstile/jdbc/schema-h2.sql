-- Turnstile lock table for H2. Times are epoch milliseconds by the database clock.
-- A row stays after its release (its fence must keep growing); pruning deletes unused ones and keeps their highest fence in a floor row.
-- H2 counts VARCHAR lengths in UTF-16 units: 510 hold a name or owner of 255 Unicode code points.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        VARCHAR(510) NOT NULL PRIMARY KEY,
    owner       VARCHAR(510) NOT NULL,
    token       VARCHAR(64)  NOT NULL,
    fence       BIGINT       NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
);
