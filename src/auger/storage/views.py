"""Views as Drill stores them: one ``<name>.view.drill`` JSON file in the workspace directory.

The file holds the view's name, its SQL, its fields (name, Calcite type, nullability) and the
schema path that was the default when it was created, against which the SQL's unqualified names
are resolved later. Keeping Drill's layout lets views move between Drill and auger.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from auger.errors import UserError
from auger.storage import drill_json
from auger.storage import filesystem as fs
from auger.storage.drill_json import write_atomically
from auger.storage.workspace import Workspace

__all__ = [
    "VIEW_SUFFIX",
    "View",
    "ViewField",
    "find_view_file",
    "list_views",
    "read_view",
    "view_path",
    "write_view",
]

VIEW_SUFFIX = ".view.drill"


@dataclass(frozen=True)
class ViewField:
    """One column of a view: its name, Calcite type name and nullability (plus type details)."""

    name: str
    type: str
    nullable: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict)  # precision, scale, keyType...

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        out.update(self.extra)
        out["isNullable"] = self.nullable
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ViewField:
        extra = {k: v for k, v in raw.items() if k not in ("name", "type", "isNullable")}
        return cls(
            str(raw["name"]), str(raw.get("type", "ANY")), bool(raw.get("isNullable", True)), extra
        )


@dataclass(frozen=True)
class View:
    """A stored view definition."""

    name: str
    sql: str
    fields: tuple[ViewField, ...]
    workspace_schema_path: tuple[str, ...]

    @property
    def column_names(self) -> list[str]:
        """Names the view gives its columns (empty for legacy ``*`` views)."""
        return [f.name for f in self.fields if f.name not in ("*", "**")]

    def to_json(self) -> str:
        return drill_json.dumps(
            {
                "name": self.name,
                "sql": self.sql,
                "fields": [f.to_json() for f in self.fields],
                "workspaceSchemaPath": list(self.workspace_schema_path),
            }
        )

    @classmethod
    def from_json(cls, text: str, path: str = "") -> View:
        try:
            raw = json.loads(text)
            return cls(
                str(raw["name"]),
                str(raw["sql"]),
                tuple(ViewField.from_json(f) for f in raw.get("fields", [])),
                tuple(str(p) for p in raw.get("workspaceSchemaPath", [])),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError.validation(
                f"Failure while reading view file [{fs.basename(path)}]: {exc}",
                [f"File: {path}"],
            ) from exc


def view_path(ws: Workspace, name: str) -> str:
    """The file of view ``name`` in ``ws``, through the workspace's resolution.

    Raises:
        UserError: PERMISSION, when the name leads outside the workspace or to a denied path.
    """
    return ws.resolve(name.lstrip("/") + VIEW_SUFFIX, name)


def find_view_file(ws: Workspace, name: str) -> str | None:
    """The view file for ``name`` in ``ws`` (exact name first, then case-insensitive).

    Raises:
        UserError: PERMISSION, when the name or the file found leads outside the workspace.
    """
    exact = view_path(ws, name)
    try:
        if fs.isfile(exact):
            return exact
    except UserError as exc:
        # an object store that cannot be asked (down, denied, no bucket): the error names the
        # table the query wrote, not the view file looked for before it
        table = exact.removesuffix(VIEW_SUFFIX)
        raise UserError(
            exc.kind,
            exc.message.replace(exact, table),
            [line.replace(exact, table) for line in exc.context],
        ) from exc
    parent = fs.dirname(exact)
    wanted = fs.basename(exact).lower()
    try:
        entries = fs.list_dir(parent)
    except (OSError, UserError):
        return None
    for entry in entries:
        if fs.basename(entry.path).lower() == wanted and not entry.is_dir:
            return ws.resolve_entry(entry.path)
    return None


def list_views(ws: Workspace) -> list[tuple[str, str]]:
    """Names and files of the views stored directly in ``ws`` that its session may see.

    A view file that is a link out of the workspace, or reaches a denied path, is left out.
    """
    try:
        directory = ws.resolve("", listing=True)
        entries = fs.list_dir(directory)
    except (OSError, UserError):
        return []
    found: list[tuple[str, str]] = []
    for entry in entries:
        name = fs.basename(entry.path)
        if not name.endswith(VIEW_SUFFIX):
            continue
        try:
            path = ws.resolve_entry(entry.path)
        except UserError:
            continue
        found.append((name[: -len(VIEW_SUFFIX)], path))
    return found


def read_view(path: str) -> View:
    return View.from_json(fs.read_text(path), path)


def write_view(ws: Workspace, view: View, mode: int = 0o664) -> str:
    """Write ``view`` atomically (temp file + rename) into ``ws`` and return its path."""
    path = view_path(ws, view.name)
    write_atomically(path, view.to_json(), mode)
    return path
