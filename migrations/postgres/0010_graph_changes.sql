-- Editing together (PRODUCT §3.16): every change the server took, in its
-- order. `revision` is the graph's revision with the change, `previous` the
-- one before it; `edits` and `replaced` are JSON (graph::edits, as applied).
-- The log is what a room's streams send, on every process, and what a
-- browser that was away catches up from; the graph row keeps the document.
-- Entries older than a day are dropped (janitor.rs): a browser away longer
-- gets the document instead.
CREATE TABLE graph_changes (
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    revision BIGINT NOT NULL,
    previous BIGINT NOT NULL,
    author TEXT NOT NULL,
    author_name TEXT NOT NULL,
    edits TEXT NOT NULL,
    replaced TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (graph_id, revision)
);
