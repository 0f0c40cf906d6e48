-- Shares: anonymous read access to one resource (certificate templates, content security policies) through
-- the X-User-Share-ID header. Share ids are UUID v4.
CREATE TABLE shares (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  resource_type TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (resource_type, resource_id)
);
