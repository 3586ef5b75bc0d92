"""Types of the compiled text tokenizer (``_textscan.c``)."""

from typing_extensions import Buffer

def scan(
    data: Buffer,
    final: bool,
    delimiter: int,
    quote: int,
    comment: int,
    keep: Buffer | None,
    row_major: bool,
    limit: int,
    skip: int,
    skip_line: bool,
    max_field: int,
    max_fields: int,
) -> tuple[str, int, int, int, list[tuple[bytes, ...]], bytes]:
    """Parse the whole records of ``data``: (fallback reason or "", bytes consumed, rows,
    records still to skip, Arrow buffers of the kept fields, int32 fields seen per row of a
    columnar scan)."""
