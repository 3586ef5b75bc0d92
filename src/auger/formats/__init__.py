"""Format readers: text (csv/tsv/psv/csvh), JSON, Parquet, and plugins by entry point.

Layering: ``formats`` imports ``types``, ``errors``, ``config`` and ``scan``; never ``sql``,
``spark`` or ``server``.
"""

from auger.formats.base import FormatPlugin
from auger.formats.registry import get_format, known_formats, register_format

__all__ = ["FormatPlugin", "get_format", "known_formats", "register_format"]
