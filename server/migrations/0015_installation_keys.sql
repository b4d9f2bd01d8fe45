-- Secrets every replica of one installation shares, made by whichever replica
-- starts first: `bus` seals the events replicas publish on NATS, so one
-- published by anything else (an agent that can reach NATS) is refused.
CREATE TABLE installation_keys (
    name TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL
);
