"""File selection: which files a table name means, and the directory levels above them.

Drill hides files and directories whose names start with ``.`` or ``_`` (view files, schema
files, Spark's ``_SUCCESS``), expands globs (``{a,b}``, ``*``, ``?``, ``[a-b]``), and treats a
directory as the union of every file below it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from auger.errors import UserError, closest_name
from auger.storage import filesystem as fs
from auger.storage.kept_answers import KeptAnswers
from auger.storage.object_tables import PENDING_MARKER, hide_pending

__all__ = [
    "LISTING_TTL_MS",
    "FileSelection",
    "FileStatus",
    "clear_listings",
    "is_hidden",
    "nearest_entry",
    "select_files",
]


@dataclass(frozen=True)
class FileStatus:
    path: str
    size: int
    mtime: float  # seconds since the epoch


@dataclass(frozen=True)
class FileSelection:
    """The files behind one table reference and the root that ``dirN`` counts from."""

    root: str
    files: tuple[FileStatus, ...]
    is_directory: bool

    @property
    def max_depth(self) -> int:
        """Deepest directory level below the root in the selection (0: files at the root)."""
        depth = 0
        for f in self.files:
            rel = fs.relpath(fs.dirname(f.path), self.root)
            if rel != ".":
                depth = max(depth, len(rel.split("/")))
        return depth

    def hive_keys(self) -> list[str]:
        """Keys of ``key=value`` directories below the root, first spelling, first-seen order."""
        keys: dict[str, str] = {}
        for f in self.files:
            rel = fs.relpath(fs.dirname(f.path), self.root)
            if rel == ".":
                continue
            for part in rel.split("/"):
                k, sep, _ = part.partition("=")
                if sep and k:
                    keys.setdefault(k.lower(), k)
        return list(keys.values())


def is_hidden(name: str) -> bool:
    """Hidden from scans: ``.``/``_`` names, and Drill's own ``*.view.drill`` metadata files."""
    return name.startswith(".") or name.startswith("_") or name.endswith(".drill")


_GLOB_CHARS = re.compile(r"[*?\[{]")


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out: list[str] = []
    for alt in m.group(1).split(","):
        out.extend(_expand_braces(pattern[: m.start()] + alt + pattern[m.end() :]))
    return out


def _hidden_but_markers(name: str) -> bool:
    return is_hidden(name) and name != PENDING_MARKER


def _walk(path: str) -> list[FileStatus]:
    """The visible files below a directory; those of a table an object-store write has not
    committed yet are left out (see :mod:`auger.storage.object_tables`)."""
    found = fs.walk_files(path, _hidden_but_markers)
    return [FileStatus(f.path, f.size, f.mtime) for f in hide_pending(found, path)]


#: The default of ``auger.storage.listing_ttl_ms``.
LISTING_TTL_MS = 1000

#: Listings of object-store paths kept for ``auger.storage.listing_ttl_ms``.
_listings: KeptAnswers[FileSelection] = KeptAnswers(256)


def clear_listings() -> None:
    """Forget every kept listing (tests; after changes made outside auger)."""
    _listings.clear()


def select_files(path: str, listing_ttl: float = 0.0) -> FileSelection:
    """Resolve a path (file, directory or glob; local or an object store's URI) to the files
    it means.

    ``listing_ttl``: seconds for which the selection of an object-store path is kept and used
    again instead of listing the prefix again (:class:`~auger.storage.kept_answers.KeptAnswers`).

    Raises:
        UserError: VALIDATION, when nothing exists at the path; for an object store, what
            :func:`auger.storage.filesystem.storage_error` makes of a store that cannot be asked.
    """
    return _listings.get(path, listing_ttl, _select)


def _select(path: str) -> FileSelection:
    info = fs.file_info(path)
    if info is None and _GLOB_CHARS.search(path) and not _is_link(path):
        # a name that merely holds a glob character (``[1].csv``) is that file
        matches: list[str] = []
        for pat in _expand_braces(path):
            matches.extend(fs.glob_paths(pat))
        matches = sorted({m for m in matches if not is_hidden(fs.basename(m))})
        if not matches:
            raise UserError.validation(f"No files match the pattern [{path}]")
        root = _glob_root(path)
        files: list[FileStatus] = []
        for m in matches:
            files.extend(_walk(m) if fs.isdir(m) else _walk_file(m))
        return FileSelection(root, tuple(files), True)
    if info is not None and info.is_dir:
        return FileSelection(path, tuple(_walk(path)), True)
    if info is not None:
        return FileSelection(fs.dirname(path), (FileStatus(path, info.size, info.mtime),), False)
    raise UserError.validation(f"Table [{path}] not found: no file or directory at {path}")


def nearest_entry(path: str) -> str | None:
    """The visible entry beside a missing ``path`` whose name is nearest to its own (for a "did
    you mean"): ``employee.json`` for ``.../employe.json``. None when its directory cannot be
    listed or holds nothing close."""
    if _GLOB_CHARS.search(path):
        return None
    parent = fs.dirname(path.rstrip("/"))
    try:
        names = [fs.basename(e.path) for e in fs.list_dir(parent)]
    except (OSError, UserError):
        return None
    return closest_name(fs.basename(path.rstrip("/")), (n for n in names if not is_hidden(n)))


def _is_link(path: str) -> bool:
    """A dangling symbolic link is an entry of that name, not a pattern."""
    return not fs.is_uri(path) and os.path.islink(path)


def _walk_file(path: str) -> list[FileStatus]:
    info = fs.file_info(path)
    return [] if info is None else [FileStatus(path, info.size, info.mtime)]


def _glob_root(pattern: str) -> str:
    """The directory part of a glob before its first wildcard: ``/a/b/199?/*`` → ``/a/b``."""
    first = _GLOB_CHARS.search(pattern)
    head = pattern[: first.start()] if first else pattern
    return head.rsplit("/", 1)[0] or "/"
