"""Which directories are lakehouse tables: a ``metadata`` folder holding Iceberg metadata
files, or a ``_delta_log`` folder (the layouts Drill's Iceberg and Delta plugins recognise)."""

from __future__ import annotations

from auger.storage import filesystem as fs
from auger.storage.kept_answers import KeptAnswers

__all__ = ["DELTA", "ICEBERG", "table_kind"]

ICEBERG = "iceberg"
DELTA = "delta"


#: object-store answers kept for a listing's time to live
_kinds: KeptAnswers[str | None] = KeptAnswers(1024)


def table_kind(path: str, listing_ttl: float = 0.0) -> str | None:
    """``iceberg``, ``delta``, or None when ``path`` is no lakehouse table's directory.

    ``listing_ttl``: seconds for which an object-store path's answer is kept, as its listing
    is (``auger.storage.listing_ttl_ms``), unless auger wrote or deleted something meanwhile.
    """
    return _kinds.get(path, listing_ttl, _table_kind)


def _table_kind(path: str) -> str | None:
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
