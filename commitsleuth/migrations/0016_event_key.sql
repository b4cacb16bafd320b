-- Issue 10: the identity of a Spark listener event (parsers/spark_identity.py), the same whether
-- it came from live capture, its spool or Spark's own event log; NULL for every other event.
-- Ingest adds a Spark event only when no stored event of its application has the same key.
ALTER TABLE events ADD COLUMN event_key BIGINT;
ALTER TABLE superseded_events ADD COLUMN event_key BIGINT;
