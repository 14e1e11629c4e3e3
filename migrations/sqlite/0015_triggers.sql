-- Triggers (PRODUCT §1.6, §6.5). The document holds them; the database
-- holds what processes share about them.
--
-- `schedules` mirrors each graph's schedule triggers, written in the same
-- transaction as the document. `next_at` is the tick to fire next (Unix
-- milliseconds; NULL when the cron never falls again); a process fires a
-- tick by moving `next_at` on from the value it read, in one conditional
-- UPDATE, so each tick fires once whatever the number of processes.
CREATE TABLE schedules (
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    trigger_id TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    catch_up TEXT NOT NULL,
    paused BIGINT NOT NULL,
    next_at BIGINT,
    PRIMARY KEY (graph_id, trigger_id)
);
CREATE INDEX schedules_due ON schedules (next_at);

-- A webhook trigger's secret, as a hash: made and rotated with the edit
-- token, shown once. Looked up by the hash when a delivery arrives.
CREATE TABLE trigger_secrets (
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    trigger_id TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (graph_id, trigger_id)
);
