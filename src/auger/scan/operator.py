"""The scan operator: a list of files, one reader each, out come Arrow batches of the scan schema.

:class:`ScanOperator` is the whole scan framework behind one iterator. Per file it creates a
reader, runs it and merges the reader's columns with the implicit, partition and missing columns
into the output order (projection order; for a wildcard the table columns, then implicit columns,
then partitions). Row counts line up across the three sources; an empty projection (``COUNT(*)``)
yields rows with no columns.

Two kinds of reader plug in, and both run here, on every path (a planned scan included):

* **FormatReader-style** (``docs/plugins.md``): ``reader(file, config) -> FormatReader``; the
  reader writes rows through a result set loader and gets projection, batch limits (rows, and
  bytes per column), the overflow row (carried whole into the next batch) and the ``LIMIT`` for
  free;
* **Arrow-native** (``FormatPlugin.read_arrow``): whole Arrow batches of any size, conformed to
  the types the scan settled on (:class:`~auger.scan.file_scan.ArrowFileScan`, or
  :class:`~auger.scan.file_scan.FrozenScan` for a planned scan), then cut by the loader's bulk
  path (``ResultSetLoader.arrow_batches``) into zero-copy slices within the same row and
  byte limits as loader batches.

Schema modes, for a wildcard:

* ``"merge"`` (Drill's default): a later file's new columns join the schema and
  ``schema_version`` grows; earlier batches simply lack them;
* ``"strict"``: the first batch commits the schema; later new columns are dropped and a warning
  (``operator.warnings``) names each.

:func:`auger.scan.run.run_scan` runs a planned :class:`~auger.scan.spec.ScanSpec` through the
operator, with the tracker frozen to the planned schema.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, Literal, TypeAlias

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, uses_reader
from auger.formats.conflicts import conflict_error, merge_deferring
from auger.resultset import LoaderOptions, ResultSetLoader
from auger.scan.conflicts import ErrorContext
from auger.scan.file_scan import ArrowFileScan, FrozenScan
from auger.scan.implicit import (
    FileDescrip,
    ImplicitColumns,
    ImplicitOptions,
    describe_file,
    max_partition_depth,
    partition_keys,
    resolve_implicit_columns,
)
from auger.scan.lifecycle import FormatReader, ScanLifecycle
from auger.scan.spec import FileSplit
from auger.scan.tracker import ProjectionType, ScanSchemaTracker
from auger.types import ColumnMetadata, MinorType, TupleSchema
from auger.types.arrow import field_to_arrow

__all__ = ["ReaderFormatPlugin", "ReaderSource", "ScanOperator"]

log = logging.getLogger(__name__)

#: What a scan reads with: a format plugin, or a function from a split to a reader (or to Arrow
#: batches), handy for in-memory readers in tests.
ReaderSource: TypeAlias = (
    FormatPlugin | Callable[[FileSplit], "FormatReader | Iterable[pa.RecordBatch]"]
)


class ReaderFormatPlugin(FormatPlugin):
    """A format plugin written as a :class:`FormatReader` factory: :meth:`reader` is required.

    ``discover_schema`` comes from :class:`FormatPlugin`, derived from :meth:`reader`; every
    scan (the Spark data source's included) runs the reader in :class:`ScanOperator`.
    """

    @abstractmethod
    def reader(self, file: FileSplit, config: FormatConfig) -> FormatReader:
        """A new reader for one file (its negotiator brings projection and options)."""


def discover_through_reader(
    plugin: FormatPlugin, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    """The union of the first files' schemas (each reader's early schema, else its first
    batch's); a type no widening reconciles is a conflict naming the file, deferred to the
    query that reads the column."""
    merged = TupleSchema()
    for path in list(files)[: plugin.discovery_sample]:
        schema = _file_schema(plugin, FileSplit(path), config, options)
        merged = merge_deferring(merged, schema, partial(conflict_error, path))
    return merged


def _file_schema(
    plugin: FormatPlugin, split: FileSplit, config: FormatConfig, options: Mapping[str, Any]
) -> TupleSchema:
    lc = ScanLifecycle(ScanSchemaTracker.build(["*"]), row_limit=64)
    rl = lc.reader(FileDescrip(split.path), plugin.reader(split, config), options=options)
    failed = False
    try:
        if not rl.open():
            return TupleSchema()
        neg = rl.negotiator
        if not (neg.table_schema is not None and neg.schema_complete):
            rl.next()
        return lc.tracker.output_schema() if lc.tracker.is_resolved() else TupleSchema()
    except BaseException:
        failed = True
        raise
    finally:
        rl.close(failed)


def _under(path: str, root: str | None) -> bool:
    """Is the file below the selection root (so that it has partition values)?"""
    try:
        FileDescrip(path, root)
    except ValueError:
        return False
    return True


def _as_split(file: FileSplit | str) -> FileSplit:
    return file if isinstance(file, FileSplit) else FileSplit(str(file))


class ScanOperator:
    """Runs files through one reader each and yields output batches (see the module docstring).

    Args:
        source: a format plugin (FormatReader-style or Arrow-native), or a function from a split
            to a ``FormatReader`` or to an iterable of Arrow batches.
        files: the files (``FileSplit``s or paths), read in order.
        projection: the project list (``["*"]``, ``["a", "filename"]``, ``[]``).
        selection_root: where ``dirN`` counts from.
        defined_schema: the planner's exact output schema (types and order), if any.
        provided_schema: a provided schema (lenient, or strict with ``drill.strict``).
        mode: ``"merge"`` (a wildcard's schema may grow) or ``"strict"`` (the first batch
            commits it; later new columns are dropped with a warning).
        limit: total rows (``LIMIT`` push-down); readers past it are never created.
        batch_rows: rows per output batch at most.
        null_type: type of missing columns nobody typed (default nullable INT).
        options: session options (implicit column labels; passed on to readers).
        config: the format config handed to a plugin's ``reader``/``read_arrow``.
        implicit_options: overrides what ``options`` and the files say about implicit columns.
        schema_batch: yield a 0-row batch with the schema before the first data batch (and as
            the only batch of a scan whose readers gave a schema but no rows).
        convert: columns to convert reader values to (FormatReader path); defaults to the
            provided schema.
        tracker, implicit: a ready tracker (implicit columns resolved) instead of building one.
        reader_options: extra keys passed to Arrow-native readers only.
        read_columns: the column names an Arrow-native reader is asked for (``None``: all);
            by default the reader input schema's names (all for a wildcard).
        vector_size_limit: the loader's per-vector byte limit.
        warn_dropped: warn about reader columns left out of the output; by default only for a
            wildcard in strict mode (a ``SELECT *`` over a planned schema wants it too).
        error_context: scan-level context lines (``Table: ...``).
        frozen_schema: the output schema as Arrow when the tracker is frozen to a planned
            (defined) schema: Arrow-native readers then go through :class:`FrozenScan`, which
            works out the conversions once per reader schema rather than per batch.
    """

    def __init__(
        self,
        source: ReaderSource,
        files: Sequence[FileSplit | str],
        projection: Sequence[str] | None = ("*",),
        *,
        selection_root: str | None = None,
        defined_schema: TupleSchema | None = None,
        provided_schema: Any = None,
        mode: Literal["merge", "strict"] = "merge",
        limit: int | None = None,
        batch_rows: int = 4096,
        null_type: ColumnMetadata | MinorType | str | None = None,
        options: Mapping[str, Any] | None = None,
        config: FormatConfig | None = None,
        implicit_options: ImplicitOptions | None = None,
        schema_batch: bool = False,
        convert: TupleSchema | None = None,
        tracker: ScanSchemaTracker | None = None,
        implicit: ImplicitColumns | None = None,
        reader_options: Mapping[str, Any] | None = None,
        read_columns: Sequence[str] | Literal["auto"] | None = "auto",
        vector_size_limit: int | None = None,
        warn_dropped: bool | None = None,
        error_context: ErrorContext | None = None,
        frozen_schema: pa.Schema | None = None,
    ) -> None:
        if mode not in ("merge", "strict"):
            raise ValueError(f"mode must be 'merge' or 'strict', not {mode!r}")
        self.source = source
        self.files = [_as_split(f) for f in files]
        self.selection_root = selection_root
        self.options: Mapping[str, Any] = dict(options or {})
        self.reader_options = dict(reader_options or {})
        self._read_columns = read_columns
        self.config = config or FormatConfig("", "", ())
        self.batch_rows = max(1, batch_rows)
        self.schema_batch = schema_batch
        self.mode = mode
        context = error_context or ErrorContext()
        if tracker is None:
            tracker = ScanSchemaTracker.build(
                projection,
                defined_schema=defined_schema,
                provided_schema=provided_schema,
                allow_schema_change=mode == "merge",
                error_context=context,
            )
            if implicit_options is None:
                paths = [f.path for f in self.files if _under(f.path, selection_root)]
                implicit_options = ImplicitOptions.from_options(
                    self.options,
                    max_partition_depth=max_partition_depth(paths, selection_root),
                    partition_keys=partition_keys(paths, selection_root),
                )
            implicit = resolve_implicit_columns(tracker, implicit_options)
        if convert is None and provided_schema is not None:
            convert = getattr(provided_schema, "schema", provided_schema)
        self.tracker = tracker
        kw: dict[str, Any] = {}
        if vector_size_limit is not None:
            kw["vector_size_limit"] = vector_size_limit
        self.lifecycle = ScanLifecycle(
            tracker,
            implicit,
            row_limit=self.batch_rows,
            limit=limit,
            null_type=null_type,
            error_context=tracker.error_context(),
            convert=convert,
            **kw,
        )
        # Arrow-native readers are conformed to every type the scan settled on (they cannot
        # see the input schema); loader readers only to ``convert`` (see ScanLifecycle).
        self.arrow_scan = ArrowFileScan(
            tracker, implicit, null_type=null_type, error_context=tracker.error_context()
        )
        self.frozen = (
            None
            if frozen_schema is None
            else FrozenScan(
                tracker,
                implicit or ImplicitColumns(),
                frozen_schema,
                text_types=self.config.type == "text",
            )
        )
        if self.frozen is not None:
            # Row readers' loader batches take the same frozen plan as Arrow batches.
            self.lifecycle.file_scan = self.frozen
        if warn_dropped is not None:
            self.lifecycle.warn_drops = warn_dropped
        self._version = 0
        self._noted = pa.schema([])  # the last Arrow reader schema checked for dropped columns
        self._last_schema: pa.Schema | None = None
        self._schema_sent = False
        self._any_opened = False

    # ------------------------------------------------------------------------ introspection
    @property
    def schema_version(self) -> int:
        """The version of the output schema: 1 for the first schema delivered, one more each
        time a batch comes out with a different schema (a later file's new columns, merge
        mode)."""
        return max(1, self._version)

    @property
    def warnings(self) -> list[str]:
        """Messages about columns the scan dropped (strict mode)."""
        return self.lifecycle.warnings

    def output_schema(self) -> TupleSchema | None:
        """The output schema once known (``None`` before any reader gave one)."""
        return self.lifecycle.output_schema()

    def empty_batch(self) -> pa.RecordBatch:
        """A 0-row batch of the current output schema."""
        schema = pa.schema([field_to_arrow(c) for c in self.tracker.output_schema()])
        return pa.RecordBatch.from_pylist([], schema=schema)

    # ----------------------------------------------------------------------------- running
    def __iter__(self) -> Iterator[pa.RecordBatch]:
        for split in self.files:
            if self.lifecycle.at_limit():
                break
            for out in self._read(split):
                yield from self._emit(out)
        if (
            self.schema_batch
            and not self._schema_sent
            and self._any_opened
            and self.tracker.is_resolved()
        ):
            self._schema_sent = True
            yield self.empty_batch()

    def _emit(self, out: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        if self._last_schema is None or not out.schema.equals(self._last_schema):
            self._last_schema = out.schema
            self._version += 1
        if self.schema_batch and not self._schema_sent:
            self._schema_sent = True
            yield out.slice(0, 0)
        if out.num_rows:
            yield out

    def _descrip(self, split: FileSplit) -> FileDescrip:
        return describe_file(split.path, self.selection_root, split.mtime)

    def _make(self, split: FileSplit, ctx: ErrorContext) -> Any:
        """The reader (or Arrow batch iterator) for one split; failures name the file."""
        source = self.source
        try:
            if isinstance(source, FormatPlugin):
                if uses_reader(source):
                    return source.reader(split, self.config)
                options = {**self.options, **self.reader_options}
                lc = self.lifecycle
                if lc.limit is not None:
                    # Rows still wanted (LIMIT push-down): a reader may read less for them.
                    options["__limit__"] = max(0, lc.limit - lc.rows_out)
                cols = self._arrow_columns()
                return source.read_arrow(split, self.config, options, cols, self.batch_rows)
            return source(split)
        except UserError as e:
            raise ctx.add_context(e) from e.__cause__
        except Exception as e:
            raise ctx.add_context(
                UserError.data_read(f"Reader creation failed: {type(e).__name__}: {e}")
            ) from e

    def _arrow_columns(self) -> list[str] | None:
        """Names an Arrow-native reader may limit itself to (``None``: all)."""
        if self._read_columns != "auto":
            return None if self._read_columns is None else list(self._read_columns)
        t = self.tracker
        if t.projection_type is ProjectionType.ALL:
            return None
        return [c.name.lower() for c in t.reader_input_schema()]

    def _read(self, split: FileSplit) -> Iterator[pa.RecordBatch]:
        file = self._descrip(split)
        ctx = ErrorContext(f"File: {file.fqn}", parent=self.lifecycle.context)
        handle = self._make(split, ctx)
        if isinstance(handle, FormatReader):
            yield from self._read_reader(file, split, handle)
        else:
            self.lifecycle.readers_opened += 1
            self._any_opened = True
            yield from self._read_arrow(file, handle, ctx)

    def _read_reader(
        self, file: FileDescrip, split: FileSplit, reader: FormatReader
    ) -> Iterator[pa.RecordBatch]:
        rl = self.lifecycle.reader(file, reader, split=split, options=self.options)
        failed = False
        try:
            if not rl.open():
                return
            self._any_opened = True
            while (out := rl.next()) is not None:
                yield out
        except BaseException:
            failed = True
            raise
        finally:
            rl.close(failed)

    def _read_arrow(
        self, file: FileDescrip, batches: Iterable[pa.RecordBatch], ctx: ErrorContext
    ) -> Iterator[pa.RecordBatch]:
        """Each reader batch is conformed whole (one call of each conversion per reader batch),
        then handed out through the loader's bulk path: zero-copy slices within its row and
        byte limits."""
        lc = self.lifecycle
        loader = ResultSetLoader(
            LoaderOptions(row_limit=self.batch_rows, vector_size_limit=lc.vector_size_limit)
        )
        scan = self.frozen if self.frozen is not None else self.arrow_scan
        # A counting scan sends one row standing for a whole reader batch's rows: cutting the
        # batch would only send more of them.
        whole = self._counts_whole_batches()
        try:
            for raw in batches:
                if raw.num_rows == 0 and not self._first_arrow(raw):
                    continue
                if lc.at_limit() and lc.rows_out > 0:
                    return
                if lc.limit is not None and raw.num_rows > lc.limit - lc.rows_out:
                    raw = raw.slice(0, max(0, lc.limit - lc.rows_out))
                out = scan.scan_batch(file, raw, ctx)
                self._note_arrow_drops(raw, ctx)
                for piece in (out,) if whole or not out.num_rows else loader.arrow_batches(out):
                    lc.rows_out += piece.num_rows
                    yield piece
                if lc.at_limit():
                    return
        except UserError as e:
            ctx.add_context(e)
            raise
        except Exception as e:  # a reader bug or an unexpected file: name the file
            fmt = self.config.name or getattr(self.source, "type_name", "")
            raise UserError.data_read(
                f"Failure reading file: {type(e).__name__}: {e}",
                [f"File: {file.path}", *([f"Format: {fmt}"] if fmt else [])],
            ) from e

    def _counts_whole_batches(self) -> bool:
        """Whether each output row stands for its batch's rows (a planned ``COUNT(*)`` scan with
        no LIMIT), so a reader batch need not be cut to ``batch_rows``."""
        return self.frozen is not None and self.frozen.counts_rows and self.lifecycle.limit is None

    def _first_arrow(self, raw: pa.RecordBatch) -> bool:
        """An empty Arrow batch still tells the schema, but only while none is known."""
        return raw.num_columns > 0 and not self.tracker.is_resolved()

    def _note_arrow_drops(self, raw: pa.RecordBatch, ctx: ErrorContext) -> None:
        lc = self.lifecycle
        if not lc.warn_drops or raw.schema.equals(self._noted):
            return
        self._noted = raw.schema
        kept = {n.lower() for n in self.tracker.output_schema().names()}
        lc.drop_columns([n for n in raw.schema.names if n.lower() not in kept], ctx)
