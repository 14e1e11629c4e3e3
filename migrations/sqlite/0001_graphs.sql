-- Graphs and their revisions. Times are Unix milliseconds; documents are
-- JSON text (the Any driver reads TEXT and BIGINT the same on both databases).
CREATE TABLE graphs (
    id TEXT PRIMARY KEY NOT NULL,
    edit_token_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    revision BIGINT NOT NULL,
    document TEXT NOT NULL,
    forked_from TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE graph_revisions (
    graph_id TEXT NOT NULL REFERENCES graphs (id) ON DELETE CASCADE,
    revision BIGINT NOT NULL,
    document TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (graph_id, revision)
);
