"""Fixtures of the format reader tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(params=["auto", "arrow", "python"])
def text_mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session options that run a text test through each path: the default (auger's own
    tokenizer, with fallback), pyarrow's parser (with fallback), or the Python parser only;
    all must give the same answers."""
    return {
        "auger.scan.text_force_python": request.param == "python",
        "auger.scan.text_reader": "arrow" if request.param == "arrow" else "auto",
    }


@pytest.fixture(params=["auto", "python"])
def json_mode(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session options for the JSON reader: pyarrow first (with fallback), or Python only."""
    return {"auger.scan.json_force_python": request.param == "python"}
