-- The run state (PRODUCT §3.5) as a few JSON objects per run, one for each
-- module's keys (the keys stay whole: `{"Draft.output": "…", "Draft.status":
-- "completed"}`), merged with each change (`||`). A key a row was about
-- thirty rows a starter run, rewritten in every grouped commit
-- (`patchbay bench`); one object a run grew with every module and was
-- rewritten whole with each. Kept as text, as on SQLite, so that one query
-- reads it on both. The keys of runs stored before are kept in part '' (read
-- first, so a newer value in a module's part is the one read).
CREATE TABLE run_state_parts (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    part TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (run_id, part)
);

INSERT INTO run_state_parts (run_id, part, state)
    SELECT run_id, '', json_object_agg(key, value)::text FROM run_state GROUP BY run_id;

DROP TABLE run_state;
