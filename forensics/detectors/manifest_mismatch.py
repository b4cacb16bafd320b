"""CS111 manifest-mismatch."""

from __future__ import annotations

from commitsleuth.forensics.detectors.base import SqlDetector, in_temp_layer
from commitsleuth.forensics.detectors.partial_output import write_verdicts_sql
from commitsleuth.forensics.success_manifest import FILE_LIMIT

# A committer's _SUCCESS manifest (S3A committers, Hadoop's manifest committer) lists the files
# the job committed; the same listing (one source: an audit, a live inventory) shows what is
# there, under the marker's directory. Paths are compared without scheme and authority (S3A
# lists "/key", the manifest committer the destination URI). Files readers skip (names starting with _ or ., Hadoop's
# hidden-file rule) and temp layers (CS109's business) are not data files. A list of
# FILE_LIMIT names may be cut by the committer: then files it does not name are not judged.
# An unlisted file is extra when it was written after the commit (the marker's time) or belongs
# to the committed write job (its part-NNNNN-<uuid> name): older files of other write jobs are
# earlier appends (an append's manifest lists only its own files; CS108 sees several jobs).
# A later file is no extra file of the old manifest either when a later, committed write put it
# there without replacing the manifest (marksuccessfuljobs=false, a dynamic overwrite, a Hive
# INSERT INTO): its write job committed (CS105's verdicts), Hive's load moved it in, or a newer
# _SUCCESS of another commit marks the directory holding it.
_SQL = """
WITH {verdicts},
manifests AS (
    SELECT event_id, source_id, ts, location, path,
           detail->'manifest'->>'jobId' AS job_id, detail->'manifest'->>'committer' AS committer,
           CAST(detail->'manifest'->'filenames' AS VARCHAR[]) AS names
    FROM events
    -- by its base name: a job whose output was a partition's subdirectory wrote dt=1/sub/_SUCCESS
    WHERE kind = 'file' AND base_name(file_name) = '_SUCCESS' AND location IS NOT NULL
      AND json_array_length(detail->'manifest'->'filenames') > 0
      AND coalesce(detail->'manifest'->>'success', 'true') <> 'false'
),
listed AS (
    SELECT event_id AS manifest_id, regexp_replace(unnest(names), '{scheme}', '') AS key
    FROM manifests
),
on_disk AS (
    SELECT m.event_id AS manifest_id, f.event_id, f.ts, f.file_name, f.write_uuid, f.partition_spec,
           regexp_replace(f.path, '{scheme}', '') AS key
    FROM manifests m JOIN events f ON f.source_id IS NOT DISTINCT FROM m.source_id AND f.location = m.location
    WHERE f.kind = 'file'  -- a directory entry has no file name: starts_with(NULL) keeps it out
      -- under the marker's own directory: a job that wrote one partition's path (…/t/dt=1/_SUCCESS)
      -- committed nothing in the table's other partitions, which share its location
      AND starts_with(f.path, regexp_replace(m.path, '_SUCCESS$', ''))
      -- markers and hidden files, in a partition's subdirectory too (sub/.part-0.crc)
      AND NOT starts_with(base_name(f.file_name), '_') AND NOT starts_with(base_name(f.file_name), '.')
      AND NOT {temp}
),
committed AS (  -- the listed files found on disk: their write jobs are the committed job's
    SELECT d.manifest_id, d.write_uuid FROM on_disk d
    SEMI JOIN listed l ON l.manifest_id = d.manifest_id AND l.key = d.key
),
later AS (  -- files of a later, committed write of their own (not the manifest's job)
    SELECT d.manifest_id, d.event_id FROM on_disk d
    WHERE d.write_uuid IN (SELECT job_id FROM write_committed)
      AND d.write_uuid NOT IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id)
    UNION
    -- Hive's MoveTask / loadPartition moved it (or its directory) in out of a staging dir
    SELECT d.manifest_id, d.event_id FROM on_disk d JOIN manifests m ON m.event_id = d.manifest_id
    JOIN events r ON r.kind = 'rename' AND r.ts > m.ts
     AND regexp_matches(r.path, '/(\\.hive-staging[^/]*|-ext-[0-9]+)(/|$)')
     AND (d.key = regexp_replace(r.target_path, '{scheme}', '')
          OR starts_with(d.key, regexp_replace(r.target_path, '{scheme}', '') || '/'))
    UNION
    -- a load into the location (and partition) after the commit, the file written before it
    SELECT d.manifest_id, d.event_id FROM on_disk d JOIN manifests m ON m.event_id = d.manifest_id
    JOIN partition_events l ON l.kind = 'load' AND l.part_location = m.location AND l.ts > m.ts AND l.ts >= d.ts
     AND (l.part_spec IS NULL OR l.part_spec = d.partition_spec)
    UNION
    -- a newer _SUCCESS of another commit over the directory holding it (whichever listing saw it)
    SELECT d.manifest_id, d.event_id FROM on_disk d JOIN manifests m ON m.event_id = d.manifest_id
    JOIN events s ON s.kind = 'file' AND base_name(s.file_name) = '_SUCCESS' AND s.event_id <> m.event_id AND s.ts >= d.ts
     AND starts_with(d.key, regexp_replace(regexp_replace(s.path, '_SUCCESS$', ''), '{scheme}', ''))
),
extra AS (  -- on disk, not in the manifest (only where its list is whole), and the commit's business
    SELECT d.* FROM on_disk d JOIN manifests m ON m.event_id = d.manifest_id
    WHERE len(m.names) < {limit}
      AND NOT EXISTS (SELECT 1 FROM listed l WHERE l.manifest_id = d.manifest_id AND l.key = d.key)
      AND (d.ts > m.ts
           OR d.write_uuid IN (SELECT c.write_uuid FROM committed c WHERE c.manifest_id = d.manifest_id))
      AND NOT EXISTS (SELECT 1 FROM later x WHERE x.manifest_id = d.manifest_id AND x.event_id = d.event_id)
),
missing AS (  -- in the manifest, not on disk
    SELECT l.* FROM listed l
    WHERE NOT EXISTS (SELECT 1 FROM on_disk d WHERE d.manifest_id = l.manifest_id AND d.key = l.key)
),
judged AS (
    SELECT m.event_id,
           (SELECT list(x.file_name ORDER BY x.file_name) FROM extra x WHERE x.manifest_id = m.event_id) AS extra,
           (SELECT list(x.event_id ORDER BY x.event_id) FROM extra x WHERE x.manifest_id = m.event_id) AS extra_ids,
           (SELECT max(x.ts) FROM extra x WHERE x.manifest_id = m.event_id) AS extra_t1,
           (SELECT list(x.key ORDER BY x.key) FROM missing x WHERE x.manifest_id = m.event_id) AS missing
    FROM manifests m
)
SELECT m.location, NULL::VARCHAR AS partition_spec, NULL::VARCHAR AS table_name, m.path AS manifest,
       m.job_id, m.committer, len(m.names) AS listed,
       coalesce(j.extra, []) AS extra, coalesce(j.missing, []) AS missing,
       ['job ' || coalesce(m.job_id, '?')] AS actors,
       [m.event_id] || coalesce(j.extra_ids, []) AS evidence,
       least(m.ts, j.extra_t1) AS t0, greatest(m.ts, j.extra_t1) AS t1,
       CASE WHEN j.missing IS NOT NULL THEN 'critical' END AS severity
FROM manifests m JOIN judged j ON j.event_id = m.event_id
WHERE j.extra IS NOT NULL OR j.missing IS NOT NULL
ORDER BY m.location, m.path
""".format(verdicts=write_verdicts_sql(), scheme="^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?", temp=in_temp_layer("f.path"),
           limit=FILE_LIMIT)


class ManifestMismatch(SqlDetector):
    """The files in a committed location are not the files its _SUCCESS manifest lists.

    Symptom: a location written through the S3A committers or Hadoop's manifest committer holds
    data files its _SUCCESS manifest does not list (readers count their rows as if committed),
    or the manifest lists files that are no longer there (their rows are gone).
    Cause: extra files are another writer's: a second job or a zombie task attempt that wrote
    after (or beside) the commit, a direct write bypassing the committer, or a job whose files
    were appended without replacing the manifest. Missing files were deleted after the commit:
    a cleanup job, an overwrite that failed half-way, a lifecycle rule, a user.
    Remedy: find the writer of each extra file (its time, the storage's audit or access logs)
    and remove it or re-run the job that owns the location; restore missing files from the
    storage's versions or trash, else re-run the job. Severity is critical when files are missing.
    """

    code = "CS111"
    name = "manifest-mismatch"
    severity = "high"
    sql = _SQL

    def summary(self, row):
        parts = []
        if row["extra"]:
            parts.append(f"{len(row['extra'])} file(s) on disk it does not list ({', '.join(row['extra'][:5])})")
        if row["missing"]:
            names = [k.rsplit("/", 1)[-1] for k in row["missing"]]
            parts.append(f"{len(names)} listed file(s) missing ({', '.join(names[:5])})")
        committer = (row["committer"] or "a committer").rsplit(".", 1)[-1]
        return (f"_SUCCESS of job {row['job_id'] or '?'} ({committer}) in {row['location']} lists "
                f"{row['listed']} file(s): " + "; ".join(parts))

    def detail(self, row):
        return {"manifest": row["manifest"], "job_id": row["job_id"], "committer": row["committer"],
                "listed": row["listed"], "extra": list(row["extra"]), "missing": list(row["missing"])}
