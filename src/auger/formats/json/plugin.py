"""JSON files: newline-delimited (or concatenated) objects, or one top-level array of objects.

Reading goes through pyarrow's streaming C++ JSON reader with an explicit schema (the table's
columns, from ``__table_schema__``) when the file and options allow: objects (not an array),
no all-text mode. On anything pyarrow rejects (a type change, a malformed record) the file is
re-read by the Python path (``stream`` + ``convert``) from the first record not yet delivered,
which either reads it as Drill would or raises the located DATA_READ error. Memory stays
bounded by a batch either way.

The JSON options of a format config or a table function (``allTextMode``,
``readNumbersAsDouble``, ``skipMalformedJSONRecords``, ``nanInf``, ``escapeAnyChar``) take the
place of the session options for the files they read (:func:`with_format_options`).

Skipped invalid records (``store.json.reader.skip_invalid_records``) are reported through
:mod:`auger.formats.skips` and stamped on batches as schema metadata ``auger.skipped``.
"""

from __future__ import annotations

import codecs
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.json as pajson

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, open_input
from auger.formats.json.convert import RowsConverter, has_struct, unnull_structs
from auger.formats.json.infer import SchemaBuilder
from auger.formats.json.projector import ProjectedStream, projector_available
from auger.formats.json.stream import JsonStream, lone_surrogate
from auger.formats.skips import SKIPPED_KEY, report_skipped
from auger.storage import read_budget
from auger.storage.filesystem import arrow_input_stream, arrow_owned_reads
from auger.storage.splits import FileSplit
from auger.types import TupleSchema
from auger.types.arrow import schema_to_arrow
from auger.types.schema_text import parse_schema

__all__ = ["FORMAT_OPTIONS", "JsonFormat", "with_format_options"]

_log = logging.getLogger("auger.formats")

#: pyarrow's block for a whole scan. Larger blocks parse no faster (500 MB of JSON lines on two
#: cores: 1.28-1.33 s for blocks of 512 KB to 4 MB), but a reader holds several in flight
#: and their parse buffers outside Arrow's pool: a Python worker scanning every column of such
#: a file peaked at 331 MB of RSS with 4 MB blocks and 178 MB with 1 MB ones.
_BLOCK = 1 << 20
#: A sampled line longer than this sends the file to the record stream (see _sample_lines)
_LONG_LINE = 4 << 20
#: The largest block pyarrow parses: a record longer than a block fails its parse, and the
#: read is tried again in blocks four times as large, up to this one (records longer still are
#: read by the Python path)
_MAX_BLOCK = 64 << 20
#: pyarrow's complaint about a record longer than its block
_STRADDLE = "straddles two block boundaries"
_MIN_BLOCK = 64 << 10
_HEAD = 64 << 10


def _on(options: Mapping[str, Any], key: str, default: bool = False) -> bool:
    v = options.get(key, default)
    return v.strip().lower() == "true" if isinstance(v, str) else bool(v)


#: Drill's JSON format options (a format config's under Drill's names or their snake_case
#: forms, or a table function's) → the session options they override for that format's files.
FORMAT_OPTIONS = {
    "allTextMode": "store.json.all_text_mode",
    "readNumbersAsDouble": "store.json.read_numbers_as_double",
    "skipMalformedJSONRecords": "store.json.reader.skip_invalid_records",
    "nanInf": "store.json.reader.allow_nan_inf",
    "escapeAnyChar": "store.json.reader.allow_escape_any_char",
}


def with_format_options(options: Mapping[str, Any], config: FormatConfig) -> Mapping[str, Any]:
    """The session ``options`` with the JSON options the format config sets in their place."""
    given = {session: config.option(name) for name, session in FORMAT_OPTIONS.items()}
    given = {k: v for k, v in given.items() if v is not None}
    return {**options, **given} if given else options


def _flags(options: Mapping[str, Any]) -> tuple[bool, bool, bool]:
    return (
        _on(options, "store.json.all_text_mode"),
        _on(options, "store.json.read_numbers_as_double"),
        _on(options, "store.json.reader.skip_invalid_records"),
    )


def _open(path: str) -> IO[bytes]:
    try:
        return open_input(path)
    except OSError as exc:
        raise UserError.data_read(f"Cannot read file: {exc}", [f"File: {path}"]) from exc


def _arrow_input(path: str) -> Any:
    """The file as pyarrow reads it: pyarrow decodes gzip, bz2 and zstd itself; the codecs it
    lacks or frames differently (zlib ``.deflate``, Hadoop's ``.snappy``/``.lz4``, ``.zip``)
    come through :func:`open_input`."""
    if path.lower().endswith((".deflate", ".snappy", ".lz4", ".zip")):
        return pa.PythonFile(_open(path), mode="r")
    return arrow_input_stream(path)


def _head(path: str) -> bytes:
    """The file's first bytes from its first significant one (b"" when empty or all blank):
    enough to tell objects from an array and to estimate the length of a record."""
    with _open(path) as fh:
        while True:
            chunk = fh.read(_HEAD)
            if not chunk:
                return b""
            stripped = chunk.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\r\n")
            if stripped:
                return stripped


def _sample_lines(
    path: str, sample: int, decoder: json.JSONDecoder
) -> tuple[list[dict[str, Any]], list[int], bytes] | None:
    """The first ``sample`` records of a file of one object a line with their line numbers
    and their text (the lines joined by newlines), each line parsed whole by the C decoder,
    without the record stream's Python-level bookkeeping; None when the file is anything
    else (an array, objects spread over lines or several on one, a malformed or non-object
    record, invalid UTF-8, a line longer than a few megabytes, a lone surrogate escape): the
    record stream then reads it, and says where."""
    lines: list[bytes] = []
    numbers: list[int] = []
    seen = 0
    tail = b""
    with _open(path) as fh:
        chunk = fh.read(_HEAD).removeprefix(codecs.BOM_UTF8)
        while len(lines) < sample:
            if chunk:
                parts = (tail + chunk).split(b"\n")
                tail = parts.pop()
                if len(tail) > _LONG_LINE:
                    return None
            else:
                parts, tail = [tail], b""
            for part in parts:
                seen += 1
                if part.strip(b" \t\r"):
                    lines.append(part)
                    numbers.append(seen)
                    if len(lines) >= sample:
                        break
            if not chunk:
                break
            chunk = fh.read(_HEAD)
    if not lines or not lines[0].lstrip().startswith(b"{"):
        return None
    decode = decoder.decode  # exactly one value a line, or an error
    raw = b"\n".join(lines)
    try:
        text = raw.decode("utf-8")
        if lone_surrogate(text) is not None:
            return None
        values = [decode(line) for line in text.split("\n")]
    except (ValueError, RecursionError):  # JSONDecodeError, bad UTF-8, a refused NaN, deep
        return None
    if len(values) != len(lines) or not all(type(v) is dict for v in values):
        return None
    return values, numbers, raw


def _members_of_first(head: bytes) -> int:
    """How many top-level members the file's first object has (0 when unknown)."""
    line = head.split(b"\n", 1)[0]
    try:
        first = json.loads(line)
    except (ValueError, RecursionError):
        return 0
    return len(first) if isinstance(first, dict) else 0


def _block_for(limit: int | None, head: bytes) -> int:
    """pyarrow's block size: the largest for a whole scan (fewer, bigger parses), and for a
    pushed-down LIMIT about twice what that many records take (from the lengths of the first
    lines), so the first rows come after parsing kilobytes rather than megabytes. A record
    longer than a block makes pyarrow fail, and the Python path then reads on, same result."""
    if limit is None:
        return _BLOCK
    lines = head.count(b"\n")
    per_row = len(head) / lines if lines else max(len(head), _HEAD)
    want = int(2 * max(limit, 1) * per_row)
    block = _MIN_BLOCK
    while block < want and block < _BLOCK:
        block *= 2
    return block


def _loose(t: pa.DataType) -> pa.DataType:
    """The type with every nested field nullable (JSON may omit or null anything)."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _loose(f.type), True) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _loose(t.value_type), True))
    if pa.types.is_large_list(t):
        return pa.large_list(pa.field(t.value_field.name, _loose(t.value_type), True))
    return t


def _nullable(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _loose(f.type), True) for f in schema])


def _has_upper(data: bytes, scratch: np.ndarray | None = None) -> bool:
    """Any ASCII capital letter, in two vectorised passes (numpy) instead of
    ``bytes.islower``'s slower loop: every byte of every file goes through here. ``scratch``
    (at least ``len(data)`` bytes) saves allocating and faulting in temporaries each call."""
    if not data:
        return False
    codes = np.frombuffer(data, dtype=np.uint8)
    if scratch is None or len(scratch) < len(codes):
        scratch = np.empty(len(codes), dtype=np.uint8)
    work = scratch[: len(codes)]
    np.subtract(codes, np.uint8(ord("A")), out=work)  # wraps below 'A' to large values
    flags = work.view(np.bool_)
    np.less(work, 26, out=flags)
    return bool(flags.any())


def _prune(schema: pa.Schema, projection: Sequence[str]) -> pa.Schema:
    """Maps narrowed to the members the query names (``m.a``): less to build; the scan fills
    the other members with nulls when it casts to the table's map type."""
    paths: dict[str, list[list[str]]] = {}
    whole: set[str] = set()
    for path in projection:
        parts = [p.strip("`").lower() for p in path.split(".")]
        if len(parts) == 1 or "[" in path:
            whole.add(parts[0].split("[")[0])
        else:
            paths.setdefault(parts[0], []).append(parts[1:])
    fields = []
    for f in schema:
        low = f.name.lower()
        if low in paths and low not in whole and pa.types.is_struct(f.type):
            f = f.with_type(_narrow(f.type, paths[low]))
        fields.append(f)
    return pa.schema(fields)


def _narrow(t: pa.DataType, paths: list[list[str]]) -> pa.DataType:
    keep: dict[str, list[list[str]]] = {}
    whole: set[str] = set()
    for parts in paths:
        head = parts[0].split("[")[0]
        if len(parts) == 1 or "[" in parts[0]:
            whole.add(head)
        else:
            keep.setdefault(head, []).append(parts[1:])
    out = []
    for f in t:
        low = f.name.lower()
        if low in whole:
            out.append(f)
        elif low in keep:
            sub = _narrow(f.type, keep[low]) if pa.types.is_struct(f.type) else f.type
            out.append(f.with_type(sub))
    return pa.struct(out) if out else t


def _member_names(schema: pa.Schema) -> list[str]:
    """The names of the members of the schema's maps, at any depth (arrays of maps too):
    pyarrow matches them by exact spelling, Drill regardless of case."""
    out: set[str] = set()
    todo = [f.type for f in schema]
    while todo:
        t = todo.pop()
        if pa.types.is_struct(t):
            out.update(f.name for f in t)
            todo.extend(f.type for f in t)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            todo.append(t.value_type)
    return sorted(out)


class _Watch:
    """File-like wrapper noticing what pyarrow's JSON reader would get silently wrong:
    invalid UTF-8, and a key (column or map member) spelled in another case than the
    table's."""

    def __init__(self, raw: pa.NativeFile, names: Sequence[str]) -> None:
        self._raw = raw
        self._keys = [(f'"{n}"'.encode(), f'"{n.lower()}"'.encode()) for n in names]
        # with all-lowercase names, a chunk without capitals cannot hold another spelling
        self._lower_names = all(n == n.lower() for n in names)
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")
        self._scratch = np.empty(0, dtype=np.uint8)
        self.suspect = False
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n) if n is not None and n >= 0 else self._raw.read()
        if self.suspect:
            return data
        if not data.isascii():
            try:
                self._utf8.decode(data, final=not data)
            except UnicodeDecodeError:
                self.suspect = True
                return data
        if self._keys and not (self._lower_names and not self._capitals(data)):
            lowered = data.lower()
            for exact, low in self._keys:
                if lowered.count(low) != data.count(exact):
                    self.suspect = True
                    break
        return data

    def _capitals(self, data: bytes) -> bool:
        if len(self._scratch) < len(data):  # one buffer for the whole file
            self._scratch = np.empty(len(data), dtype=np.uint8)
        return _has_upper(data, self._scratch)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self._raw.close()


def _print_skips(lines: list[int], path: str, enabled: bool) -> None:
    """``store.json.reader.print_skipped_invalid_record_number``: one warning per record."""
    if enabled:
        for line in sorted(lines):
            _log.warning("Skipped invalid record at line %d of %s", line, path)


_SAMPLE_SLICE = 10_000  # records held at once when the whole file is sampled


class _Fallback(Exception):
    pass


def _late_members(
    options: Mapping[str, Any], columns: Sequence[str] | None
) -> frozenset[str] | None:
    """Top-level members whose values the query needs although the table schema, found
    from a sample of each file's first rows, lacks them: None for every such member (the
    query reads the whole row), else the lower-case names it plans as missing columns.

    A member first met past the sample would otherwise read as NULL, or vanish from
    ``SELECT *``: a value silently lost. The readers raise a located error instead."""
    if options.get("__table_schema__") is None:
        return frozenset()  # no table schema: each batch's own members (direct reads)
    if columns is None:
        return None
    return frozenset(n.lower() for n in options.get("__missing__") or ())


def _whole_maps(
    options: Mapping[str, Any], columns: Sequence[str] | None, target: pa.Schema | None
) -> frozenset[str]:
    """The map columns (arrays of maps too) the query reads whole, lower case: a member the
    sample did not show counts in them (``SELECT *``, ``SELECT t.m``), not where the query
    names members (``t.m.a``)."""
    if target is None or options.get("__table_schema__") is None:
        return frozenset()
    maps = {f.name.lower() for f in target if has_struct(f.type)}
    if columns is None:
        return frozenset(maps)
    bare = {p.strip("`").lower() for p in options.get("__projection__") or () if "." not in p}
    return frozenset(maps & {p for p in bare if "[" not in p})


def _late_values(batch: pa.RecordBatch, target: pa.Schema, late: frozenset[str] | None) -> bool:
    """Whether a member pyarrow found beyond ``target`` holds a value the query needs."""
    known = set(target.names)
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if name in known or (late is not None and name.lower() not in late):
            continue
        if column.null_count < len(column):
            return True
    return False


class JsonFormat(FormatPlugin):
    """Drill's JSON format plugin (``type = "json"``)."""

    type_name = "json"
    extensions = ("json",)

    def error_context(self, config: FormatConfig) -> list[str]:
        # Drill's JSON scan names the format in the words of its older scan framework
        return [f"Format plugin: {self.type_name}", f"Plugin config name: {config.name}"]

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        options = with_format_options(options, config)
        all_text, as_double, skip = _flags(options)
        sample = int(options.get("auger.scan.json_sample_rows", 1000))
        builder = SchemaBuilder(all_text, as_double)
        for path in files:
            with _open(path) as fh:
                stream = JsonStream(
                    fh,
                    path,
                    skip_invalid=skip,
                    all_text=all_text,
                    escape_any=_on(options, "store.json.reader.allow_escape_any_char"),
                )
                quick = _sample_lines(path, sample, stream.decoder) if sample > 0 else None
                if quick is not None:
                    values, numbers, text = quick
                    builder.add_many(values, numbers, path, text)
                    continue
                # a negative sample: every row, a slice at a time
                records: list[dict[str, Any]] = []
                lines: list[int] = []
                for line, obj in stream:
                    records.append(obj)
                    lines.append(line)
                    if len(records) >= sample >= 0:
                        break
                    if len(records) >= _SAMPLE_SLICE:
                        builder.add_many(records, lines, path)
                        records, lines = [], []
            builder.add_many(records, lines, path)
        return builder.schema()

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        options = with_format_options(options, config)
        all_text, _, skip = _flags(options)
        path = split.path
        target = self._target(options, columns)
        late = _late_members(options, columns)
        maps = _whole_maps(options, columns, target)
        head = _head(path)
        if not head:
            return
        first = head[:1]
        limit = options.get("__limit__")
        emitted = 0
        fast = (
            target is not None
            and first == b"{"
            and not all_text
            and _on(options, "store.json.reader.allow_nan_inf", True)  # pyarrow reads NaN
            and hasattr(pajson, "open_json")
            and not options.get("auger.scan.json_force_python", False)
        )
        if fast and target is not None:
            # fewer members than the objects have: cut them down before pyarrow parses them
            project = (
                projector_available()
                and late is not None  # every member counts: none may be cut away
                and len(target) < _members_of_first(head)
            )
            block = _block_for(limit, head)
            while True:
                # a retry with larger blocks parses the file again from its start: the rows
                # already sent are dropped as they come again
                again = emitted
                try:
                    for batch in self._arrow_batches(path, target, block, project, late, maps):
                        if again:
                            drop = min(again, batch.num_rows)
                            again -= drop
                            batch = batch.slice(drop)
                            if not batch.num_rows:
                                continue
                        emitted += batch.num_rows
                        yield batch  # whole: the scan cuts it to its batch limits
                    return
                except _Fallback as exc:
                    if _STRADDLE not in str(exc) or block >= _MAX_BLOCK or read_budget.active():
                        break
                    # a record longer than a block (a value of megabytes among small
                    # records): pyarrow reads it in larger blocks, the Python path only
                    # past the largest, or in the server's own bounded read of a small
                    # scan (whose budget counts what the Python path decompresses)
                    block = min(max(block, _BLOCK) * 4, _MAX_BLOCK)
        allow_nan = _on(options, "store.json.reader.allow_nan_inf", True)
        print_lines = _on(options, "store.json.reader.print_skipped_invalid_record_number")
        escape_any = _on(options, "store.json.reader.allow_escape_any_char")
        if limit is not None:  # no need to parse a whole batch for the first few rows
            batch_rows = max(1, min(batch_rows, int(limit)))
        yield from self._python_batches(
            path,
            target,
            all_text,
            skip,
            emitted,
            batch_rows,
            allow_nan,
            print_lines,
            late,
            maps,
            escape_any,
        )

    @staticmethod
    def _target(options: Mapping[str, Any], columns: Sequence[str] | None) -> pa.Schema | None:
        text = options.get("__table_schema__")
        if text is None:
            return None
        schema = parse_schema(text) if text else TupleSchema()
        wanted = None if columns is None else {c.lower() for c in columns}
        cols = [c for c in schema if wanted is None or c.name.lower() in wanted]
        target = _nullable(schema_to_arrow(TupleSchema(cols)))
        if wanted is None:
            return target
        return _prune(target, options.get("__projection__") or ())

    # ------------------------------------------------------------------ Arrow path
    def _arrow_batches(
        self,
        path: str,
        target: pa.Schema,
        block: int = _BLOCK,
        project: bool = False,
        late: frozenset[str] | None = frozenset(),
        maps: frozenset[str] = frozenset(),
    ) -> Iterator[pa.RecordBatch]:
        source: _Watch | ProjectedStream
        inner = _member_names(target)
        watch: _Watch | None = None
        owned: pa.NativeFile | None = None
        # members the sample did not show may matter (see _late_members, _whole_maps):
        # pyarrow then infers any member the schema lacks, and finding one sends the file
        # to the Python path, which says where a value is in one
        infer = late is None or bool(late) or bool(maps)
        try:
            raw = _arrow_input(path)
            if project:
                if inner:  # the projector checks top-level keys only: watch the members
                    raw = watch = _Watch(raw, inner)
                source = ProjectedStream(raw, [*target.names, *sorted(late or ())], block)
            else:
                source = _Watch(raw, [*target.names, *inner])
            owned = arrow_owned_reads(source)
            reader = pajson.open_json(
                owned,
                read_options=pajson.ReadOptions(block_size=block, use_threads=True),
                parse_options=pajson.ParseOptions(
                    explicit_schema=target,
                    unexpected_field_behavior="infer" if infer else "ignore",
                    newlines_in_values=False,  # faster; a multi-line object falls back
                ),
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
            if owned is not None:
                owned.close()
            raise _Fallback(str(exc)) from exc
        try:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    fallback = getattr(source, "fallback", None)  # where the projector stopped
                    if fallback:
                        raise _Fallback(fallback) from None
                    return
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
                    raise _Fallback(str(exc)) from exc
                if source.suspect or (watch is not None and watch.suspect):
                    raise _Fallback("invalid UTF-8 or a key in another case")
                if infer:
                    if batch.num_columns > len(target):
                        if _late_values(batch, target, late):
                            raise _Fallback("a member the sampled rows did not show")
                        batch = pa.RecordBatch.from_arrays(
                            [batch.column(f.name) for f in target], schema=target
                        )
                    if not batch.schema.equals(target):  # a map member the schema lacks
                        raise _Fallback("a map member the sampled rows did not show")
                if not batch.num_columns:
                    yield pa.RecordBatch.from_arrays([pa.nulls(batch.num_rows)], ["__rows__"])
                    continue
                arrays = [unnull_structs(c) for c in batch.columns]
                yield pa.RecordBatch.from_arrays(arrays, schema=target)
        finally:
            # stop pyarrow's read-ahead before the Python stream it reads from goes away
            close = getattr(reader, "close", None) if reader is not None else None
            if close is not None:
                close()
            owned.close()  # closes the source, and pyarrow's threads no longer refer to it

    # ----------------------------------------------------------------- Python path
    def _python_batches(
        self,
        path: str,
        target: pa.Schema | None,
        all_text: bool,
        skip_invalid: bool,
        skip_rows: int,
        batch_rows: int,
        allow_nan: bool = True,
        print_lines: bool = False,
        late: frozenset[str] | None = frozenset(),
        maps: frozenset[str] = frozenset(),
        escape_any: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        with _open(path) as fh:
            stream = JsonStream(
                fh,
                path,
                skip_invalid=skip_invalid,
                all_text=all_text,
                allow_nan_inf=allow_nan,
                escape_any=escape_any,
            )
            converter: RowsConverter | None = None
            if target is not None:
                converter = RowsConverter(target, path, all_text, skip_invalid, late, maps)
            rows: list[dict[str, Any]] = []
            lines: list[int] = []
            seen = 0
            reported = 0

            def flush() -> pa.RecordBatch:
                nonlocal reported
                conv = converter or self._inferred(rows, lines, path, all_text, skip_invalid)
                batch = conv.convert(rows, lines)
                skipped_lines = stream.skipped_lines + conv.skipped_lines
                _print_skips(skipped_lines, path, print_lines)
                stream.skipped_lines.clear()
                conv.skipped_lines.clear()
                total = stream.skipped + conv.skipped
                if total > reported:
                    report_skipped(path, total - reported, skipped_lines)
                    reported = total
                meta = {SKIPPED_KEY: str(total).encode()}
                return batch.replace_schema_metadata(meta)

            try:
                for line, obj in stream:
                    seen += 1
                    if seen <= skip_rows:
                        continue
                    rows.append(obj)
                    lines.append(line)
                    if len(rows) >= batch_rows:
                        yield flush()
                        rows, lines = [], []
            except EOFError as exc:  # a truncated compressed file
                raise UserError.data_read(
                    f"Truncated compressed file: {exc}", [f"File: {path}"]
                ) from exc
            if rows:
                yield flush()
            else:
                _print_skips(stream.skipped_lines, path, print_lines)
                extra = stream.skipped - reported
                report_skipped(path, extra, stream.skipped_lines)

    @staticmethod
    def _inferred(
        rows: list[dict[str, Any]], lines: list[int], path: str, all_text: bool, skip: bool
    ) -> RowsConverter:
        """Without a table schema (direct use): this batch's own types."""
        builder = SchemaBuilder(all_text, False)
        for row, line in zip(rows, lines, strict=True):
            builder.add(row, path, line)
        schema = _nullable(schema_to_arrow(builder.schema()))
        return RowsConverter(schema, path, all_text, skip)
