-- Access: users, API tokens, browser sessions, workspace members, sign-in
-- throttling, and the actor of every task event.

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    admin BIGINT NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);

-- Only the SHA-256 of a token is kept; the token is shown once at creation.
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT
);
CREATE INDEX idx_api_tokens_user ON api_tokens (user_id, created_at);

-- Browser sessions, by the SHA-256 of the cookie's value.
CREATE TABLE web_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX idx_web_sessions_user ON web_sessions (user_id);

CREATE TABLE workspace_members (
    workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX idx_workspace_members_user ON workspace_members (user_id);

-- Consecutive failed sign-ins per username (existing or not).
CREATE TABLE login_throttle (
    username TEXT PRIMARY KEY,
    failures BIGINT NOT NULL,
    blocked_until TEXT NOT NULL
);

ALTER TABLE task_events ADD COLUMN actor TEXT NOT NULL DEFAULT '{"kind":"system"}';
