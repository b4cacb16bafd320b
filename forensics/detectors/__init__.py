"""The detectors, one module each, listed explicitly here in the order reports show them."""

from commitsleuth.forensics.detectors.base import Detector, Finding, SqlDetector, severity_rank
from commitsleuth.forensics.detectors.dedup_wrong import DedupKeptWrong
from commitsleuth.forensics.detectors.double_commit import DoubleCommit
from commitsleuth.forensics.detectors.empty_partition import EmptyPartition
from commitsleuth.forensics.detectors.late_commit import LateCommit
from commitsleuth.forensics.detectors.leftover_temp import LeftoverTemp
from commitsleuth.forensics.detectors.manifest_mismatch import ManifestMismatch
from commitsleuth.forensics.detectors.metastore_mismatch import MetastoreMismatch
from commitsleuth.forensics.detectors.multiple_writers import MultipleWriters
from commitsleuth.forensics.detectors.partial_output import PartialOutput
from commitsleuth.forensics.detectors.racing_loaders import RacingLoaders
from commitsleuth.forensics.detectors.same_name_overwrite import SameNameOverwrite
from commitsleuth.forensics.detectors.table_orphan import TableOrphanFile
from commitsleuth.forensics.detectors.table_duplicate import TableDuplicateFile
from commitsleuth.forensics.detectors.table_missing import TableMissingFile
from commitsleuth.forensics.detectors.table_lost_commit import TableLostCommit
from commitsleuth.forensics.detectors.table_replayed_batch import TableReplayedBatch
from commitsleuth.forensics.detectors.hudi_incomplete import HudiIncompleteInstant

DETECTORS: tuple[type[Detector], ...] = (
    DoubleCommit,
    LateCommit,
    RacingLoaders,
    SameNameOverwrite,
    PartialOutput,
    DedupKeptWrong,
    MetastoreMismatch,
    MultipleWriters,
    ManifestMismatch,
    LeftoverTemp,
    EmptyPartition,
    # table formats' own logs (Delta, Iceberg, Hudi)
    TableMissingFile,
    TableLostCommit,
    TableDuplicateFile,
    TableReplayedBatch,
    TableOrphanFile,
    HudiIncompleteInstant,
)

__all__ = ["DETECTORS", "Detector", "Finding", "SqlDetector", "severity_rank"]
