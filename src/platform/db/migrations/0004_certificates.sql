-- Certificates: private keys and certificate templates (written with the certificates feature).
SELECT 1; -- placeholder until the feature's tables are written
