-- Issue 34: a file name that is not UTF-8 (a byte such as 0xff, which Linux allows) is kept as
-- its bytes here; `uri` holds its readable form, each such byte written \xff.
ALTER TABLE sources ADD COLUMN uri_bytes BLOB;
