"""Types of the compiled JSON member projector (``_jsonscan.c``)."""

from typing_extensions import Buffer

def project(data: Buffer, final: bool, keys: tuple[bytes, ...]) -> tuple[str, int, int, bytes]:
    """The whole objects of ``data`` cut to ``keys``: (fallback reason or "", bytes consumed,
    objects, the cut objects one per line)."""

def project_reference(
    data: Buffer, final: bool, keys: tuple[bytes, ...]
) -> tuple[str, int, int, bytes]:
    """project() by the byte-at-a-time walk alone, without the structural fast path."""

def stage1_variants() -> list[str]:
    """The fast path's stage 1 variants this CPU runs, slowest first (the last is in use, but
    "portable" alone: project() then walks byte by byte unless told to use it)."""

def use_stage1(name: str) -> None:
    """Use the named stage 1 variant from now on (for tests and benchmarks)."""
