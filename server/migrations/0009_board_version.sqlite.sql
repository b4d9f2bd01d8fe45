-- A per-workspace counter that every change to its tasks moves, in the
-- writing transaction itself, so a cached board is checked with one
-- primary-key read. Triggers, not application code: every writer moves it,
-- including an operator's hand-written UPDATE.
ALTER TABLE workspaces ADD COLUMN board_version INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER tasks_board_version_insert AFTER INSERT ON tasks
BEGIN
    UPDATE workspaces SET board_version = board_version + 1 WHERE id = NEW.workspace_id;
END;

CREATE TRIGGER tasks_board_version_update AFTER UPDATE ON tasks
BEGIN
    UPDATE workspaces SET board_version = board_version + 1
    WHERE id = NEW.workspace_id OR id = OLD.workspace_id;
END;

CREATE TRIGGER tasks_board_version_delete AFTER DELETE ON tasks
BEGIN
    UPDATE workspaces SET board_version = board_version + 1 WHERE id = OLD.workspace_id;
END;
