"""Spark SQL over DataFrames: how the planner hands its scans to ``spark.sql``.

The planner turns a Drill query into Spark SQL whose tables are DataFrames it built (scans,
views, system tables). They are passed to ``spark.sql(query, **frames)``, which binds each
``{name}`` in the text to its DataFrame, rather than registered as session views: a classic
session registers and drops them around its (eager) analysis, and Spark Connect sends the
DataFrames' plans with the query, so a lazily analysed query can never lose one. Nothing is
left in the session's catalog, and no other module needs to know how the names look.

The planner writes each table as a plain identifier from :func:`frame_names`, unique to the
query, and :func:`sql_over_frames` turns those identifiers into placeholders (doubling every
other brace, which ``spark.sql`` would otherwise read as one).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["frame_names", "sql_over_frames"]


def frame_names(count: int) -> list[str]:
    """``count`` identifiers for a query's tables, unlike any name a user could write."""
    token = uuid.uuid4().hex[:16]
    return [f"frame{token}_{n}" for n in range(count)]


def sql_over_frames(spark: Any, sql: str, frames: Mapping[str, Any]) -> Any:
    """The DataFrame of ``sql``, whose tables named in ``frames`` are those DataFrames."""
    if not frames:
        return spark.sql(sql)
    text = sql.replace("{", "{{").replace("}", "}}")
    names = re.compile(r"\b(" + "|".join(re.escape(name) for name in frames) + r")\b")
    text = names.sub(lambda m: "{" + m.group(1) + "}", text)
    return spark.sql(text, **frames)
