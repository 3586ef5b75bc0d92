"""Which directories are lakehouse tables: a ``metadata`` folder holding Iceberg metadata
files, or a ``_delta_log`` folder (the layouts Drill's Iceberg and Delta plugins recognise)."""

from __future__ import annotations

from auger.storage import filesystem as fs

__all__ = ["DELTA", "ICEBERG", "table_kind"]

ICEBERG = "iceberg"
DELTA = "delta"


def table_kind(path: str) -> str | None:
    """``iceberg``, ``delta``, or None when ``path`` is no lakehouse table's directory."""
    try:
        # no look at ``path`` itself: the listing that selects its files does that, and an
        # object store would be asked twice
        if fs.isdir(fs.join(path, "_delta_log")):
            return DELTA
        metadata = fs.join(path, "metadata")
        if fs.isdir(metadata) and any(
            f.path.endswith(".metadata.json") or fs.basename(f.path) == "version-hint.text"
            for f in fs.list_dir(metadata)
        ):
            return ICEBERG
    except OSError:
        return None
    return None
