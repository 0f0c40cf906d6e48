-- Mail: the durable outbox, notification email destinations and their verification sends.

CREATE TABLE outbox (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  user_id TEXT REFERENCES users(id) ON DELETE SET NULL,
  to_addr TEXT NOT NULL,
  subject TEXT NOT NULL,
  text_body TEXT NOT NULL,
  html_body TEXT NOT NULL,
  headers TEXT NOT NULL,            -- JSON object of extra headers (List-Unsubscribe, Reply-To, ...)
  message_id TEXT NOT NULL,
  status TEXT NOT NULL,             -- queued | sent | failed | held
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  sent_at INTEGER
);
CREATE INDEX outbox_due ON outbox(status, next_attempt_at);

CREATE TABLE notification_destinations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
  address TEXT NOT NULL,
  status TEXT NOT NULL,             -- pending | verified
  code_hash TEXT,
  code_expires_at INTEGER,
  failed_attempts INTEGER NOT NULL DEFAULT 0,
  verification_sent_at INTEGER,
  verified_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Every verification code email sent, for the 60 s cooldown and the 5-per-hour cap (PUT and _resend together).
CREATE TABLE verification_sends (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  sent_at INTEGER NOT NULL
);
CREATE INDEX verification_sends_user ON verification_sends(user_id, sent_at);
