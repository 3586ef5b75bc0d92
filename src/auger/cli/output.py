"""Printing results: table (sqlline-style boxes), csv, json."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["format_value", "render"]


def format_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=str, separators=(",", ":"))
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def _table(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[format_value(v) for v in row] for row in rows]
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
            "\n".join(
                f"{n.rjust(width)}  {format_value(v)}" for n, v in zip(names, row, strict=True)
            )
        )
    return "\n\n".join(blocks)


def _csv(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(names)
    for row in rows:
        w.writerow(["" if v is None else format_value(v) for v in row])
    return buf.getvalue().rstrip("\n")


def _json(names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    return "\n".join(json.dumps(dict(zip(names, row, strict=True)), default=str) for row in rows)


_RENDERERS = {"table": _table, "vertical": _vertical, "csv": _csv, "json": _json}


def render(mode: str, names: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    try:
        return _RENDERERS[mode](names, rows)
    except KeyError:
        raise ValueError(
            f"unknown output mode {mode!r}; use one of {', '.join(_RENDERERS)}"
        ) from None
