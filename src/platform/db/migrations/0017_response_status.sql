-- Every tracked responder request keeps the status of the response sent (supplement §27), whether or not the
-- response itself is stored (§11.5: response_* columns stay NULL unless the script asks trackResponse or fails).
-- Records stored before this migration know their status only when their response was stored; the others keep NULL
-- (the API then omits statusCode: responders/har.ts toTrackedRecord).
ALTER TABLE responder_requests ADD COLUMN status_code INTEGER;
UPDATE responder_requests SET status_code = response_status;
