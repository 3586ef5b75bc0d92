"""Format readers: text (csv/tsv/psv/csvh), JSON, Parquet, and plugins by entry point.

``base`` (the plugin ABC, compressed input), ``registry`` (built-ins + entry-point group
``auger.formats``), ``text/`` and ``json/`` (each: a fast pyarrow path and an exact Python
fallback that resumes after the rows already delivered), ``parquet``, and ``skips`` (how
counted skips of invalid records reach the caller).

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
