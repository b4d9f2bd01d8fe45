-- The board version without a hot row. Every task write used to move one
-- counter on the workspace's row, so the task writes of a busy workspace
-- queued behind each other's row lock until commit. Each write now counts
-- itself in one of sixteen stripes, chosen by the writing connection, and
-- the version is the frozen column plus the stripes' sum: the number of
-- committed task changes a snapshot sees, which grows whenever a new one
-- becomes visible — all a cached board needs to be checked against.
-- No foreign key: a workspace's deletion cascades to its tasks, whose delete
-- triggers count here after the workspace row is gone.
CREATE TABLE board_version_stripes (
    workspace_id TEXT NOT NULL,
    stripe INTEGER NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, stripe)
);

CREATE OR REPLACE FUNCTION kandev_board_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s INTEGER := pg_backend_pid() % 16;
BEGIN
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO board_version_stripes AS b (workspace_id, stripe, n) VALUES (NEW.workspace_id, s, 1)
        ON CONFLICT (workspace_id, stripe) DO UPDATE SET n = b.n + 1;
    END IF;
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.workspace_id IS DISTINCT FROM NEW.workspace_id) THEN
        INSERT INTO board_version_stripes AS b (workspace_id, stripe, n) VALUES (OLD.workspace_id, s, 1)
        ON CONFLICT (workspace_id, stripe) DO UPDATE SET n = b.n + 1;
    END IF;
    RETURN NULL;
END;
$$;
