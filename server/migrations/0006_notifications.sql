-- Outbound notifications. A target is a URL a workspace sends chosen events
-- to; a delivery is one event for one target, written in the same
-- transaction as the task event that raised it, with its body fixed so every
-- retry sends the same bytes; each attempt is logged.
CREATE TABLE notification_targets (
    id TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    secret TEXT NOT NULL DEFAULT '',
    events TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_notification_targets_ws ON notification_targets (workspace_id);

CREATE TABLE notification_deliveries (
    id TEXT PRIMARY KEY,
    target_id TEXT NOT NULL,
    workspace_id TEXT NOT NULL,
    event TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    body TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    claimed_until TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX idx_notification_deliveries_due ON notification_deliveries (status, next_attempt_at);
CREATE INDEX idx_notification_deliveries_ws ON notification_deliveries (workspace_id, created_at);

CREATE TABLE notification_attempts (
    delivery_id TEXT NOT NULL,
    attempt BIGINT NOT NULL,
    at TEXT NOT NULL,
    status_code BIGINT,
    error TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (delivery_id, attempt)
);
