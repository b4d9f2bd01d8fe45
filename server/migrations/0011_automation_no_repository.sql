-- "None — no repository": the automation's runs get no checkout. Kept apart
-- from automation_repositories so "Auto" (no rows) keeps its meaning.
ALTER TABLE automations ADD COLUMN no_repository BIGINT NOT NULL DEFAULT 0;
