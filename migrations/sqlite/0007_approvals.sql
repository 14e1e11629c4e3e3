-- Approvals (PRODUCT §3.14). A person's decision on a waiting approval:
-- the first one taken on an activation wins (the primary key), and the
-- process that runs the run acts on it, whichever process took it.
CREATE TABLE decisions (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    module_id TEXT NOT NULL,
    activation BIGINT NOT NULL,
    decision TEXT NOT NULL,
    feedback TEXT NOT NULL,
    edited_value TEXT,
    decided_by TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, module_id, activation)
);
-- Approver links: each can decide one run's approvals and nothing else.
-- Only a hash of the token is kept.
CREATE TABLE approver_tokens (
    token_hash TEXT PRIMARY KEY NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL
);
CREATE INDEX approver_tokens_by_run ON approver_tokens (run_id);
-- How long a run has waited for people with nothing running, and since
-- when it waits now: its maximum duration leaves that time out.
ALTER TABLE runs ADD COLUMN waited_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN waiting_since BIGINT;
