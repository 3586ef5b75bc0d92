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
    structural: bool = True,
) -> tuple[str, int, int, int, list[tuple[bytes, ...]], bytes, bool]:
    """Parse the whole records of ``data``: (fallback reason or "", bytes consumed, rows,
    records still to skip, Arrow buffers of the kept fields, int32 fields seen per row of a
    columnar scan, whether the consumed bytes are all ASCII as far as the tokenizer saw).

    ``structural=False`` turns the 64-bytes-at-a-time fast path off (tests compare the two)."""

def stage1_variants() -> list[str]:
    """The fast path's mask builders this CPU can run, slowest first; the last is in use."""

def use_stage1(name: str) -> None:
    """Use the named mask builder from now on (tests and benchmarks)."""
