-- Initial schema. Migrations are forward-only: never edit a released file, add the next one.
CREATE TABLE sources (
    source_id    INTEGER PRIMARY KEY,
    uri          VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,      -- file | eventlog | live | inventory
    format       VARCHAR,
    fingerprint  VARCHAR,
    size_bytes   BIGINT,
    bytes_read   BIGINT DEFAULT 0,
    lines        BIGINT DEFAULT 0,
    events       BIGINT DEFAULT 0,
    rejected     BIGINT DEFAULT 0,
    status       VARCHAR NOT NULL,      -- ok | partial | failed | skipped | running
    reason       VARCHAR,
    started_at   TIMESTAMP,
    finished_at  TIMESTAMP
);

CREATE TABLE events (
    event_id      BIGINT NOT NULL,
    kind          VARCHAR NOT NULL,
    ts            TIMESTAMP,
    source_id     BIGINT,
    line_no       BIGINT,
    byte_offset   BIGINT,
    app_id        VARCHAR,
    job_id        VARCHAR,
    query_id      VARCHAR,
    stage_id      INTEGER,
    stage_attempt INTEGER,
    task_id       VARCHAR,
    attempt_id    VARCHAR,
    attempt_no    INTEGER,
    speculative   BOOLEAN,
    executor_id   VARCHAR,
    thread        VARCHAR,
    host          VARCHAR,
    table_name    VARCHAR,
    location      VARCHAR,
    partition_spec VARCHAR,
    path          VARCHAR,
    target_path   VARCHAR,
    file_name     VARCHAR,
    file_task     VARCHAR,
    file_attempt  INTEGER,
    write_uuid    VARCHAR,
    size          BIGINT,
    status        VARCHAR,
    detail        JSON,
    raw           VARCHAR
);

CREATE TABLE rejects (
    source_id   INTEGER NOT NULL,
    reason      VARCHAR NOT NULL,
    count       BIGINT NOT NULL,
    first_line  BIGINT,
    sample      VARCHAR,
    PRIMARY KEY (source_id, reason)
);

CREATE TABLE findings (
    finding_id     INTEGER PRIMARY KEY,
    code           VARCHAR NOT NULL,
    name           VARCHAR NOT NULL,
    severity       VARCHAR NOT NULL,    -- low | medium | high | critical
    table_name     VARCHAR,
    location       VARCHAR,
    partition_spec VARCHAR,
    window_start   TIMESTAMP,
    window_end     TIMESTAMP,
    actors         VARCHAR[],
    evidence       BIGINT[],
    summary        VARCHAR NOT NULL,
    explanation    VARCHAR,
    remedy         VARCHAR,
    detail         JSON,
    created_at     TIMESTAMP DEFAULT current_timestamp
);

-- Every event that touched a partition, with its actor and evidence place, in time order.
CREATE VIEW timeline AS
SELECT e.event_id, e.ts, e.kind,
       coalesce(e.attempt_id, e.thread, e.query_id, e.app_id) AS actor,
       coalesce(e.target_path, e.path) AS path, e.status,
       e.table_name, e.location, e.partition_spec,
       s.uri AS source, e.line_no, e.raw
FROM events e LEFT JOIN sources s ON s.source_id = e.source_id
WHERE e.location IS NOT NULL OR e.table_name IS NOT NULL;
