"""Options of a result set loader: batch limits, the starting schema and the projection.

The limits are Drill's: a batch holds at most ``row_limit`` rows (default 4096, never more than
65536), no single vector may grow past ``vector_size_limit`` bytes (default 16 MiB), and an
optional ``batch_size_limit`` caps the bytes of the whole batch. Values outside the allowed range
are clamped rather than rejected, as Drill does, so a reader can pass a user's setting straight in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from auger.types import ColumnMetadata, TupleSchema
from auger.types.schema_text import parse_schema

__all__ = [
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_VECTOR_SIZE_LIMIT",
    "MAX_ROW_LIMIT",
    "LoaderOptions",
    "clamp_row_limit",
]

DEFAULT_ROW_LIMIT = 4096
MAX_ROW_LIMIT = 65536
DEFAULT_VECTOR_SIZE_LIMIT = 16 * 1024 * 1024


def clamp_row_limit(value: int | None) -> int:
    """Clamp a requested row count into ``[1, 65536]``; ``None`` means the default."""
    if value is None:
        return DEFAULT_ROW_LIMIT
    return max(1, min(MAX_ROW_LIMIT, int(value)))


@dataclass
class LoaderOptions:
    """Everything a ``ResultSetLoader`` needs to know before the first batch.

    Args:
        row_limit: rows per batch; clamped into ``[1, 65536]``.
        vector_size_limit: the largest any one vector (data, offsets) may grow, in bytes.
        batch_size_limit: optional budget for all vectors of a batch together, in bytes.
        schema: columns known up front (a ``TupleSchema``, a list of ``ColumnMetadata``, or
            Drill schema text such as ``"a INT NOT NULL, b VARCHAR"``).
        projection: column paths the query wants (``["a", "m.x", "c"]``); ``None`` projects all
            columns, ``[]`` none. Unprojected columns get writers that drop their values.
        cache: reserved for a vector cache shared by the readers of one scan. Arrow arrays are
            immutable, so there is nothing to share yet; any value is accepted and kept.
        limit: optional total row limit across all batches (a pushed-down SQL ``LIMIT``).
    """

    row_limit: int = DEFAULT_ROW_LIMIT
    vector_size_limit: int = DEFAULT_VECTOR_SIZE_LIMIT
    batch_size_limit: int | None = None
    schema: TupleSchema | Sequence[ColumnMetadata] | str | None = None
    projection: Iterable[str] | None = None
    cache: Any = None
    limit: int | None = None

    def __post_init__(self) -> None:
        self.row_limit = clamp_row_limit(self.row_limit)
        if self.vector_size_limit is None:
            self.vector_size_limit = DEFAULT_VECTOR_SIZE_LIMIT
        if self.vector_size_limit < 1:
            raise ValueError(f"vector_size_limit must be positive, got {self.vector_size_limit}")
        if self.batch_size_limit is not None and self.batch_size_limit < 1:
            raise ValueError(f"batch_size_limit must be positive, got {self.batch_size_limit}")
        if self.limit is not None and self.limit < 0:
            raise ValueError(f"limit must not be negative, got {self.limit}")
        if self.projection is not None and not isinstance(self.projection, list):
            self.projection = list(self.projection)

    def schema_columns(self) -> list[ColumnMetadata]:
        """The starting schema as a list of columns, whatever form it was given in."""
        if self.schema is None:
            return []
        if isinstance(self.schema, str):
            return list(parse_schema(self.schema))
        return list(self.schema)
