-- `Idempotency-Key` on a request that starts a run (PRODUCT §6.3): the
-- first request with a key claims it for its run (one conditional write),
-- and a request with the same key for the same graph within a day answers
-- about that run instead of starting another. A claim older than a day
-- is taken over by the next request with its key.
CREATE TABLE idempotency_keys (
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    claimed_at BIGINT NOT NULL,
    PRIMARY KEY (graph_id, key)
);
