-- Trackers: API and page trackers, revisions, execution logs, schedules (written with the trackers feature).
SELECT 1;
