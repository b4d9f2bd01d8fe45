-- The merger against GitHub as it is: an accepted update-branch lands later
-- (the head it replaces is remembered), merge queues (the job remembers it
-- enqueued, and the PR's node id to take it out again), and CI waits set
-- per workspace and per repository as well as per task.
ALTER TABLE merger_jobs ADD COLUMN update_from_sha TEXT NOT NULL DEFAULT '';
ALTER TABLE merger_jobs ADD COLUMN queued BIGINT NOT NULL DEFAULT 0;
ALTER TABLE merger_jobs ADD COLUMN pr_node_id TEXT NOT NULL DEFAULT '';
ALTER TABLE repositories ADD COLUMN ci_wait_minutes BIGINT;
ALTER TABLE github_workspace_settings ADD COLUMN ci_wait_minutes BIGINT;
