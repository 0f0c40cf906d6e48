-- Trackers (supplement §14–§17): API trackers now, page trackers later, in one table told apart by `kind`, plus
-- their revisions and execution logs. Config and target are JSON text (kind-specific shapes); the secrets
-- selector is its stored JSON text. Deleting a tracker deletes its revisions and logs (cascade).

CREATE TABLE trackers (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,                      -- 'api' | 'page'
  name TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  config TEXT NOT NULL,                    -- {"revisions","timeout","job"?:{"schedule","retryStrategy"?}}
  target TEXT NOT NULL,
  notifications INTEGER NOT NULL,
  secrets TEXT NOT NULL,
  schedule_anchor INTEGER NOT NULL,        -- when the schedule last took effect (create, change, re-enable)
  last_ran_at INTEGER,                     -- start of the latest run of any kind
  failure_streak INTEGER NOT NULL DEFAULT 0,   -- consecutive failed scheduled runs
  failing_notified INTEGER NOT NULL DEFAULT 0, -- a "failing" email went out for the current streak
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, kind, name)
);
CREATE INDEX trackers_kind_enabled ON trackers(kind, enabled);

CREATE TABLE tracker_revisions (
  id TEXT PRIMARY KEY,
  tracker_id TEXT NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  size INTEGER NOT NULL,
  data BLOB NOT NULL
);
CREATE INDEX tracker_revisions_order ON tracker_revisions(tracker_id, created_at, id);

CREATE TABLE tracker_logs (
  id TEXT PRIMARY KEY,
  tracker_id TEXT NOT NULL REFERENCES trackers(id) ON DELETE CASCADE,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status TEXT NOT NULL,                    -- success | failure
  is_manual INTEGER NOT NULL,
  retry_attempt INTEGER,
  has_changes INTEGER,
  revision_size INTEGER,
  error TEXT,
  phases TEXT NOT NULL                     -- JSON array of {phase, durationMs, status, error?}
);
CREATE INDEX tracker_logs_order ON tracker_logs(tracker_id, started_at, id);
