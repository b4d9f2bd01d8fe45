-- The agent's own ACP session id, so a reply can ask the agent to load it
-- (`session/load`) instead of starting over; empty until a turn records one.
ALTER TABLE agent_sessions ADD COLUMN acp_session_id TEXT NOT NULL DEFAULT '';
