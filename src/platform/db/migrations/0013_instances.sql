-- Several instances on one database (issue 26; README "Running several instances").
--
-- instances: every serving process on PostgreSQL registers here at start and renews heartbeat_at (unix ms) every
-- second while it runs (platform/db/instances.ts). An instance whose heartbeat is older than the lease is dead: its
-- claims below are void. (SQLite has one serving process per file; it does not register.)
CREATE TABLE instances (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
);

-- The outbox claim names the instance that holds it: only that instance's claims are failed when it dies (a claim
-- with no instance, from before this migration, belongs to a dead process).
ALTER TABLE outbox ADD COLUMN claimed_by TEXT;

-- Run claims: the instance running the tracker now, and when its claim lapses (unix ms) even if that instance lives
-- on. A run starts only with the claim, so one tracker never runs twice at once, on any instance; a scheduled run
-- also needs last_scheduled_at below its due time, so a due time runs once.
ALTER TABLE trackers ADD COLUMN claimed_by TEXT;
ALTER TABLE trackers ADD COLUMN claimed_until INTEGER;

-- Rate-limit events shared by the instances (sign-in failures, recovery emails): `key` is a hash of the limited
-- subject, `at` unix ms. Old events are deleted as they leave their window.
CREATE TABLE rate_events (
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX rate_events_key ON rate_events(name, key, at);
