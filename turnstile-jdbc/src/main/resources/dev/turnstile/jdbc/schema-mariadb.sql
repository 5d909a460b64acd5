-- Turnstile lock table for MariaDB and MySQL. Times are epoch milliseconds by the database clock.
-- The binary collation keeps 'Lock' and 'lock' distinct. A row stays after its release (its fence must keep growing); pruning deletes unused ones and keeps their highest fence in a floor row.
CREATE TABLE IF NOT EXISTS turnstile_locks (
    name        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    owner       VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
    token       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    fence       BIGINT       NOT NULL,
    acquired_at BIGINT       NOT NULL,
    expires_at  BIGINT       NOT NULL
) ENGINE = InnoDB;
