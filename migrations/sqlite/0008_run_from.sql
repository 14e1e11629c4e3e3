-- A run from a module (PRODUCT §3.15) reuses what a recorded run did
-- upstream of it: which run, and the module it runs from. Kept with the
-- run so that its page says so and a resumed run reuses the same.
ALTER TABLE runs ADD COLUMN from_run TEXT;
ALTER TABLE runs ADD COLUMN from_module TEXT;
