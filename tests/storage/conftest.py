"""Fixtures of the storage tests: a local S3-compatible server (moto) for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.storage.s3_helpers import LocalS3, start_local_s3


@pytest.fixture(scope="session")
def local_s3() -> Iterator[LocalS3]:
    yield from start_local_s3()
