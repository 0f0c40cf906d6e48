-- Content search index, PostgreSQL form (issue 29; the SQLite form is 0016_search_index.sql). Run as written (no
-- translation by dialect.ts: see migrations/index.ts).
--
-- GIN indexes on (user_id, lower(<text>) with pg_trgm's trigrams) for the text search matches as content:
-- scripts.content, responders.path_lower and the trackers' target JSON (its URLs are inside; search verifies on the
-- URLs themselves). btree_gin lets user_id sit in the same index, so a search only ever reads its own user's
-- candidates, never another user's rows. Search narrows through them with one LIKE of the query cut into trigram
-- chunks, then verifies with secbox_search_has below (platform/db/search.ts). PostgreSQL keeps expression indexes
-- itself on every write: nothing can drift.
--
-- pg_trgm and btree_gin are contrib extensions, trusted since PostgreSQL 13: a user with CREATE on the database (its
-- owner) can create them. Where they cannot be created, the migration fails with the reason and what to do; Secbox
-- does not fall back to scanning (that is what this index closes), and nothing of the migration is applied.
DO $$
BEGIN
  CREATE EXTENSION IF NOT EXISTS pg_trgm;
  CREATE EXTENSION IF NOT EXISTS btree_gin;
EXCEPTION WHEN OTHERS THEN
  RAISE EXCEPTION 'migration 0016 (search index) needs the PostgreSQL extensions pg_trgm and btree_gin (%): install PostgreSQL''s contrib extensions (Debian/Ubuntu: postgresql-contrib), have the database owner or a superuser run CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin; in this database, then start Secbox again', SQLERRM;
END
$$;

-- The verification: the haystack, its ASCII letters lower-cased ("C" collation), holds the needle. strpos is
-- Boyer-Moore-Horspool, quadratic at worst (≈ 10 ms per 50 KB row for "b" + "a"×199 over a run of "a"s), but
-- linear when the needle's last character occurs nowhere else in it: then strpos, or on the reversed texts when the
-- first character is the unique one; long needles with neither (like "a"×200) go to a literal regular expression
-- (***=; PostgreSQL's DFA-based engine: ≈ 2 ms per 50 KB row at worst in the cases measured); short needles cost
-- little either way. A high declared cost, so that
-- the planner narrows through the GIN indexes first rather than running this over every row of a user (left to
-- themselves, lower() and LIKE look cheap to it, even over 50 KB of TOASTed text).
CREATE FUNCTION secbox_search_has(haystack text, needle text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 100000 AS $$
DECLARE
  h text := lower(haystack COLLATE "C");
  m int := length(needle);
BEGIN
  IF m <= 16 OR strpos(left(needle, m - 1), right(needle, 1)) = 0 THEN
    RETURN strpos(h, needle) > 0;
  ELSIF strpos(right(needle, m - 1), left(needle, 1)) = 0 THEN
    RETURN strpos(reverse(h), reverse(needle)) > 0;
  END IF;
  RETURN h ~ ('***=' || needle);
END
$$;

CREATE INDEX scripts_content_trgm ON scripts USING gin (user_id, lower(content) gin_trgm_ops);
CREATE INDEX responders_path_trgm ON responders USING gin (user_id, lower(path_lower) gin_trgm_ops);
CREATE INDEX trackers_target_trgm ON trackers USING gin (user_id, kind, lower(target) gin_trgm_ops);
