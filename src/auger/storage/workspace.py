"""Workspaces: a named directory of a file plugin, and the paths a query may reach inside it.

A table path is resolved relative to the workspace location (a leading ``/`` is optional) and
must stay inside it: ``..`` and symbolic links that lead out are refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from auger.config import FormatConfig, PluginConfig, WorkspaceConfig
from auger.errors import UserError

__all__ = ["Workspace"]


@dataclass(frozen=True)
class Workspace:
    plugin: PluginConfig
    config: WorkspaceConfig

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

    def resolve(self, table_path: str) -> str:
        """Absolute path of ``table_path`` inside this workspace, refusing escapes.

        Raises:
            UserError: PERMISSION, when the path leads outside the workspace.
        """
        rel = table_path.lstrip("/")
        root = os.path.realpath(self.location)
        joined = os.path.normpath(os.path.join(root, rel))
        real = os.path.realpath(joined)
        for candidate in (joined, real):
            if candidate != root and not candidate.startswith(root.rstrip("/") + "/"):
                raise UserError.permission(
                    f"Path [{table_path}] is outside workspace [{self.name}]",
                    [f"Workspace location: {self.location}"],
                )
        return joined

    def format_for(self, path: str) -> FormatConfig | None:
        fmt = self.plugin.format_for(path)
        if fmt is None and self.config.default_format:
            fmt = self.plugin.formats.get(self.config.default_format)
        return fmt
