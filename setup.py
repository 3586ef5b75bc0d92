"""The compiled pieces of auger: the text tokenizer (``src/auger/_textscan.c``) and the JSON
member projector (``src/auger/_jsonscan.c``); and the build's record of when it was built.

Everything else is declared in pyproject.toml. The extensions are optional: without a C compiler
the install still succeeds and files are read by pyarrow and the Python parsers alone.

A built package carries ``auger/_build.json`` (its build time, and the commit when built from a
git checkout), which ``sys.version`` reports (see ``src/auger/version.py``). The time is
``SOURCE_DATE_EPOCH`` when set, so reproducible builds stay reproducible.
"""

import datetime
import json
import os
import subprocess
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


class BuildWithInfo(build_py):
    """build_py that also writes ``auger/_build.json`` into the built package."""

    def run(self) -> None:
        super().run()
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        when = (
            datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
            if epoch and epoch.isdigit()
            else datetime.datetime.now(datetime.UTC)
        )
        info = {"build_time": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": _commit()}
        target = Path(self.build_lib) / "auger" / "_build.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(info), encoding="utf-8")


setup(
    cmdclass={"build_py": BuildWithInfo},
    ext_modules=[
        Extension(
            "auger._textscan",
            ["src/auger/_textscan.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
        Extension(
            "auger._jsonscan",
            ["src/auger/_jsonscan.c"],
            extra_compile_args=["-O3", "-std=c99"],
            optional=True,
        ),
    ],
)
