"""Printing results the way sqlline and DuckDB do: table (boxes), vertical, csv, tsv, json (one
array), ndjson (one object a line) and markdown; an EXPLAIN's plan as the lines it is.

Renderers produce plain text (no ANSI escapes), so the same output is right on a terminal, in a
pipe and in a file. Values print as Drill prints them: ``null``, ``true``/``false``, maps and
arrays as compact JSON.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import io
import json
import math
import re
from collections.abc import Callable, Sequence
from typing import Any

# A statement that is an EXPLAIN, after any leading comments.
_EXPLAIN = re.compile(r"^(?:\s|--[^\n]*\n|/\*.*?\*/)*EXPLAIN\b", re.I | re.S)

__all__ = [
    "OUTPUT_FORMATS",
    "fit_table",
    "format_value",
    "plan_text",
    "render",
    "render_warnings",
    "rows_selected",
    "rows_shown",
]


def _json_ready(value: Any) -> Any:
    """A value as JSON can hold it, following Drill's REST encoding where it has one."""
    if isinstance(value, dict):
        return {str(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return value


def format_value(value: Any) -> str:
    """One value as text, as sqlline shows it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list | tuple):
        return json.dumps(_json_ready(value), separators=(",", ":"), ensure_ascii=False)
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None).isoformat(sep=" ")
    return str(value)


def _cell(value: Any) -> str:
    # A table cell is one line: show line breaks and tabs the way sqlline does, escaped.
    return format_value(value).replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")


def _clip(text: str, width: int, ellipsis: str) -> str:
    """``text`` cut to ``width`` characters, the cut marked with ``ellipsis``."""
    if len(text) <= width:
        return text
    return text[: max(width - len(ellipsis), 0)] + ellipsis[:width]


def _table(
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    limits: Sequence[int] | None = None,
    ellipsis: str = "…",
) -> str:
    """A boxed table; with ``limits``, column i is at most ``limits[i]`` wide and longer
    headers and cells are cut with ``ellipsis``."""
    heads = list(names)
    cells = [[_cell(v) for v in row] for row in rows]
    if limits is not None:
        heads = [_clip(h, w, ellipsis) for h, w in zip(heads, limits, strict=True)]
        cells = [[_clip(c, w, ellipsis) for c, w in zip(row, limits, strict=True)] for row in cells]
    widths = [len(n) for n in heads]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [
        sep,
        "| " + " | ".join(n.ljust(w) for n, w in zip(heads, widths, strict=True)) + " |",
        sep,
    ]
    for row in cells:
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    out.append(sep)
    return "\n".join(out)


# The narrowest a column is cut to when a table is fitted to the terminal: four characters and
# the ellipsis still say what the column holds.
MIN_COLUMN_WIDTH = 5


def fit_table(
    names: Sequence[str], rows: Sequence[Sequence[Any]], width: int, ellipsis: str = "…"
) -> str | None:
    """The rows as a boxed table no wider than ``width``, or None when the columns cannot fit.

    A table that fits prints as ``render("table", ...)`` would. Otherwise the widest columns are
    narrowed, all to the same width, just enough to fit, and their longer headers and cells are
    cut with ``ellipsis``; a column never shrinks below ``MIN_COLUMN_WIDTH`` characters (or its
    natural width, if smaller). None means that even then the table is too wide: the caller shows
    the rows another way (one value per line).
    """
    if not names:
        return None
    natural = [len(n) for n in names]
    for row in rows:
        for i, value in enumerate(row):
            natural[i] = max(natural[i], len(_cell(value)))
    frame = 3 * len(names) + 1  # "| " before each column, " |" after the last, " | " between
    if sum(natural) + frame <= width:
        return _table(names, rows)
    floor = [min(w, MIN_COLUMN_WIDTH) for w in natural]
    if sum(floor) + frame > width:
        return None
    room = width - frame
    # The largest common cap that fits: columns wider than it are cut to it.
    lo, hi = MIN_COLUMN_WIDTH, max(natural)
    while lo < hi:
        cap = (lo + hi + 1) // 2
        if sum(min(w, cap) for w in natural) <= room:
            lo = cap
        else:
            hi = cap - 1
    return _table(names, rows, [min(w, lo) for w in natural], ellipsis)


def _vertical(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    width = max((len(n) for n in names), default=0)
    blocks = []
    for row in rows:
        blocks.append(
            "\n".join(f"{n.ljust(width)}  {_cell(v)}" for n, v in zip(names, row, strict=True))
        )
    return "\n\n".join(blocks)


def _delimited(delimiter: str) -> Callable[[Sequence[str], Sequence[Sequence[Any]]], str]:
    def render_rows(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if v is None else format_value(v) for v in row])
        return buf.getvalue().rstrip("\n")

    return render_rows


def _markdown(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"

    out = [line(names), "|" + "|".join("---" for _ in names) + "|"]
    out.extend(line([_cell(v) for v in row]) for row in rows)
    return "\n".join(out)


def _json_objects(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    return [
        json.dumps({n: _json_ready(v) for n, v in zip(names, row, strict=True)}, ensure_ascii=False)
        for row in rows
    ]


def _json(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One JSON array of objects, one object a line, as DuckDB's ``.mode json`` writes it: the
    whole output is one value that ``json.load`` reads."""
    return "[" + ",\n".join(_json_objects(names, rows)) + "]"


def _ndjson(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """One JSON object a line (newline-delimited JSON), for tools that read a stream."""
    return "\n".join(_json_objects(names, rows))


_RENDERERS: dict[str, Callable[[Sequence[str], Sequence[Sequence[Any]]], str]] = {
    "table": _table,
    "vertical": _vertical,
    "csv": _delimited(","),
    "tsv": _delimited("\t"),
    "json": _json,
    "ndjson": _ndjson,
    "markdown": _markdown,
}

OUTPUT_FORMATS: tuple[str, ...] = tuple(_RENDERERS)


def render(mode: str, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """The rows in one output format.

    Raises:
        ValueError: an unknown format (the message lists the known ones).
    """
    try:
        renderer = _RENDERERS[mode]
    except KeyError:
        raise ValueError(
            f"Unknown output format {mode!r}; use one of {', '.join(_RENDERERS)}"
        ) from None
    if not names and not rows:
        return ""
    return renderer(names, rows)


def plan_text(sql: str, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str | None:
    """The plan of an EXPLAIN statement ``sql`` as the lines it is, for reading on screen; None
    for any other statement or result.

    EXPLAIN answers one row of ``text`` (the plan, one operator a line) and ``json`` (the same
    plan as Drill's JSON). In a table the text would be one cell with its line breaks escaped,
    cut to the terminal's width; on screen the shell prints the text alone instead, while the
    data formats (csv, json...) keep both columns.
    """
    if not _EXPLAIN.match(sql) or not names or names[0] != "text" or len(rows) != 1:
        return None
    text = rows[0][0]
    return text.rstrip("\n") if isinstance(text, str) else None


def rows_selected(count: int, seconds: float) -> str:
    """sqlline's footer: ``3 rows selected (0.123 seconds)``."""
    noun = "row" if count == 1 else "rows"
    return f"{count} {noun} selected ({seconds:.3f} seconds)"


def rows_shown(shown: int, total: int | None, seconds: float | None) -> str:
    """The footer under a result cut to its first rows: ``40 of 1000 rows shown``, or, when the
    rest were never fetched and so not counted, ``first 40 rows shown, more not fetched``."""
    noun = "row" if shown == 1 else "rows"
    text = (
        f"{shown} of {total} rows shown"
        if total is not None
        else f"first {shown} {noun} shown, more not fetched"
    )
    if seconds is not None:
        text += f" ({seconds:.3f} seconds)"
    return text + "; .maxrows N to change"


def render_warnings(warnings: Sequence[str], dim: bool) -> str:
    """A statement's warnings, one per line after its results; dimmed on a terminal so they
    read as remarks on the answer rather than part of it."""
    if not warnings:
        return ""
    lines = [f"Warning: {text}" for text in warnings]
    if dim:
        lines = [f"\x1b[2m{line}\x1b[0m" for line in lines]
    return "\n".join(lines)
