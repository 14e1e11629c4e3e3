-- Runs: the graph snapshot they run, their status, the append-only event
-- log (the source of truth for progress and SSE replay), and each module
-- activation's record (responses, outputs, receipt, transcript).
CREATE TABLE runs (
    id TEXT PRIMARY KEY NOT NULL,
    graph_id TEXT,
    graph_revision BIGINT,
    snapshot TEXT NOT NULL,
    input TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT
);
CREATE INDEX runs_by_graph ON runs (graph_id, created_at);
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE run_events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    ts BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE activations (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    module_id TEXT NOT NULL,
    activation BIGINT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    PRIMARY KEY (run_id, module_id, activation)
);
