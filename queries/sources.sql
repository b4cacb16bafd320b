-- What was ingested: each source with its format, status, counts and the reason it was not ok.
SELECT source_id, uri, kind, format, status, lines, events, rejected, reason
FROM sources
ORDER BY source_id;
