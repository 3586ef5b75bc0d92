"""JSON text laid out the way Drill's Jackson pretty printer writes it.

Drill's ``.view.drill`` and ``.drill.schema`` files are Jackson-pretty-printed: ``"key" : value``,
objects one member per line with two-space indentation, arrays on one line (``[ a, b ]``). Users
diff and hand-edit these files, so auger writes the same layout.

Both are written atomically (:func:`write_atomically`): a reader sees the old file or the new
one, and a write the file system refuses leaves no temporary file behind.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from auger.storage import filesystem as fs

__all__ = ["dumps", "write_atomically"]


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


def write_atomically(path: str, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` through a hidden temporary file and a rename.

    Raises:
        OSError: the file system refused the write; the temporary file is gone again.
    """
    if fs.is_uri(path):
        # an object store has no rename, but a single upload appears whole or not at all
        with fs.open_output(path) as out:
            out.write(text.encode("utf-8"))
        return
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
