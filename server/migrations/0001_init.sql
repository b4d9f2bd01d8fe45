-- Kandev schema, portable between SQLite and PostgreSQL.
-- Times are fixed-width RFC 3339 UTC text (they sort as strings); booleans are 0/1.

CREATE TABLE workspaces (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE repositories (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    provider TEXT NOT NULL,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    default_branch TEXT NOT NULL,
    local_path TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_repositories_workspace ON repositories (workspace_id, created_at, id);

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    origin TEXT NOT NULL,
    archived_at TEXT,
    repository_id TEXT,
    base_branch TEXT NOT NULL DEFAULT '',
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_tasks_workspace ON tasks (workspace_id, created_at);

CREATE TABLE task_comments (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_task_comments_task ON task_comments (task_id, created_at);

CREATE TABLE task_events (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_task_events_task ON task_events (task_id, seq);

CREATE TABLE task_prs (
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    pr_key TEXT NOT NULL,
    workspace_id TEXT NOT NULL DEFAULT '',
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    pr_number BIGINT NOT NULL,
    pr_url TEXT NOT NULL DEFAULT '',
    pr_title TEXT NOT NULL DEFAULT '',
    head_branch TEXT NOT NULL DEFAULT '',
    head_sha TEXT NOT NULL DEFAULT '',
    base_branch TEXT NOT NULL DEFAULT '',
    author_login TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL DEFAULT 'open',
    merged_at TEXT,
    closed_at TEXT,
    review_state TEXT NOT NULL DEFAULT '',
    checks_state TEXT NOT NULL DEFAULT '',
    mergeable_state TEXT NOT NULL DEFAULT '',
    review_count BIGINT NOT NULL DEFAULT 0,
    pending_review_count BIGINT NOT NULL DEFAULT 0,
    required_reviews BIGINT NOT NULL DEFAULT 0,
    checks_total BIGINT NOT NULL DEFAULT 0,
    checks_passing BIGINT NOT NULL DEFAULT 0,
    unresolved_review_threads BIGINT NOT NULL DEFAULT 0,
    additions BIGINT NOT NULL DEFAULT 0,
    deletions BIGINT NOT NULL DEFAULT 0,
    last_synced_at TEXT,
    detached_at TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, pr_key)
);
CREATE INDEX idx_task_prs_key ON task_prs (pr_key);
CREATE INDEX idx_task_prs_workspace ON task_prs (workspace_id, merged_at);

CREATE TABLE automations (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    prompt TEXT NOT NULL DEFAULT '',
    task_title_template TEXT NOT NULL DEFAULT '',
    agent_profile_id TEXT NOT NULL DEFAULT '',
    executor_profile_id TEXT NOT NULL DEFAULT '',
    enabled BIGINT NOT NULL DEFAULT 1,
    max_concurrent_runs BIGINT NOT NULL DEFAULT 1,
    webhook_secret TEXT NOT NULL,
    last_triggered_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_automations_workspace ON automations (workspace_id, created_at);

CREATE TABLE automation_triggers (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    type TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}',
    enabled BIGINT NOT NULL DEFAULT 1,
    last_evaluated_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_automation_triggers_automation ON automation_triggers (automation_id);
CREATE INDEX idx_automation_triggers_type ON automation_triggers (type, enabled, created_at, id);

CREATE TABLE automation_repositories (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    repository_id TEXT NOT NULL,
    position BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (automation_id, repository_id)
);

-- The run log, which is also the dedup memory. No unique constraint on
-- dedup_key: dedup is an existence count.
CREATE TABLE automation_runs (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    trigger_id TEXT NOT NULL DEFAULT '',
    trigger_type TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    dedup_key TEXT NOT NULL DEFAULT '',
    trigger_data TEXT NOT NULL DEFAULT '{}',
    error_message TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX idx_automation_runs_automation ON automation_runs (automation_id);
CREATE INDEX idx_automation_runs_dedup ON automation_runs (automation_id, dedup_key);
CREATE INDEX idx_automation_runs_created ON automation_runs (created_at);
CREATE INDEX idx_automation_runs_newest ON automation_runs (automation_id, created_at, id);
CREATE INDEX idx_automation_runs_task ON automation_runs (task_id);

CREATE TABLE automation_evaluations (
    id TEXT PRIMARY KEY,
    automation_id TEXT NOT NULL REFERENCES automations(id) ON DELETE CASCADE,
    trigger_id TEXT NOT NULL,
    trigger_type TEXT NOT NULL,
    event_subject TEXT NOT NULL,
    summary TEXT NOT NULL,
    outcome TEXT NOT NULL,
    gate TEXT,
    at TEXT NOT NULL
);
CREATE INDEX idx_automation_evaluations_automation ON automation_evaluations (automation_id, at);

CREATE TABLE agent_profiles (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    command TEXT NOT NULL,
    args TEXT NOT NULL DEFAULT '[]',
    env TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);

CREATE TABLE agent_sessions (
    id TEXT PRIMARY KEY,
    task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    profile_id TEXT NOT NULL DEFAULT '',
    token TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    stop_reason TEXT NOT NULL DEFAULT '',
    is_primary BIGINT NOT NULL DEFAULT 1,
    worktree_path TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    ended_at TEXT
);
CREATE INDEX idx_agent_sessions_task ON agent_sessions (task_id, started_at);

CREATE TABLE session_messages (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    tool TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_session_messages_session ON session_messages (session_id, seq);

CREATE TABLE github_deliveries (
    id TEXT PRIMARY KEY,
    event TEXT NOT NULL,
    received_at TEXT NOT NULL
);

CREATE TABLE github_workspace_settings (
    workspace_id TEXT PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
    repo_scope_mode TEXT NOT NULL DEFAULT 'all',
    repo_scope_orgs TEXT NOT NULL DEFAULT '[]',
    repo_scope_repos TEXT NOT NULL DEFAULT '[]',
    merge_method TEXT NOT NULL DEFAULT 'squash',
    delete_branch BIGINT NOT NULL DEFAULT 1
);

CREATE TABLE merger_jobs (
    task_id TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
    owner TEXT NOT NULL,
    repo TEXT NOT NULL,
    pr_number BIGINT NOT NULL,
    state TEXT NOT NULL,
    timeout_minutes BIGINT NOT NULL,
    wait_started_at TEXT,
    updated_branch BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
