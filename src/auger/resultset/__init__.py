"""The result set loader: typed row writers that build bounded Arrow batches.

Readers write rows through a ``RowSetLoader`` (``loader.writer()``); the loader keeps every batch
within a row limit, a per-vector byte limit and an optional batch byte budget, moving the row
that overflows to the next batch, and ``harvest()`` returns ``pyarrow.RecordBatch``es built from
the writers' own buffers.

Layering: this package depends on ``auger.types`` and ``auger.errors`` only (and pyarrow/numpy);
it must stay importable on a Spark executor without a session.
"""

from auger.resultset.exceptions import ConversionError, LoaderStateError, UndefinedColumnError
from auger.resultset.loader import ResultSetLoader
from auger.resultset.loader_options import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_VECTOR_SIZE_LIMIT,
    MAX_ROW_LIMIT,
    LoaderOptions,
)
from auger.resultset.projection import ProjectionSet
from auger.resultset.rowset import RowSetLoader
from auger.resultset.writers.array import ArrayWriter, DictWriter
from auger.resultset.writers.scalar import ScalarWriter
from auger.resultset.writers.tuple import TupleWriter

__all__ = [
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_VECTOR_SIZE_LIMIT",
    "MAX_ROW_LIMIT",
    "ArrayWriter",
    "ConversionError",
    "DictWriter",
    "LoaderOptions",
    "LoaderStateError",
    "ProjectionSet",
    "ResultSetLoader",
    "RowSetLoader",
    "ScalarWriter",
    "TupleWriter",
    "UndefinedColumnError",
]
