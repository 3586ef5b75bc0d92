"""Format readers: text (csv/tsv/psv/csvh), JSON, Parquet, and plugins by entry point.

Layering: ``formats`` imports ``types``, ``errors``, ``config`` and ``scan``; never ``sql``,
``spark`` or ``server``.
"""

from auger.formats.base import FormatPlugin
from auger.formats.registry import (
    DuplicateFormatError,
    get_format,
    known_formats,
    register_format,
    unregister_format,
)

__all__ = [
    "DuplicateFormatError",
    "FormatPlugin",
    "get_format",
    "known_formats",
    "register_format",
    "unregister_format",
]
