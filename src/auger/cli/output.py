"""Printing results the way sqlline does: table (boxes), vertical, csv, tsv and json lines.

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
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["OUTPUT_FORMATS", "format_value", "render", "render_warnings", "rows_selected"]


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


def _table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(n) for n in names]
    for row in cells:
        for i, c in enumerate(row):
            widths[i] = max(widths[i], len(c))
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    out = [
        sep,
        "| " + " | ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)) + " |",
        sep,
    ]
    for row in cells:
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")
    out.append(sep)
    return "\n".join(out)


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


def _json(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return "\n".join(
        json.dumps({n: _json_ready(v) for n, v in zip(names, row, strict=True)}, ensure_ascii=False)
        for row in rows
    )


_RENDERERS: dict[str, Callable[[Sequence[str], Sequence[Sequence[Any]]], str]] = {
    "table": _table,
    "vertical": _vertical,
    "csv": _delimited(","),
    "tsv": _delimited("\t"),
    "json": _json,
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


def rows_selected(count: int, seconds: float) -> str:
    """sqlline's footer: ``3 rows selected (0.123 seconds)``."""
    noun = "row" if count == 1 else "rows"
    return f"{count} {noun} selected ({seconds:.3f} seconds)"


def render_warnings(warnings: Sequence[str], dim: bool) -> str:
    """A statement's warnings, one per line after its results; dimmed on a terminal so they
    read as remarks on the answer rather than part of it."""
    if not warnings:
        return ""
    lines = [f"Warning: {text}" for text in warnings]
    if dim:
        lines = [f"\x1b[2m{line}\x1b[0m" for line in lines]
    return "\n".join(lines)
