-- Responders (supplement §11) and their tracked requests (§11.10). Tags live in entity_tags with
-- entity_type 'responder'; KV data in the sandbox's own table.

CREATE TABLE responders (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  path_type TEXT NOT NULL,                      -- '=' | '^' | '*'
  path TEXT NOT NULL,                           -- as given (trailing '/' removed except for '/')
  path_lower TEXT NOT NULL,                     -- lower(path), for conflicts and matching
  subdomain_prefix TEXT NOT NULL DEFAULT '',    -- '' = no prefix
  method TEXT NOT NULL,                         -- GET ... TRACE | ANY
  enabled INTEGER NOT NULL,
  requests_to_track INTEGER NOT NULL,
  status_code INTEGER NOT NULL,
  headers TEXT,                                 -- JSON [[name, value], ...]; NULL = none
  body TEXT,                                    -- NULL = empty
  script TEXT,                                  -- NULL = none
  secrets TEXT NOT NULL,                        -- selector JSON: "none" | "all" | {"selected":[ids]}
  notify_enabled INTEGER,                       -- NULL = notifications never set
  notify_throttle INTEGER,
  notify_count INTEGER NOT NULL DEFAULT 0,      -- tracked hits since notify_from
  notify_from INTEGER,                          -- counting start (unix s)
  notified_at INTEGER,                          -- last summary sent (unix s)
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, name)
);
CREATE INDEX responders_user ON responders(user_id);
CREATE INDEX responders_notify ON responders(notify_enabled, notify_count);

CREATE TABLE responder_requests (
  id TEXT PRIMARY KEY,                          -- UUID v7: newest sorts last
  responder_id TEXT NOT NULL REFERENCES responders(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  client_address TEXT,
  method TEXT NOT NULL,
  path TEXT NOT NULL,
  raw_query TEXT,
  headers TEXT NOT NULL,                        -- JSON [[name, value], ...] sorted by name
  body BLOB,                                    -- stored bytes (cut at max_tracked_body_bytes)
  body_size INTEGER NOT NULL,                   -- original size
  response_status INTEGER,                      -- NULL = response not stored
  response_headers TEXT,
  response_body BLOB,
  response_body_size INTEGER,
  response_truncated INTEGER
);
CREATE INDEX responder_requests_responder ON responder_requests(responder_id, id);
