"""auger's version: the one written in the source, the installed package's, and when it was built.

The build time is a fact about the installation, never the clock of the query that asks: a
package built by ``setup.py`` carries ``_build.json`` (written at build time, honouring
``SOURCE_DATE_EPOCH`` for reproducible builds); a source checkout (an editable install) has
its commit's time instead; anything else says nothing ("").
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["BUILD_INFO", "__version__", "build_time", "installed_version", "package_dir"]

__version__ = "0.1.0"

#: The file a build writes beside this module: ``{"build_time": ISO-8601 UTC, "commit": ...}``.
BUILD_INFO = "_build.json"


def installed_version() -> str:
    """The installed package's version (its metadata), or the source tree's."""
    # importlib.metadata is loaded only when asked: every command's start-up would pay for it
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("auger")
    except PackageNotFoundError:
        return __version__


def package_dir() -> Path:
    """The directory this installation of the ``auger`` package runs from."""
    return Path(__file__).resolve().parent


@functools.lru_cache(maxsize=8)
def build_time(where: Path | None = None) -> str:
    """When the package in ``where`` (default: this one) was built, as ISO 8601 in UTC.

    The build's own record first; else, in a git checkout, the time of the commit checked out;
    else "" (unknown, rather than an invented date).
    """
    where = where or package_dir()
    try:
        recorded = json.loads((where / BUILD_INFO).read_text(encoding="utf-8"))
        if recorded.get("build_time"):
            return str(recorded["build_time"])
    except (OSError, ValueError, AttributeError):
        pass
    return _commit_time(where)


def _commit_time(where: Path) -> str:
    """The checked-out commit's time (UTC) when ``where`` lies in a git work tree, else ""."""
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import subprocess  # only when asked: every command imports this module at start-up

    try:
        done = subprocess.run(
            ["git", "-C", str(where), "log", "-1", "--format=%ct"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    seconds = done.stdout.strip()
    if done.returncode != 0 or not seconds.isdigit():
        return ""
    return _iso_utc(int(seconds))


def _iso_utc(seconds: int) -> str:
    # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
