"""JSON text laid out the way Drill's Jackson pretty printer writes it.

Drill's ``.view.drill`` and ``.drill.schema`` files are Jackson-pretty-printed: ``"key" : value``,
objects one member per line with two-space indentation, arrays on one line (``[ a, b ]``). Users
diff and hand-edit these files, so auger writes the same layout.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["dumps"]


def dumps(value: Any) -> str:
    """Serialize ``value`` (dicts, lists, scalars) in Jackson's default pretty layout."""
    return _dump(value, 0)


def _dump(value: Any, depth: int) -> str:
    if isinstance(value, dict):
        if not value:
            return "{ }"
        pad = "  " * (depth + 1)
        members = [f"{pad}{json.dumps(str(k))} : {_dump(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + "  " * depth + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_dump(v, depth) for v in value) + " ]"
    return json.dumps(value)
