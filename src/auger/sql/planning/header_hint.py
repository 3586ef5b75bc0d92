"""A header read as data: the first line of a headerless ``.csv`` table that looks like names.

A ``.csv`` file is read without a header (Drill's default), so a file written with one answers
its column names as the first row of ``columns``, and ``SELECT id`` finds nothing. When the
first line's fields are all names (``id``, ``region``, ``amount``) and, in at least one
position, none of the lines below holds a name there (``1``, ``2.5``, ``2024-01-01``), the
scan gets a message saying so, with the two ways to read the line as column names.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

from auger.scan.plan import ScanTable
from auger.storage import filesystem as fs

__all__ = ["header_hint", "looks_like_header"]

#: What a column name looks like: a letter or underscore, then letters, digits, ``_ . -``.
_NAME = re.compile(r"[A-Za-z_][\w .\-]*")
#: Bytes of the first file looked at, and data lines compared with the first.
_HEAD_BYTES = 64 << 10
_LINES_BELOW = 20


def _is_name(field: str) -> bool:
    text = field.strip()
    return bool(_NAME.fullmatch(text)) and text.lower() not in ("true", "false", "null")


def looks_like_header(rows: Sequence[Sequence[str]]) -> bool:
    """Whether ``rows[0]`` reads as a header over ``rows[1:]``: every field of it a name, and
    some position where no row below holds a name."""
    if len(rows) < 2 or not rows[0] or not all(_is_name(f) for f in rows[0]):
        return False
    below = rows[1:]
    return any(
        all(i < len(row) and not _is_name(row[i]) for row in below) for i in range(len(rows[0]))
    )


def _first_rows(path: str, delimiter: str, quote: str) -> list[list[str]]:
    with fs.arrow_input_stream(path) as stream:
        head = stream.read(_HEAD_BYTES).decode("utf-8", errors="replace")
    lines = head.splitlines()[: _LINES_BELOW + 1]
    if len(lines) > 1 and len(head) >= _HEAD_BYTES:
        lines = lines[:-1]  # the last line may be cut
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter, quotechar=quote)
    return [row for row in reader if row]


def header_hint(found: ScanTable) -> str | None:
    """The message for a headerless ``.csv`` table whose first file starts with a header line,
    else None (other formats, a header already read, a file that cannot be looked at)."""
    fmt = found.fmt
    files = found.selection.files
    if fmt.type != "text" or fmt.option("extract_header", False) or not files:
        return None
    delimiter = str(fmt.option("delimiter", ","))
    if delimiter != "," or ".csv" not in files[0].path.lower():
        return None
    quote = str(fmt.option("quote", '"'))[:1] or '"'
    try:
        rows = _first_rows(files[0].path, delimiter, quote)
    except (OSError, ValueError, csv.Error):
        return None  # the scan itself reports a file it cannot read
    if not looks_like_header(rows):
        return None
    table = found.label or found.location
    schema = table[: -len(found.name) - 1] if table.endswith("." + found.name) else ""
    function = (
        f"table({schema}.`{found.name}`(type => 'text', extractHeader => true))"
        if schema
        else "a table function with extractHeader => true"
    )
    return (
        f"The first line of {fs.basename(files[0].path)} in {table} looks like a header "
        f"({', '.join(f.strip() for f in rows[0])}) but is read as data; to read it as column "
        f"names query {function}, or name the files .csvh"
    )
