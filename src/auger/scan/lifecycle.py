"""The reader lifecycle (DESIGN §3.4): format readers that write rows through a result set loader.

A :class:`FormatReader` is opened with a :class:`SchemaNegotiator`, which tells it the file, the
projection and the input schema (typed where the scan knows types) and builds its
``ResultSetLoader``. The reader may declare its schema up front (``set_table_schema``: an *early*
schema, as Parquet can) or add columns as it finds them (a *late* schema, as JSON does). Each
``next()`` writes one batch; the lifecycle harvests it and hands it to :class:`ArrowFileScan`,
which conforms types, adds implicit, partition and missing columns and orders the output.

Errors raised by a reader in ``open``, ``next`` or ``close`` come out as ``UserError``s carrying
the reader's own context, the file and the scan's context. A total row limit (a pushed-down SQL
``LIMIT``) stops the scan early: no further batches, no further files.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from typing import TypeVar

import pyarrow as pa

from auger.errors import ErrorKind, UserError
from auger.projection import RequestedTuple
from auger.resultset import LoaderOptions, ResultSetLoader
from auger.scan.conflicts import ErrorContext
from auger.scan.file_scan import ArrowFileScan
from auger.scan.filter import PROJECT_ALL
from auger.scan.implicit import FileDescrip, ImplicitColumns
from auger.scan.schema import ScanColumn, ScanTuple
from auger.scan.tracker import ProjectionType, ScanSchemaTracker
from auger.types import ColumnMetadata, MinorType, TupleSchema

__all__ = ["FormatReader", "ScanLifecycle", "SchemaNegotiator", "loader_projection"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class FormatReader(ABC):
    """One reader per file: ``open`` it, call ``next`` until it returns False, ``close`` it."""

    @abstractmethod
    def open(self, negotiator: SchemaNegotiator) -> bool:
        """Prepare to read; return False if the file has nothing (not even a schema)."""

    @abstractmethod
    def next(self) -> bool:
        """Write one batch through the loader; return False once the file is exhausted (the
        rows written by this call still count)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; called once, whatever happened."""


def _quote(name: str) -> str:
    if any(ch in name for ch in ".[]`") or name != name.strip():
        return "`" + name.replace("`", "``") + "`"
    return name


def _paths(col: ScanColumn, prefix: str) -> list[str]:
    path = prefix + _quote(col.name)
    if col.members is not None and not col.members.open:
        return [p for m in col.members.columns() for p in _paths(m, path + ".")] or [path]
    proj = col.projection
    members = proj.members if proj is not None else None
    if col.is_dynamic and members is not None and not members.is_project_all():
        return [path + "." + _quote(m.name) for m in members] or [path]
    return [path]


def loader_projection(tracker: ScanSchemaTracker) -> list[str] | None:
    """The projection, as column paths, for a reader's result set loader (``None``: all)."""
    if tracker.projection_type is ProjectionType.NONE:
        return []
    schema: ScanTuple = tracker.internal_schema()
    if tracker.projection_filter() is PROJECT_ALL or schema.open:
        return None
    return [p for sc in schema.columns() if not sc.is_implicit for p in _paths(sc, "")]


class SchemaNegotiator:
    """What a reader learns about its scan, and how it declares its schema.

    Attributes:
        file: the file being read.
        projection: the project list, parsed (``projection.is_projected(name)``).
        input_schema: the columns the scan wants from the reader, typed where known (LATE where
            the reader chooses).
    """

    def __init__(
        self, lifecycle: ScanLifecycle, file: FileDescrip, context: ErrorContext, limit: int | None
    ) -> None:
        self._lifecycle = lifecycle
        self.file = file
        tracker = lifecycle.tracker
        self.projection: RequestedTuple = tracker.projection()
        self.input_schema: TupleSchema = tracker.reader_input_schema()
        self._context = context
        self._limit = limit
        self.table_schema: TupleSchema | None = None
        self.schema_complete = False
        self.loader: ResultSetLoader | None = None

    @property
    def error_context(self) -> ErrorContext:
        return self._context

    def add_context(self, line: str) -> None:
        """Add a line (``"Line: 12"``, ``"Reader: regex"``) to every error about this file."""
        self._context.lines.insert(0, line)

    def is_projected(self, name: str) -> bool:
        """Does the scan want column ``name``? (Readers may skip work for others.)"""
        return self._lifecycle.tracker.projection_filter().is_projected(name)

    def set_table_schema(self, schema: TupleSchema | str, complete: bool = False) -> None:
        """Declare the columns the reader will write, before reading (an early schema)."""
        self.table_schema = TupleSchema.parse(schema) if isinstance(schema, str) else schema
        self.schema_complete = complete

    def build(self) -> ResultSetLoader:
        """The reader's result set loader (built once)."""
        if self.loader is None:
            lc = self._lifecycle
            self.loader = ResultSetLoader(
                LoaderOptions(
                    row_limit=lc.row_limit,
                    schema=self.table_schema,
                    projection=loader_projection(lc.tracker),
                    limit=self._limit,
                )
            )
        return self.loader


class ScanLifecycle:
    """Runs readers, one per file, and yields the scan's output batches.

    Args:
        tracker: the scan's tracker (implicit columns already resolved).
        implicit: the resolved implicit columns.
        row_limit: rows per batch.
        limit: total rows for the whole scan (``LIMIT`` push-down), or ``None``.
        null_type: the readers' type for columns nobody typed (VARCHAR for text).
        error_context: scan-level context lines.
    """

    def __init__(
        self,
        tracker: ScanSchemaTracker,
        implicit: ImplicitColumns | None = None,
        *,
        row_limit: int = 4096,
        limit: int | None = None,
        null_type: ColumnMetadata | MinorType | str | None = None,
        error_context: ErrorContext | None = None,
    ) -> None:
        self.tracker = tracker
        self.row_limit = row_limit
        self.limit = limit
        self.rows_out = 0
        self.context = error_context or tracker.error_context()
        self._scan = ArrowFileScan(
            tracker, implicit, null_type=null_type, error_context=self.context
        )

    def at_limit(self) -> bool:
        return self.limit is not None and self.rows_out >= self.limit

    def read_file(self, file: FileDescrip, reader: FormatReader) -> Iterator[pa.RecordBatch]:
        """Open, drain and close one reader, yielding output batches that have rows."""
        if self.at_limit():
            return
        ctx = ErrorContext(f"File: {file.fqn}", parent=self.context)
        remaining = None if self.limit is None else self.limit - self.rows_out
        negotiator = SchemaNegotiator(self, file, ctx, remaining)
        failed = False
        try:
            if not _guard(ctx, "open", lambda: reader.open(negotiator)):
                return
            if negotiator.table_schema is not None:
                self.tracker.apply_early_reader_schema(negotiator.table_schema, ctx)
            loader = negotiator.build()
            while loader.start_batch():
                more = _guard(ctx, "next", reader.next)
                batch = loader.harvest()
                out = self._scan.scan_batch(file, batch, ctx)
                if out.num_rows:
                    self.rows_out += out.num_rows
                    yield out
                if not more or loader.at_limit() or self.at_limit():
                    break
        except BaseException:
            failed = True
            raise
        finally:
            try:
                _guard(ctx, "close", reader.close)
            except UserError:
                if not failed:
                    raise
                log.warning("reader close failed after an earlier error", exc_info=True)
            if negotiator.loader is not None:
                negotiator.loader.close()


def _guard(ctx: ErrorContext, step: str, fn: Callable[[], T]) -> T:
    """Call a reader method; any failure becomes a UserError with the file's context."""
    try:
        return fn()
    except UserError as e:
        ctx.add_context(e)
        raise
    except Exception as e:
        err = UserError(ErrorKind.DATA_READ, f"Reader {step} failed: {e}")
        raise ctx.add_context(err) from e
