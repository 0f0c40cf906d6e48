-- Operator rights need proof that the user controls the login email (supplement §3.5, issue 17): an account
-- created by the CLI, by an operator (operator sign-up, clone), or whose owner used a recovery link sent to the
-- address (or verified it with a code). Public sign-up alone proves nothing.
--
-- Existing accounts count as proven (email_proof = 'legacy'): how they were created is not recorded, and an
-- operator made with `secbox users add` must not lose access on upgrade. Before this migration an account could
-- exist under a listed email only if someone registered it first, so this keeps the status quo; the README's
-- upgrade note asks administrators to check the accounts of listed emails.

ALTER TABLE users ADD COLUMN email_proven_at INTEGER;  -- unix seconds of the first proof; NULL = not proven
ALTER TABLE users ADD COLUMN email_proof TEXT;         -- cli | operator | clone | recovery | code | legacy

UPDATE users SET email_proven_at = created_at, email_proof = 'legacy';
