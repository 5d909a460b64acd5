-- A task table for Turnstile's work claiming, SQLite. Times are epoch milliseconds by this host's
-- clock; locked_at = 0 means free. Insert tasks with updated_at = the insert time
-- (left at 0, a first relock waits the floor).
CREATE TABLE IF NOT EXISTS {table} (
    {id} TEXT NOT NULL PRIMARY KEY,
    {phase} TEXT NOT NULL,{extraFilterColumns}
    {lockedAt} INTEGER NOT NULL DEFAULT 0,
    {updatedAt} INTEGER NOT NULL DEFAULT 0,
    {version} INTEGER NOT NULL DEFAULT 0
);
-- One index range, in claim order: a claim costs O(log n).
CREATE INDEX IF NOT EXISTS {indexName} ON {table} ({filters}, {lockedAt}, {updatedAt});
