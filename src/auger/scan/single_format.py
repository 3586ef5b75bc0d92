"""A directory is read with one format: its files of that format, files of another known
format being an error.

Drill picks a directory's format from one file and reads every file with it, so a JSON file
beside CSV files is parsed as CSV. auger picks the format the same way but keeps only the
files of that format; quietly leaving out the others would lose rows without a word. Files
of no known format (a README, a checksum) are still passed over, as they hold no table data.
When no file has the chosen format's extensions (a format named for files of another
extension, such as ``.dat`` read as CSV), every file is read with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from auger.config import FormatConfig
from auger.errors import UserError
from auger.storage.selection import FileStatus

__all__ = ["single_format"]


def single_format(
    files: Sequence[FileStatus],
    format_for: Callable[[str], FormatConfig | None],
    chosen: str,
    table_path: str,
) -> list[FileStatus]:
    """The files of format ``chosen`` (files of no known format passed over; every file when
    none has it); a VALIDATION error naming one file of each format, and how to query them
    apart, when ``files`` hold another known format too. ``format_for`` tells a file's format
    by its name."""
    keep: list[FileStatus] = []
    examples: dict[str, str] = {}
    for entry in files:
        fmt = format_for(entry.path)
        if fmt is None:
            continue
        examples.setdefault(fmt.name, entry.path)
        if fmt.name == chosen:
            keep.append(entry)
    if len(examples) < 2:
        return keep if keep else list(files)
    found = ", ".join(f"{name} ({path.rsplit('/', 1)[-1]})" for name, path in examples.items())
    other = next(name for name in examples if name != chosen)
    suffix = examples[other].rsplit(".", 1)[-1]
    raise UserError.validation(
        f"Directory [{table_path}] holds files of more than one format: {found}",
        [
            f"Format read: {chosen}",
            f"Fix: query one format at a time with a glob (`{table_path.rstrip('/')}/*.{suffix}`),"
            " or keep each format in its own directory",
        ],
    )
