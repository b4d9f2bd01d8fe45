-- An agent session's MCP token is kept as its SHA-256, minted afresh for
-- every turn: an agent running as the server's OS user can read the database
-- file, and must not find another session's working token there. Tokens from
-- before are retired (a turn in flight at the upgrade mints a new one when it
-- resumes); the placeholder is unique and never a hex digest.
ALTER TABLE agent_sessions RENAME COLUMN token TO token_hash;
UPDATE agent_sessions SET token_hash = 'retired:' || id;
