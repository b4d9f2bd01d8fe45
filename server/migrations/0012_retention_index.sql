-- Retention looks only at sessions that still hold a worktree: a few per
-- automation, however many runs it has had.
CREATE INDEX idx_agent_sessions_worktree ON agent_sessions (task_id) WHERE worktree_path <> '';
