-- Search (supplement §20, platform/db/search.ts) over one user's rows of each entity table.
--
-- *_search_recent: the user's rows in the order search ranks them within a group (updatedAt, then id), with the
-- name: the first page of name matches is read from this index alone, stopping after `limit` matches, instead of
-- sorting every match (10,000 items per user: 0.4 → 0.02 ms per table for a one-letter query, measured).
--
-- *_search_wide: SQLite's lower() folds ASCII only, so rows whose name is not ASCII are matched in JS; these partial
-- indexes find exactly those rows of a user without reading the others.
--
-- PostgreSQL accepts the same statements (octet_length and length exist there too).

CREATE INDEX tags_search_recent ON tags(user_id, updated_at, id, name);
CREATE INDEX secrets_search_recent ON secrets(user_id, updated_at, id, name);
CREATE INDEX scripts_search_recent ON scripts(user_id, updated_at, id, name);
CREATE INDEX responders_search_recent ON responders(user_id, updated_at, id, name);
CREATE INDEX certificate_templates_search_recent ON certificate_templates(user_id, updated_at, id, name);
CREATE INDEX private_keys_search_recent ON private_keys(user_id, updated_at, id, name);
CREATE INDEX content_security_policies_search_recent ON content_security_policies(user_id, updated_at, id, name);
CREATE INDEX trackers_search_recent ON trackers(user_id, kind, updated_at, id, name);

CREATE INDEX tags_search_wide ON tags(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX secrets_search_wide ON secrets(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX scripts_search_wide ON scripts(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX responders_search_wide ON responders(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX certificate_templates_search_wide ON certificate_templates(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX private_keys_search_wide ON private_keys(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX content_security_policies_search_wide ON content_security_policies(user_id) WHERE octet_length(name) <> length(name);
CREATE INDEX trackers_search_wide ON trackers(user_id, kind) WHERE octet_length(name) <> length(name);
