-- Per-user storage accounting (supplement §28, issue 29; platform/storage/quota.ts). Tier key max_storage_bytes caps
-- what one user keeps over Secbox.kv, responder history, tracker revisions and (later) interactions.
--
-- responder_requests.size: the bytes a record stores (method, path, query, client address, both header lists and
-- both bodies as stored, UTF-8), computed when it is written (responders/store.ts recordSize) and here for the
-- records already stored. kv_entries.size and tracker_revisions.size existed already. The size columns join the
-- indexes the trims walk, so the bytes a trim frees and a recount are read from the index, not from the rows.
ALTER TABLE responder_requests ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
UPDATE responder_requests SET size = octet_length(method) + octet_length(path) + COALESCE(octet_length(raw_query), 0)
  + COALESCE(octet_length(client_address), 0) + octet_length(headers) + COALESCE(octet_length(body), 0)
  + COALESCE(octet_length(response_headers), 0) + COALESCE(octet_length(response_body), 0);
DROP INDEX responder_requests_responder;
CREATE INDEX responder_requests_responder ON responder_requests(responder_id, id, size);
DROP INDEX tracker_revisions_order;
CREATE INDEX tracker_revisions_order ON tracker_revisions(tracker_id, created_at, id, size);

-- One row per user: the stored bytes per kind, changed in the same transaction as every write, trim and delete of
-- those rows (under the advisory lock "storage:<user id>" on PostgreSQL), corrected by a periodic recount. A user's
-- total is the sum of the four columns. The row goes with the user.
CREATE TABLE storage_usage (
  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  kv_bytes INTEGER NOT NULL DEFAULT 0,
  history_bytes INTEGER NOT NULL DEFAULT 0,
  revision_bytes INTEGER NOT NULL DEFAULT 0,
  interaction_bytes INTEGER NOT NULL DEFAULT 0
);
INSERT INTO storage_usage (user_id, kv_bytes, history_bytes, revision_bytes, interaction_bytes)
SELECT u.id,
  COALESCE((SELECT SUM(k.size) FROM kv_entries k JOIN responders r ON r.id = k.owner_id WHERE r.user_id = u.id), 0),
  COALESCE((SELECT SUM(q.size) FROM responder_requests q JOIN responders r ON r.id = q.responder_id WHERE r.user_id = u.id), 0),
  COALESCE((SELECT SUM(v.size) FROM tracker_revisions v JOIN trackers t ON t.id = v.tracker_id WHERE t.user_id = u.id), 0),
  0
FROM users u;
