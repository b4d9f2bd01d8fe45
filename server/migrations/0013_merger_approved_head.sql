-- An approval binds to the code it approved: the head the merger first read
-- and its diff's digest. A job from before has neither; it binds on its
-- next read.
ALTER TABLE merger_jobs ADD COLUMN approved_sha TEXT NOT NULL DEFAULT '';
ALTER TABLE merger_jobs ADD COLUMN approved_diff TEXT NOT NULL DEFAULT '';
