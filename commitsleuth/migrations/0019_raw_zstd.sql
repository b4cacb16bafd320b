-- Issue 14: raw lines are most of a store's bytes (a Spark task-end line is about 1.2 KB) and
-- writing them was most of an event log's ingest: DuckDB weighed dictionary and FSST encodings
-- for every block of text. zstd alone compresses them about 10x for a fraction of that cost.
-- The column moves to the end of the table (columns are read and written by name).
-- A store created with DuckDB storage older than v1.2 cannot hold zstd columns: there
-- Store.migrate applies this file without the USING COMPRESSION clauses (the same column, the
-- old encodings).
ALTER TABLE events ADD COLUMN raw_zstd VARCHAR USING COMPRESSION zstd;
UPDATE events SET raw_zstd = raw;
ALTER TABLE events DROP COLUMN raw;
ALTER TABLE events RENAME COLUMN raw_zstd TO raw;
-- superseded_events keeps the same columns in the same order as events
ALTER TABLE superseded_events ADD COLUMN raw_zstd VARCHAR USING COMPRESSION zstd;
UPDATE superseded_events SET raw_zstd = raw;
ALTER TABLE superseded_events DROP COLUMN raw;
ALTER TABLE superseded_events RENAME COLUMN raw_zstd TO raw;
