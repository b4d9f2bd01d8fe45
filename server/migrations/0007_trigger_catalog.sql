-- A version stamp of the enabled-trigger catalogue: every write to an
-- automation or a trigger bumps it in the same transaction, and each
-- replica's in-memory trigger index rebuilds when the stamp it holds is old.
CREATE TABLE trigger_catalog (
    id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO trigger_catalog (id, version) VALUES (1, 0);
