-- Responders and their tracked requests (written with the responders feature).
SELECT 1;
