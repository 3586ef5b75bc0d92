"""Workspaces: a named directory of a file plugin, and the paths a query may reach inside it.

Every path a statement touches in a workspace (a table, a view file, a directory to list, a
table to write or drop) is resolved here, and only here: relative to the workspace location (a
leading ``/`` is optional), it must stay inside it (``..``, absolute names and symbolic links
that lead out are refused), and it must not reach a denied path (:mod:`auger.storage.denied`:
the server's own files and other sessions' temporary locations). Both refusals are PERMISSION
errors that name the workspace. A directory or glob scan meets the same rule file by file: a
link inside it that leads out is skipped (:meth:`Workspace.holds`), unless the workspace's
``follow_links`` says to read it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from auger.config import FormatConfig, PluginConfig, WorkspaceConfig
from auger.errors import UserError
from auger.storage import filesystem as fs
from auger.storage.denied import PathGuard

__all__ = ["Workspace"]


@dataclass(frozen=True)
class Workspace:
    """A workspace as one session sees it.

    Attributes:
        plugin, config: the file plugin and the workspace's configuration.
        guard: the denied paths of the session asking (None: containment only).
    """

    plugin: PluginConfig
    config: WorkspaceConfig
    guard: PathGuard | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # an object store's settings live with its plugin: make them known to this process
        # before any of the workspace's paths is listed or opened
        remote = fs.config_for_plugin(self.config.location, self.plugin.raw.get("config"))
        if remote is not None:
            fs.register(remote)

    @property
    def name(self) -> str:
        """Drill's full schema name: ``dfs.tmp``, ``cp.default``."""
        return f"{self.plugin.name}.{self.config.name}"

    @property
    def location(self) -> str:
        return self.config.location

    @property
    def writable(self) -> bool:
        return self.config.writable and not self.plugin.classpath

    def resolve(self, table_path: str, shown: str | None = None, listing: bool = False) -> str:
        """Absolute path of ``table_path`` inside this workspace, refusing escapes.

        ``""`` means the workspace directory itself (which may be denied too).

        Args:
            table_path: the path relative to the workspace (a table name, a view file name).
            shown: the name the user wrote, for messages (default: ``table_path``).
            listing: the path is a directory to list (SHOW FILES, INFORMATION_SCHEMA), not to
                scan: one that merely holds a denied path is allowed, and the listing leaves
                that entry out (:meth:`listed`).

        Raises:
            UserError: PERMISSION, when the path leads outside the workspace or reaches a
                denied path.
        """
        shown = table_path if shown is None else shown
        rel = table_path.lstrip("/")
        if fs.is_uri(self.location):
            joined = self._resolve_remote(rel, shown)
            if self.guard is not None:
                self.guard.check(joined, shown, self.name, listing)
            return joined
        root = os.path.realpath(self.location)
        joined = os.path.normpath(os.path.join(root, rel))
        real = os.path.realpath(joined)
        for candidate in (joined, real):
            if candidate != root and not candidate.startswith(root.rstrip("/") + "/"):
                raise UserError.permission(
                    f"Path [{shown}] is outside workspace [{self.name}]",
                    [f"Workspace location: {self.location}"],
                )
        if self.guard is not None:
            self.guard.check(joined, shown, self.name, listing)
        return joined

    def _resolve_remote(self, rel: str, shown: str) -> str:
        """:meth:`resolve` in an object store: no links, so containment is by the names."""
        root = fs.normpath(self.location)
        joined = fs.join(root, rel) if rel else root
        if joined != root and not joined.startswith(root.rstrip("/") + "/"):
            raise UserError.permission(
                f"Path [{shown}] is outside workspace [{self.name}]",
                [f"Workspace location: {self.location}"],
            )
        return joined

    def resolve_entry(self, path: str) -> str:
        """:meth:`resolve` for an absolute path found by listing a resolved directory."""
        if fs.is_uri(self.location):
            return self.resolve(fs.relpath(path, self.location), fs.basename(path))
        root = os.path.realpath(self.location)
        return self.resolve(os.path.relpath(path, root), os.path.basename(path))

    @property
    def follow_links(self) -> bool:
        """Whether scans read files through links that lead out of the workspace."""
        return self.config.follow_links

    def holds(self, path: str) -> bool:
        """Whether a local ``path``, after resolving its links, lies inside the workspace."""
        root = os.path.realpath(self.location)
        real = os.path.realpath(path)
        return real == root or real.startswith(root.rstrip("/") + "/")

    def listed(self, path: str) -> bool:
        """Whether a listing of this workspace may show ``path`` (an entry it found)."""
        return self.guard is None or not self.guard.hides(path)

    def format_for(self, path: str) -> FormatConfig | None:
        fmt = self.plugin.format_for(path)
        if fmt is None and self.config.default_format:
            fmt = self.plugin.formats.get(self.config.default_format)
        return fmt
