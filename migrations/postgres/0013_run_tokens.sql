-- Run tokens (PRODUCT §6.2): made for a graph with its edit token, each
-- starts runs of that graph and reads them, nothing else. Only a hash of a
-- token is kept; revoking stamps `revoked_at`, and a revoked token starts
-- nothing. `started_by` on a run says how it started (JSON: `how`, and
-- the token or trigger that started it); runs from before say nothing.
CREATE TABLE run_tokens (
    id TEXT PRIMARY KEY NOT NULL,
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT,
    last_used_at BIGINT
);
CREATE INDEX run_tokens_by_graph ON run_tokens (graph_id);
ALTER TABLE runs ADD COLUMN started_by TEXT;
