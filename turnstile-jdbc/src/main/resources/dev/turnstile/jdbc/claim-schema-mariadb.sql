-- A task table for Turnstile's work claiming, MariaDB 10.6+ and MySQL 8 (SKIP LOCKED). Times are
-- epoch milliseconds by the database clock; locked_at = 0 means free. Insert tasks with
-- updated_at = the insert time (left at 0, a first relock waits the floor). The index is part of the table: MySQL has no CREATE INDEX IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS {table} (
    {id} VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    {phase} VARCHAR(64) NOT NULL,{extraFilterColumns}
    {lockedAt} BIGINT NOT NULL DEFAULT 0,
    {updatedAt} BIGINT NOT NULL DEFAULT 0,
    {version} BIGINT NOT NULL DEFAULT 0,
    -- One index range, in claim order: a claim costs O(log n).
    INDEX {indexName} ({filters}, {lockedAt}, {updatedAt})
) ENGINE = InnoDB;
