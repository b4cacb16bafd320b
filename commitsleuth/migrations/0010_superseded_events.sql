-- Issue 10: a file that shrank since it was read is a new version, read from its start. The old
-- version's events move here (kept as evidence, out of every detector's way) and its source row
-- gets status 'superseded': the events table never holds one file's lines twice.
CREATE TABLE superseded_events AS SELECT * FROM events WHERE false;
