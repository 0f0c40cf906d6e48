-- Secbox.kv: per-responder key-value store (supplement §11.8), written by the sandbox (src/sandbox/kv-store.ts).
-- Keys compare in byte order (SQLite BINARY collation on UTF-8 text; a PostgreSQL port declares key COLLATE "C").
-- size = UTF-8 bytes of key + value. kv_usage keeps per-owner totals of the stored rows (expired rows included until
-- they are purged), so quota checks never count rows.

CREATE TABLE kv_entries (
  owner_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  size INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  PRIMARY KEY (owner_id, key)
);
CREATE INDEX kv_entries_expiry ON kv_entries(expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE kv_usage (
  owner_id TEXT PRIMARY KEY,
  entries INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
