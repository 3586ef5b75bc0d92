"""Fixtures of the format reader tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(params=["auto", "python"])
def text_mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session options that run a text test through the default path (pyarrow first, with
    fallback) or through the Python parser only; both must give the same answers."""
    return {"auger.scan.text_force_python": request.param == "python"}


@pytest.fixture(params=["auto", "python"])
def json_mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session options for the JSON reader: pyarrow first (with fallback), or Python only."""
    return {"auger.scan.json_force_python": request.param == "python"}
