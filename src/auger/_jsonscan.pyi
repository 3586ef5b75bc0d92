"""Types of the compiled JSON member projector (``_jsonscan.c``)."""

from typing_extensions import Buffer

def project(data: Buffer, final: bool, keys: tuple[bytes, ...]) -> tuple[str, int, int, bytes]:
    """The whole objects of ``data`` cut to ``keys``: (fallback reason or "", bytes consumed,
    objects, the cut objects one per line)."""
