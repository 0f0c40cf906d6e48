-- Content search index, SQLite form (issue 29, supplement §28: content matching bounded by an index; see
-- platform/db/search.ts). PostgreSQL runs 0016_search_index.pg.sql instead (pg_trgm GIN indexes).
--
-- search_fts: an FTS5 trigram index of the text search matches as content, one document per row of scripts
-- (content), responders (path_lower) and trackers (page: target.url; API: every target.requests[].url, one per
-- line). Contentless (the text stays in its own table only) and detail=none (rowids only, no positions): search asks
-- it for the documents holding every trigram of the query, then verifies those rows with instr() on the real text.
-- The trigram tokenizer folds case (Unicode): the index finds a superset of the ASCII-folding match.
--
-- search_docs: which row each FTS document belongs to (its id is the FTS rowid; `tbl` is the entity's table). The
-- entity tables have TEXT ids and no stable integer rowid. Ids are allotted in ranges (search_ranges): user number n
-- (search_users) owns n * 2^32 up to (n + 1) * 2^32 - 1, in which table number t (search_tables) owns 2^28 ids from
-- n * 2^32 + t * 2^28. A search reads the FTS index over its user's range for one table only, so it costs what the
-- user's own documents of that table cost, whatever other users (or the user's other tables) hold. A new document
-- takes the range's highest id + 1; a change of content keeps its id.
--
-- Triggers keep all of it in step with every write to the three tables, whatever the path (create, update, import,
-- clone, delete, a user's removal through ON DELETE CASCADE, the CLI, raw SQL): the index cannot drift.
CREATE TABLE search_users (
  n INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE
);
CREATE TABLE search_tables (
  t INTEGER PRIMARY KEY,
  tbl TEXT NOT NULL UNIQUE
);
INSERT INTO search_tables (t, tbl) VALUES (1, 'scripts'), (2, 'responders'), (3, 'trackers');
CREATE VIEW search_ranges AS
  SELECT u.user_id, t.tbl, u.n * 4294967296 + t.t * 268435456 AS lo, u.n * 4294967296 + (t.t + 1) * 268435456 AS hi
  FROM search_users u, search_tables t;
CREATE TABLE search_docs (
  id INTEGER PRIMARY KEY,
  tbl TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  UNIQUE (tbl, entity_id)
);
CREATE VIRTUAL TABLE search_fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'trigram', detail = 'none');
CREATE TRIGGER users_search_delete AFTER DELETE ON users BEGIN
  DELETE FROM search_users WHERE user_id = old.id;
END;

CREATE TRIGGER scripts_search_insert AFTER INSERT ON scripts BEGIN
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'scripts', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'scripts';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), new.content);
END;
CREATE TRIGGER scripts_search_update AFTER UPDATE OF content ON scripts
WHEN old.id IS new.id AND old.user_id IS new.user_id AND old.content IS NOT new.content BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'scripts' AND entity_id = new.id);
  INSERT INTO search_fts (rowid, body) SELECT id, new.content FROM search_docs WHERE tbl = 'scripts' AND entity_id = new.id;
END;
CREATE TRIGGER scripts_search_move AFTER UPDATE OF id, user_id ON scripts
WHEN old.id IS NOT new.id OR old.user_id IS NOT new.user_id BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'scripts' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'scripts' AND entity_id = old.id;
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'scripts', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'scripts';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), new.content);
END;
CREATE TRIGGER scripts_search_delete AFTER DELETE ON scripts BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'scripts' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'scripts' AND entity_id = old.id;
END;

CREATE TRIGGER responders_search_insert AFTER INSERT ON responders BEGIN
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'responders', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'responders';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), new.path_lower);
END;
CREATE TRIGGER responders_search_update AFTER UPDATE OF path_lower ON responders
WHEN old.id IS new.id AND old.user_id IS new.user_id AND old.path_lower IS NOT new.path_lower BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'responders' AND entity_id = new.id);
  INSERT INTO search_fts (rowid, body) SELECT id, new.path_lower FROM search_docs WHERE tbl = 'responders' AND entity_id = new.id;
END;
CREATE TRIGGER responders_search_move AFTER UPDATE OF id, user_id ON responders
WHEN old.id IS NOT new.id OR old.user_id IS NOT new.user_id BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'responders' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'responders' AND entity_id = old.id;
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'responders', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'responders';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), new.path_lower);
END;
CREATE TRIGGER responders_search_delete AFTER DELETE ON responders BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'responders' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'responders' AND entity_id = old.id;
END;

-- Trackers: the URL(s) of the target JSON (a target that is not valid JSON indexes nothing rather than failing the
-- write); the same expression in every trigger and in the backfill below.
CREATE TRIGGER trackers_search_insert AFTER INSERT ON trackers BEGIN
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'trackers', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'trackers';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), CASE WHEN NOT json_valid(new.target) THEN NULL
    WHEN new.kind = 'page' THEN json_extract(new.target, '$.url')
    WHEN new.kind = 'api' THEN (SELECT group_concat(json_extract(j.value, '$.url'), char(10)) FROM json_each(new.target, '$.requests') j)
  END);
END;
CREATE TRIGGER trackers_search_update AFTER UPDATE OF kind, target ON trackers
WHEN old.id IS new.id AND old.user_id IS new.user_id AND (old.kind IS NOT new.kind OR old.target IS NOT new.target) BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'trackers' AND entity_id = new.id);
  INSERT INTO search_fts (rowid, body) SELECT id, CASE WHEN NOT json_valid(new.target) THEN NULL
    WHEN new.kind = 'page' THEN json_extract(new.target, '$.url')
    WHEN new.kind = 'api' THEN (SELECT group_concat(json_extract(j.value, '$.url'), char(10)) FROM json_each(new.target, '$.requests') j)
  END FROM search_docs WHERE tbl = 'trackers' AND entity_id = new.id;
END;
CREATE TRIGGER trackers_search_move AFTER UPDATE OF id, user_id ON trackers
WHEN old.id IS NOT new.id OR old.user_id IS NOT new.user_id BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'trackers' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'trackers' AND entity_id = old.id;
  INSERT OR IGNORE INTO search_users (user_id) VALUES (new.user_id);
  INSERT INTO search_docs (id, tbl, entity_id)
    SELECT coalesce((SELECT d.id + 1 FROM search_docs d WHERE d.id >= r.lo AND d.id < r.hi ORDER BY d.id DESC LIMIT 1), r.lo), 'trackers', new.id
    FROM search_ranges r WHERE r.user_id = new.user_id AND r.tbl = 'trackers';
  INSERT INTO search_fts (rowid, body) VALUES (last_insert_rowid(), CASE WHEN NOT json_valid(new.target) THEN NULL
    WHEN new.kind = 'page' THEN json_extract(new.target, '$.url')
    WHEN new.kind = 'api' THEN (SELECT group_concat(json_extract(j.value, '$.url'), char(10)) FROM json_each(new.target, '$.requests') j)
  END);
END;
CREATE TRIGGER trackers_search_delete AFTER DELETE ON trackers BEGIN
  DELETE FROM search_fts WHERE rowid = (SELECT id FROM search_docs WHERE tbl = 'trackers' AND entity_id = old.id);
  DELETE FROM search_docs WHERE tbl = 'trackers' AND entity_id = old.id;
END;

-- The rows that exist already.
INSERT INTO search_users (user_id)
  SELECT user_id FROM scripts UNION SELECT user_id FROM responders UNION SELECT user_id FROM trackers;
INSERT INTO search_docs (id, tbl, entity_id)
  SELECT r.lo + row_number() OVER (PARTITION BY r.lo ORDER BY x.id) - 1, x.tbl, x.id
  FROM (SELECT 'scripts' AS tbl, id, user_id FROM scripts UNION ALL SELECT 'responders', id, user_id FROM responders
        UNION ALL SELECT 'trackers', id, user_id FROM trackers) x
  JOIN search_ranges r ON r.user_id = x.user_id AND r.tbl = x.tbl;
INSERT INTO search_fts (rowid, body) SELECT d.id, e.content FROM search_docs d JOIN scripts e ON e.id = d.entity_id WHERE d.tbl = 'scripts';
INSERT INTO search_fts (rowid, body) SELECT d.id, e.path_lower FROM search_docs d JOIN responders e ON e.id = d.entity_id WHERE d.tbl = 'responders';
INSERT INTO search_fts (rowid, body) SELECT d.id, CASE WHEN NOT json_valid(e.target) THEN NULL
    WHEN e.kind = 'page' THEN json_extract(e.target, '$.url')
    WHEN e.kind = 'api' THEN (SELECT group_concat(json_extract(j.value, '$.url'), char(10)) FROM json_each(e.target, '$.requests') j)
  END
  FROM search_docs d JOIN trackers e ON e.id = d.entity_id WHERE d.tbl = 'trackers';
