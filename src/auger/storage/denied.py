"""Denied paths: files no query may read, write, list or drop, whatever workspace reaches them.

A workspace keeps a query inside its directory (:meth:`auger.storage.workspace.Workspace.resolve`),
but a workspace may be the whole disk (``dfs.root`` at ``/``) or sit next to the server's own
files. So beside containment there is one list of denied paths, checked by the same resolution:

* the server's private files (the users file with its password hashes, the profile store, the
  state directory, the config file, and whatever ``[security] denied_paths`` adds), fixed when
  the engine or server starts (:class:`DeniedPath`);
* every other session's temporary location, which changes as sessions come and go
  (:func:`auger.storage.temporary.foreign_location` finds them).

A path is denied when it lies inside a denied path, or when it is a directory (or glob) whose
scan would reach one: a plain directory scan skips hidden (``.``/``_``) names, so a denied path
below a hidden folder stays out of its reach. Both sides are compared after resolving symbolic
links, so a link is no way round. The rule does not rely on the paths being secret: errors name
them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from auger.errors import UserError
from auger.storage import filesystem as fs
from auger.storage.selection import is_hidden
from auger.storage.temporary import foreign_location

__all__ = ["DeniedPath", "PathGuard", "TemporaryLocations", "covering", "reached"]

_GLOB = "*?[{"


@dataclass(frozen=True)
class DeniedPath:
    """One denied file or directory and what it is (said in the error)."""

    path: str
    what: str
    #: directories inside ``path`` that stay reachable (the default temporary workspace kept
    #: in a private state directory)
    open_below: tuple[str, ...] = ()

    def opens(self, real: str) -> bool:
        """Whether the resolved path ``real`` lies in one of the directories left open."""
        return any(_inside(real, os.path.realpath(p)) for p in self.open_below)


@dataclass(frozen=True)
class TemporaryLocations:
    """Session temporary locations as one session sees them."""

    own: Collection[str]
    others: Iterable[str]
    roots: Iterable[str]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _scan_prefix(path: str) -> tuple[str, bool]:
    """The part of ``path`` before any glob character (a directory), and whether it had one."""
    cut = min((i for i, ch in enumerate(path) if ch in _GLOB), default=len(path))
    if cut == len(path):
        return path, False
    prefix = path[:cut]
    if not prefix.endswith("/"):
        prefix = os.path.dirname(prefix)
    return prefix or "/", True


def reached(path: str, denied: Iterable[DeniedPath]) -> DeniedPath | None:
    """The denied path that reading or writing ``path`` (a file, directory or glob) reaches:
    the innermost one it lies in, else one its scan would come to."""
    prefix, globbed = _scan_prefix(path)
    target = os.path.realpath(prefix)
    found = covering(target, denied)
    if found is not None:
        return found
    for entry in denied:
        real = os.path.realpath(entry.path)
        if _inside(real, target):
            below = os.path.relpath(real, target).split("/")
            if globbed or not any(is_hidden(part) for part in below):
                return entry
    return None


def covering(path: str, denied: Iterable[DeniedPath]) -> DeniedPath | None:
    """The innermost denied path that ``path`` is or lies inside (what listings leave out)."""
    real = os.path.realpath(path)
    best: tuple[int, DeniedPath] | None = None
    for entry in denied:
        root = os.path.realpath(entry.path)
        if _inside(real, root) and not entry.opens(real) and (best is None or len(root) > best[0]):
            best = (len(root), entry)
    return None if best is None else best[1]


class PathGuard:
    """The denied paths as one session sees them: the fixed list plus the temporary locations
    of every other session (its own stay reachable).

    Args:
        fixed: returns the fixed denied paths (asked on every check: a server adds its files
            after the engine started).
        temporary: returns the session temporary locations, or None for a guard without
            sessions.
    """

    def __init__(
        self,
        fixed: Callable[[], Sequence[DeniedPath]],
        temporary: Callable[[], TemporaryLocations] | None = None,
    ) -> None:
        self._fixed = fixed
        self._temporary = temporary

    def check(
        self,
        path: str,
        name: str | None = None,
        workspace: str | None = None,
        listing: bool = False,
    ) -> None:
        """Refuse ``path`` when it reaches a denied path.

        Args:
            path: the absolute path (a file, directory or glob).
            name: the name the user wrote, for the message.
            workspace: the workspace's full name, for the message.
            listing: ``path`` is a directory to list, not to scan: it is refused only when it
                is (or lies inside) a denied path; the listing leaves denied entries out.

        Raises:
            UserError: PERMISSION naming the table, the denied path and the workspace.
        """
        shown = name if name is not None else path
        # the fixed denied paths are the server's local files: an object's URI never reaches one
        fixed = () if fs.is_uri(path) else self._fixed()
        entry = covering(path, fixed) if listing else reached(path, fixed)
        if entry is not None:
            context = [f"Denied path: {entry.path}"]
            if workspace:
                context.append(f"Workspace: {workspace}")
            raise UserError.permission(
                f"Path [{shown}] reaches {entry.what}, which no query may read or change",
                context,
            )
        if self._temporary is None:
            return
        if self._foreign(path, inside_only=listing):
            raise UserError.permission(
                f"Table [{shown}] is inside the temporary location of another session",
                [
                    "Temporary tables are visible only to the session that created them, "
                    "by the name given in CREATE TEMPORARY TABLE"
                ],
            )

    def hides(self, path: str) -> bool:
        """Whether a listing (SHOW FILES, INFORMATION_SCHEMA) must leave ``path`` out."""
        if not fs.is_uri(path) and covering(path, self._fixed()) is not None:
            return True
        return self._foreign(path, inside_only=True)

    def _foreign(self, path: str, inside_only: bool) -> bool:
        """Whether ``path`` reaches (or, ``inside_only``, lies in) another session's location."""
        if self._temporary is None:
            return False
        temp = self._temporary()
        found = foreign_location(path, temp.own, temp.roots, temp.others)
        if found is None:
            return False
        if fs.is_uri(path):
            return not inside_only or _inside(fs.normpath(path), fs.normpath(found))
        return not inside_only or _inside(os.path.realpath(path), os.path.realpath(found))
