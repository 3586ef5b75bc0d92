"""A directory is read with one format: its files of that format, files of another known
format being an error.

Drill picks a directory's format from one file and reads every file with it, so a JSON file
beside CSV files is parsed as CSV. auger picks the format the same way but keeps only the
files of that format; quietly leaving out the others would lose rows without a word. Files
of no known format (a README, a checksum) are still passed over, as they hold no table data.
When no file has the chosen format's extensions (a format named for files of another
extension, such as ``.dat`` read as CSV), every file is read with it.

The error's fix is a glob per format that selects exactly that format's files, wherever they
sit below the directory (``{*.csv,*/*.csv}`` when some are in a subdirectory), written the way
the caller's front door takes a table (a SQL table name, a ``load()`` path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from auger.config import FormatConfig
from auger.errors import UserError
from auger.storage.selection import FileStatus

__all__ = ["format_glob", "single_format"]


def format_glob(relative: Sequence[str], extensions: Sequence[str]) -> str:
    """A glob matching the files at ``relative`` paths (below one directory) by their depth
    and the format's extension they carry: ``*.csv``, ``*/*.csv``, or ``{*.csv,*/*.csv}``."""
    patterns: list[str] = []
    for rel in relative:
        name = rel.rsplit("/", 1)[-1]
        lowered = name.lower()
        ext = next((e for e in extensions if f".{e.lower()}" in lowered), None)
        tail = name[lowered.index(f".{ext.lower()}") + 1 :] if ext else name.rsplit(".", 1)[-1]
        pattern = "*/" * rel.count("/") + "*." + tail
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns[0] if len(patterns) == 1 else "{" + ",".join(patterns) + "}"


def single_format(
    files: Sequence[FileStatus],
    format_for: Callable[[str], FormatConfig | None],
    chosen: str,
    table_path: str,
    table_for: Callable[[str], str | None] | None = None,
) -> list[FileStatus]:
    """The files of format ``chosen`` (files of no known format passed over; every file when
    none has it); a VALIDATION error naming one file of each format, and how to query them
    apart, when ``files`` hold another known format too. ``format_for`` tells a file's format
    by its name; ``table_for`` writes a glob below ``table_path`` as the fix's table (a plain
    path by default), or None when the table cannot be narrowed that way (a glob already)."""
    keep: list[FileStatus] = []
    examples: dict[str, str] = {}
    relative: dict[str, list[str]] = {}
    formats: dict[str, FormatConfig] = {}
    base = table_path.rstrip("/") + "/"
    for entry in files:
        fmt = format_for(entry.path)
        if fmt is None:
            continue
        examples.setdefault(fmt.name, entry.path)
        formats.setdefault(fmt.name, fmt)
        if entry.path.startswith(base):
            relative.setdefault(fmt.name, []).append(entry.path[len(base) :])
        if fmt.name == chosen:
            keep.append(entry)
    if len(examples) < 2:
        return keep if keep else list(files)
    found = ", ".join(f"{name} ({path.rsplit('/', 1)[-1]})" for name, path in examples.items())
    write = table_for or (lambda glob: base + glob)
    tables = [
        write(format_glob(relative[name], formats[name].extensions))
        for name in examples
        if relative.get(name)
    ]
    runnable = [t for t in tables if t]
    fix = (
        "Fix: query one format at a time: " + " or ".join(runnable)
        if len(runnable) == len(examples)
        else "Fix: narrow the table to the files of one format, or keep each format in its "
        "own directory"
    )
    raise UserError.validation(
        f"Directory [{table_path}] holds files of more than one format: {found}", [fix]
    )
