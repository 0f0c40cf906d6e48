-- Secbox.kv: per-responder key-value store (written with the sandbox feature).
SELECT 1;
