"""Options that only the REST server reads, added to the engine's option registry.

Drill defines ``drill.exec.http.rest.errors.verbose`` (DRILL-7888) and clients set it through
the ``options`` field of ``/query.json``; it must exist, or that request fails to submit. The
registry (``auger.options.OPTIONS``) is a plain dict, so the server adds its definitions at
import time; adding one twice is a no-op.
"""

from __future__ import annotations

from typing import Any, cast

from auger.options import OPTIONS, OptionDefinition

__all__ = ["SERVER_OPTIONS", "register_server_options"]

SERVER_OPTIONS: tuple[OptionDefinition, ...] = (
    OptionDefinition(
        "drill.exec.http.rest.errors.verbose",
        "BOOLEAN",
        False,
        "REST answers of failed queries carry the exception class and stack trace",
    ),
)


def register_server_options() -> None:
    registry = cast(dict[str, Any], OPTIONS)
    for definition in SERVER_OPTIONS:
        registry.setdefault(definition.name, definition)
