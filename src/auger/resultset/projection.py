"""The loader's own view of a projection list: which columns and map members to materialise.

Deliberately small and self-contained (the scan framework has its own, richer projection model):
a list of paths such as ``["a", "m.x", "c[2]"]`` becomes a tree of names. ``None`` or ``*``
projects everything; naming a map projects all its members; naming ``m.x`` projects only member
``x`` of ``m``. Array subscripts do not trim arrays, so ``c[2]`` projects all of ``c``. Names are
matched without regard to case, as everywhere in Drill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["ProjectionSet"]

_SUBSCRIPT = re.compile(r"\[[^\]]*\]")


def _split_path(path: str) -> list[str]:
    """Split ``a.b`` on dots outside backquotes, dropping subscripts and quotes."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for ch in path:
        if ch == "`":
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [_SUBSCRIPT.sub("", p).strip() for p in parts if _SUBSCRIPT.sub("", p).strip()]


class ProjectionSet:
    """Which members of one tuple (the row, or a map) are projected, and how deep.

    ``members is None`` means every member, whole. Otherwise it maps lower-case names to the
    projection of that member's own members.
    """

    __slots__ = ("_members",)

    def __init__(self, members: dict[str, ProjectionSet] | None = None) -> None:
        self._members = members

    @classmethod
    def all(cls) -> ProjectionSet:
        return _ALL

    @classmethod
    def parse(cls, paths: Iterable[str] | None) -> ProjectionSet:
        """Build the tree from column paths; ``None`` (or any ``*``) projects all."""
        if paths is None:
            return _ALL
        root: dict[str, ProjectionSet] = {}
        for path in paths:
            names = _split_path(path)
            if not names:
                continue
            if names[0] in ("*", "**"):
                return _ALL
            level = root
            for depth, name in enumerate(names):
                key = name.lower()
                last = depth == len(names) - 1
                existing = level.get(key)
                if last or (existing is not None and existing.is_all()):
                    level[key] = _ALL
                    break
                if existing is None:
                    existing = ProjectionSet({})
                    level[key] = existing
                assert existing._members is not None
                level = existing._members
        return ProjectionSet(root)

    def is_all(self) -> bool:
        return self._members is None

    def is_empty(self) -> bool:
        return self._members is not None and not self._members

    def contains(self, name: str) -> bool:
        return self._members is None or name.lower() in self._members

    def child(self, name: str) -> ProjectionSet:
        """Projection of a member's own members (all of them unless some were named)."""
        if self._members is None:
            return _ALL
        return self._members.get(name.lower(), _NONE)

    def __repr__(self) -> str:
        if self._members is None:
            return "ProjectionSet(*)"
        return f"ProjectionSet({self._members!r})"


_ALL = ProjectionSet(None)
_NONE = ProjectionSet({})
