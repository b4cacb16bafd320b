-- Issue 34: a source's identity is its URI as read, never as masked. `uri` is stored redacted,
-- so two URIs that differ only in a masked value (a credential in a directory name or a URL's
-- user-info) would read as one, and a rewritten file would not be found again. `uri_key`
-- (sha256 of the URI as read) is set where redaction changed the URI, NULL elsewhere; a source
-- is found again by it (Store.find_previous).
ALTER TABLE sources ADD COLUMN uri_key VARCHAR;
