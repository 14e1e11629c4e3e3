-- Files attached to prompts and re-prompts, referenced from graph documents
-- by id; the document never holds the bytes.
CREATE TABLE attachments (
    id TEXT PRIMARY KEY NOT NULL,
    graph_id TEXT NOT NULL,
    name TEXT NOT NULL,
    media_type TEXT NOT NULL,
    size_bytes BIGINT NOT NULL,
    content BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX attachments_by_graph ON attachments (graph_id);
