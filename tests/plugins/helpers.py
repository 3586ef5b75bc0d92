"""What the plugin tests share: a connection whose ``dfs`` plugin has one workspace and the
formats under test, and a query's rows as tuples."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import auger


@contextmanager
def connect_with_formats(
    workspace: str, location: Path, formats: Mapping[str, Mapping[str, Any]]
) -> Iterator[Any]:
    """A DB-API connection where ``dfs.<workspace>`` is ``location`` and ``formats`` sit beside
    Drill's defaults."""
    config = {
        "storage": {
            "dfs": {
                "type": "file",
                "workspaces": {workspace: {"location": str(location)}},
                "formats": dict(formats),
            }
        },
        "spark": {"master": "local[2]"},
    }
    with auger.connect(config=config) as conn:
        yield conn


def rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    cur.execute(sql)
    return [tuple(r) for r in cur.fetchall()]
