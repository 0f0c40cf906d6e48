-- Durability and honest captures (issue 17 part 3, issue 18 part 5).
-- Tracked responder requests keep their arrival time in milliseconds (HAR startedDateTime, supplement §11.12);
-- created_at stays the unix-second value the API shows. NULL (rows written by code that does not know the column)
-- reads as created_at * 1000.
ALTER TABLE responder_requests ADD COLUMN created_at_ms INTEGER;
UPDATE responder_requests SET created_at_ms = created_at * 1000;

-- The outbox claims a message before talking SMTP (supplement §18.1): claimed_at is set while one send attempt is in
-- progress. A claim still present when a server starts belongs to a process that died mid-send; that message may
-- have been delivered, so it is marked failed and never sent again (at most once).
ALTER TABLE outbox ADD COLUMN claimed_at INTEGER;
