-- What each revision of a graph's history is (PRODUCT §6): how it came to
-- be (`created`, `forked`, `saved`) and a one-line summary of what changed
-- from the revision before it ("“Draft” changed, 1 cable added"). Empty for
-- revisions saved before this.
ALTER TABLE graph_revisions ADD COLUMN origin TEXT;
ALTER TABLE graph_revisions ADD COLUMN summary TEXT;
