-- A run may have a budget in US dollars (PRODUCT §3.12): when what its
-- calls cost reaches it, what is in flight stops and the run fails with
-- `budget_exceeded`. Kept with the run so that a resumed run keeps it.
ALTER TABLE runs ADD COLUMN budget_usd DOUBLE PRECISION;
