"""When the installation was built: the build's own record, else its git commit's time, else
nothing; never the clock of the moment it is asked."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from auger.version import BUILD_INFO, build_time


def test_a_built_package_reports_its_recorded_build_time(tmp_path: Path) -> None:
    (tmp_path / BUILD_INFO).write_text(json.dumps({"build_time": "2024-05-06T07:08:09Z"}))
    assert build_time(tmp_path) == "2024-05-06T07:08:09Z"


def test_a_checkout_reports_its_commit_time(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_COMMITTER_DATE": "2001-02-03T04:05:06Z",
        "GIT_AUTHOR_DATE": "2001-02-03T04:05:06Z",
    }
    package = tmp_path / "src" / "auger"
    package.mkdir(parents=True)
    (package / "version.py").write_text("")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", "-C", str(tmp_path), *args], env=env, check=True)
    assert build_time(package) == "2001-02-03T04:05:06Z"


def test_nothing_known_is_reported_as_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a directory that is neither a built package nor inside a git work tree
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert build_time(plain) == ""
