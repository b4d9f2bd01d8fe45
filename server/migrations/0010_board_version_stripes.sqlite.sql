-- PostgreSQL counts task changes in stripes to spare a hot row (see its
-- twin). SQLite has one writer at a time, so its triggers keep moving
-- workspaces.board_version and this table stays empty: it exists so both
-- dialects read the version with the same query.
CREATE TABLE board_version_stripes (
    workspace_id TEXT NOT NULL,
    stripe INTEGER NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, stripe)
);
