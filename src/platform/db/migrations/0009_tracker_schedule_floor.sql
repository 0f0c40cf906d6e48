-- Trackers: the due time of the latest scheduled run (supplement §14 "Runner": the tier minimum is about scheduled
-- runs). After a restart, a re-enable or a schedule change the tier gap is measured from it, not from last_ran_at
-- (which manual runs and late starts also set). Existing trackers take the start of their latest scheduled
-- (non-manual, non-retry) logged run.

ALTER TABLE trackers ADD COLUMN last_scheduled_at INTEGER;  -- due time of the latest scheduled run (retries and manual runs excluded)

UPDATE trackers SET last_scheduled_at = (
  SELECT MAX(l.started_at) FROM tracker_logs l WHERE l.tracker_id = trackers.id AND l.is_manual = 0 AND l.retry_attempt IS NULL
);
