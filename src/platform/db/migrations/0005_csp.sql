-- Content security policies (written with the CSP feature).
SELECT 1; -- placeholder until the feature's tables are written
