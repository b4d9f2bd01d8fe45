-- A per-workspace counter that every change to its tasks moves, in the
-- writing transaction itself, so a cached board is checked with one
-- primary-key read. Triggers, not application code: every writer moves it,
-- including an operator's hand-written UPDATE.
ALTER TABLE workspaces ADD COLUMN board_version BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION kandev_board_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE workspaces SET board_version = board_version + 1 WHERE id = NEW.workspace_id;
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE workspaces SET board_version = board_version + 1 WHERE id = OLD.workspace_id;
    ELSE
        UPDATE workspaces SET board_version = board_version + 1
        WHERE id = NEW.workspace_id OR id = OLD.workspace_id;
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_board_version AFTER INSERT OR UPDATE OR DELETE ON tasks
FOR EACH ROW EXECUTE FUNCTION kandev_board_version();
