-- Content security policies (supplement §13). `directives` is the ordered JSON array of {name, value?}; tags
-- link through entity_tags (entity type "contentSecurityPolicy"); shares live in `shares`.
CREATE TABLE content_security_policies (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  directives TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (user_id, name)
);
