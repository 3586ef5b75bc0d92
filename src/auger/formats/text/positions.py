"""Names of the scalar columns that carry single ``columns[n]`` positions of a headerless file.

The planner (``auger.sql.planning.compact_columns``) asks the text reader for ``__columns_2``
instead of the whole ``columns`` array when a query only ever indexes the array; the reader
then delivers field 2 of each row, or NULL where the row has fewer fields.
"""

from __future__ import annotations

import re

__all__ = ["COMPACT_PREFIX", "compact_name", "compact_position"]

#: name prefix of the scalar column carrying ``columns[n]``
COMPACT_PREFIX = "__columns_"
_COMPACT = re.compile(rf"^{COMPACT_PREFIX}(\d+)$", re.IGNORECASE)


def compact_name(position: int) -> str:
    return f"{COMPACT_PREFIX}{position}"


def compact_position(name: str) -> int | None:
    """The field position a compact column carries, or None for any other name."""
    m = _COMPACT.match(name)
    return int(m.group(1)) if m else None
