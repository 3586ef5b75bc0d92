"""Delimited text (csv, tsv, psv, csvh) with Drill's options and Drill's two shapes.

Without a header every row is one ``columns`` array of VARCHAR (``columns[n]`` in SQL); with
``extract_header`` the first line names VARCHAR columns, cleaned up as Drill does (blank names
become ``column_<n>``, duplicates get ``_2``, ``_3``... suffixes).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from auger.config import FormatConfig
from auger.errors import UserError
from auger.formats.base import FormatPlugin, open_input
from auger.scan.spec import FileSplit
from auger.types import ColumnMetadata, DataMode, MinorType, TupleSchema

__all__ = ["TextFormat", "clean_header"]


def _opt(config: FormatConfig, *names: str, default: Any = None) -> Any:
    for name in names:
        if name in config.options:
            return config.options[name]
    return default


def _dialect(config: FormatConfig) -> dict[str, Any]:
    delimiter = _opt(config, "delimiter", "field_delimiter", "fieldDelimiter", default=",")
    quote = _opt(config, "quote", default='"')
    escape = _opt(config, "escape", default='"')
    kwargs: dict[str, Any] = {"delimiter": delimiter, "strict": True}
    if not quote or quote == "\u0000":
        kwargs["quoting"] = csv.QUOTE_NONE
        kwargs["quotechar"] = None
    else:
        kwargs["quotechar"] = quote
        kwargs["doublequote"] = escape == quote
        if escape != quote:
            kwargs["escapechar"] = escape
    return kwargs


def _extract_header(config: FormatConfig) -> bool:
    return bool(_opt(config, "extract_header", "extractHeader", default=False))


def _skip_first(config: FormatConfig) -> bool:
    return bool(_opt(config, "skip_first_line", "skipFirstLine", default=False))


def clean_header(names: Sequence[str]) -> list[str]:
    """Drill's header clean-up: trim, blank → ``column_<n>``, duplicates → ``name_2``..."""
    out: list[str] = []
    seen: set[str] = set()
    for i, raw in enumerate(names):
        name = raw.strip() or f"column_{i}"
        candidate, n = name, 1
        while candidate.lower() in seen:
            n += 1
            candidate = f"{name}_{n}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out


class TextFormat(FormatPlugin):
    type_name = "text"
    extensions = ("csv", "tsv", "psv", "csvh")

    def _rows(self, path: str, config: FormatConfig) -> Iterator[tuple[int, list[str]]]:
        comment = _opt(config, "comment", default="#")
        try:
            with open_input(path) as raw:
                text = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline="")
                reader = csv.reader(text, **_dialect(config))
                for row in reader:
                    if not row or (comment and row[0].startswith(comment)):
                        continue
                    yield reader.line_num, row
        except UnicodeDecodeError as exc:
            raise UserError.data_read(
                "Text file is not valid UTF-8",
                [f"File: {path}", f"Byte offset: {exc.start}", "Fix: convert the file to UTF-8"],
            ) from exc
        except csv.Error as exc:
            raise UserError.data_read(
                f"Malformed text: {exc}", [f"File: {path}", "Fix: check the quotes on that line"]
            ) from exc
        except OSError as exc:
            raise UserError.data_read(f"Cannot read file: {exc}", [f"File: {path}"]) from exc

    def discover_schema(
        self, files: Sequence[str], config: FormatConfig, options: Mapping[str, Any]
    ) -> TupleSchema:
        if not _extract_header(config):
            return TupleSchema([ColumnMetadata("columns", MinorType.VARCHAR, DataMode.REPEATED)])
        schema = TupleSchema()
        for path in files:
            for _, row in self._rows(path, config):
                for name in clean_header(row):
                    if name not in schema:
                        schema.add(ColumnMetadata(name, MinorType.VARCHAR, DataMode.OPTIONAL))
                break
        return schema

    def read_arrow(
        self,
        split: FileSplit,
        config: FormatConfig,
        options: Mapping[str, Any],
        columns: Sequence[str] | None,
        batch_rows: int,
    ) -> Iterator[pa.RecordBatch]:
        rows = self._rows(split.path, config)
        if _extract_header(config):
            yield from self._read_with_header(rows, batch_rows)
            return
        if _skip_first(config):
            next(rows, None)
        buf: list[list[str]] = []
        for _, row in rows:
            buf.append(row)
            if len(buf) >= batch_rows:
                yield _columns_batch(buf)
                buf = []
        if buf:
            yield _columns_batch(buf)

    def _read_with_header(
        self, rows: Iterator[tuple[int, list[str]]], batch_rows: int
    ) -> Iterator[pa.RecordBatch]:
        first = next(rows, None)
        if first is None:
            return
        names = clean_header(first[1])
        width = len(names)
        buf: list[list[str]] = []

        def flush() -> pa.RecordBatch:
            cols = [
                pa.array([r[i] if i < len(r) else "" for r in buf], pa.string())
                for i in range(width)
            ]
            return pa.RecordBatch.from_arrays(cols, names=names)

        for _, row in rows:
            buf.append(row)
            if len(buf) >= batch_rows:
                yield flush()
                buf = []
        if buf:
            yield flush()


def _columns_batch(rows: list[list[str]]) -> pa.RecordBatch:
    arr = pa.array(rows, pa.list_(pa.string()))
    return pa.RecordBatch.from_arrays([arr], names=["columns"])
