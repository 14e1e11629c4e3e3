-- Durable runs (PRODUCT §8): the server process that runs a run holds a
-- lease on it, renewed while it lives; a run whose lease ran out is taken
-- over and resumed by another (or the next) process. A cancel asked of a
-- process that does not run the run is left here for the one that does.
-- Each finished activation keeps how it ended (`ending`), which a resume
-- replays instead of running it again; an activation still in progress is
-- kept after each turn (a checkpoint) with no ending.
ALTER TABLE runs ADD COLUMN owner TEXT;
ALTER TABLE runs ADD COLUMN lease_until BIGINT;
ALTER TABLE runs ADD COLUMN cancel_requested BIGINT NOT NULL DEFAULT 0;
CREATE INDEX runs_by_lease ON runs (status, lease_until);
ALTER TABLE activations ADD COLUMN ending TEXT;
