-- Coordination between replicas and across crashes: the outbox, leases,
-- the run log's dedup key made unique (the atomic claim), and run recovery.

-- Events written in the same transaction as the state they announce; a relay
-- publishes them and marks them. The row id is the event id consumers dedup on.
CREATE TABLE outbox (
    id TEXT PRIMARY KEY,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    published_at TEXT
);
CREATE INDEX idx_outbox_pending ON outbox (published_at, created_at);

-- Singleton work (the PR sweep, the scheduler tick, each merge job, each
-- agent turn): one owner at a time, lost when the owner stops renewing.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX idx_leases_owner ON leases (owner);

-- Older versions could write one key twice (replicas racing): keep the
-- oldest row's key, so the index below can hold.
UPDATE automation_runs SET dedup_key = ''
WHERE dedup_key <> '' AND EXISTS (
    SELECT 1 FROM automation_runs o
    WHERE o.automation_id = automation_runs.automation_id
      AND o.dedup_key = automation_runs.dedup_key
      AND (o.created_at < automation_runs.created_at
           OR (o.created_at = automation_runs.created_at AND o.id < automation_runs.id))
);
CREATE UNIQUE INDEX ux_automation_runs_dedup ON automation_runs (automation_id, dedup_key) WHERE dedup_key <> '';

-- The event a run was created for: a redelivered event finds its run.
ALTER TABLE automation_runs ADD COLUMN event_id TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX ux_automation_runs_event ON automation_runs (event_id) WHERE event_id <> '';
-- How often a run whose agent died with its replica was resumed.
ALTER TABLE automation_runs ADD COLUMN recoveries BIGINT NOT NULL DEFAULT 0;

CREATE INDEX idx_github_deliveries_received ON github_deliveries (received_at);
