-- Tool calls that wait for a person (PRODUCT §3.17). A decision on one
-- call of an activation: the first taken on it wins (the primary key), a
-- call's timeout being one (decided_by 'timeout'), and the process that
-- runs the run acts on it, whichever process took it. `arguments` are the
-- call's arguments as the person edited them (JSON), when they did.
CREATE TABLE tool_call_decisions (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    module_id TEXT NOT NULL,
    activation BIGINT NOT NULL,
    call_id TEXT NOT NULL,
    decision TEXT NOT NULL,
    feedback TEXT NOT NULL,
    arguments TEXT,
    decided_by TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, module_id, activation, call_id)
);
