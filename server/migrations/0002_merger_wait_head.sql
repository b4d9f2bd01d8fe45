-- The head SHA the merger's current wait is for: a new head restarts the wait.
ALTER TABLE merger_jobs ADD COLUMN waiting_on_sha TEXT NOT NULL DEFAULT '';
