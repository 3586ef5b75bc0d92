"""The scan framework: projection, schema tracking, implicit/partition and missing columns.

Everything here is pure Python + pyarrow and picklable: it runs on Spark executors. Layering:
``scan`` imports ``projection``, ``types`` and ``errors`` (and ``resultset`` for the reader
lifecycle), never ``sql``, ``server`` or pyspark.
"""

from auger.scan.conflicts import ErrorContext, ScanStateError, SchemaMismatchError
from auger.scan.filter import PROJECT_ALL, PROJECT_NONE, ProjectionFilter, ProjResult
from auger.scan.schema import ScanColumn, ScanTuple
from auger.scan.tracker import ProjectionType, ScanSchemaTracker

__all__ = [
    "PROJECT_ALL",
    "PROJECT_NONE",
    "ErrorContext",
    "ProjResult",
    "ProjectionFilter",
    "ProjectionType",
    "ScanColumn",
    "ScanSchemaTracker",
    "ScanStateError",
    "ScanTuple",
    "SchemaMismatchError",
]
