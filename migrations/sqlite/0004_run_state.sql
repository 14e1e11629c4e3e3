-- The run state (PRODUCT §3.5, after Gump): the flat keys every activation
-- writes (`Draft.output`, `Draft.status`, `prev.Draft.output`, keys a
-- command sets), kept with the run and changed key by key.
CREATE TABLE run_state (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
