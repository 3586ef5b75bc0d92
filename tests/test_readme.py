"""Every example of README.md and of the user guide (docs/guide/) works as written.

Each document's fenced code blocks are run in order (the guide's pages in the order its index
lists them, since later pages may read the files earlier ones make; the guide before the README,
whose examples stop the background server the guide's first page starts, so that it is started
once): ``sh`` blocks with bash from the repository root (so ``.venv/bin/auger`` is the installed
command), ``python`` blocks as scripts of a python interpreter, ``toml`` blocks loaded as auger's
configuration, and ``sql`` blocks statement by statement on one connection. Python blocks share
one interpreter (and so one JVM: starting one is most of a block's time), each block with names
of its own, except that a block that builds its own SparkSession starts a fresh interpreter, so
that it gets a plain session, as a user would; the blocks after it in its document run in that
one, and the next document's blocks run in the shared interpreter again (so they get a session
auger built, as a user's would). A block that cannot run here (it builds the environment, or
starts a server that runs until stopped) carries an ``<!-- illustrative: why -->`` line above
it; nothing else is skipped, and there are few of those.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import auger
from auger.config import load_config
from auger.sql.frontend.parser import split_statements

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"
MARKER = "<!-- illustrative:"
RUNNABLE = ("sh", "python", "toml", "sql")
#: blocks that show what auger prints rather than what to type: checked against auger, not run
SHOWN = ("text",)
BLOCK_RE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int
    illustrative: bool


def readme_blocks(text: str) -> list[Block]:
    out = []
    for m in BLOCK_RE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        line = text[: m.start()].count("\n") + 1
        out.append(Block(m.group(1), m.group(2), line, before.startswith(MARKER)))
    return out


BLOCKS = readme_blocks(README.read_text())


def guide_pages() -> list[Path]:
    """The guide's pages in the order of its index's links, then any page the index misses."""
    index = GUIDE / "README.md"
    linked = re.findall(r"\]\(([\w-]+\.md)\)", index.read_text())
    pages = [GUIDE / name for name in dict.fromkeys(linked) if (GUIDE / name).exists()]
    rest = sorted(p for p in GUIDE.glob("*.md") if p not in pages and p != index)
    return [index, *pages, *rest]


#: every document whose examples are run: the guide, then the README (see the module's text)
DOCUMENTS: dict[str, list[Block]] = {
    str(path.relative_to(ROOT)): readme_blocks(path.read_text())
    for path in [*guide_pages(), README]
}


def test_every_block_is_run_or_marked_and_few_are_marked() -> None:
    assert BLOCKS, "README.md has no code blocks"
    for block in BLOCKS:
        assert block.lang in RUNNABLE + SHOWN, (
            f"README.md:{block.line}: no runner for ```{block.lang}"
        )
    marked = [b for b in BLOCKS if b.illustrative]
    assert len(marked) <= 3, [b.line for b in marked]
    runnable = [b for b in BLOCKS if b.lang in RUNNABLE and not b.illustrative]
    assert len(runnable) >= 8


def test_guide_pages_are_linked_run_and_rarely_marked() -> None:
    index = (GUIDE / "README.md").read_text()
    for page in GUIDE.glob("*.md"):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/guide/README.md does not link {page.name}"
    for name, blocks in DOCUMENTS.items():
        for block in blocks:
            where = f"{name}:{block.line}"
            assert block.lang in RUNNABLE + SHOWN, f"{where}: no runner for {block.lang}"
        if name.startswith("docs/guide/"):
            assert len([b for b in blocks if b.illustrative]) <= 1, name
    guide_runnable = [
        b
        for name, blocks in DOCUMENTS.items()
        if name.startswith("docs/guide/")
        for b in blocks
        if b.lang in RUNNABLE and not b.illustrative
    ]
    assert len(guide_runnable) >= 15


def test_no_example_hides_in_an_indented_fence() -> None:
    """An indented fence (inside a list item) is not a block the runner sees: refuse it."""
    for path in [README, *guide_pages()]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            assert not re.match(r"\s+```\w", line), f"{path.name}:{number}: indented example"


def test_guide_links_resolve() -> None:
    for page in GUIDE.glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+\.md)\)", page.read_text()):
            assert (page.parent / target).resolve().exists(), f"{page.name} links {target}"


def test_options_the_guide_names_exist() -> None:
    """An option the guide names in back-quotes is one auger has (a renamed option fails here)."""
    from importlib.metadata import entry_points

    from auger.options import OPTIONS

    prefixes = ("store.", "exec.", "planner.", "auger.", "drill.exec.")
    # entry-point groups (`auger.formats`) are spelled like options; they are not options
    entry_point_groups = set(entry_points().groups)
    named = set()
    for page in GUIDE.glob("*.md"):
        for word in re.findall(r"`([a-z][\w.]+)`", page.read_text()):
            if word.startswith(prefixes) and not word.endswith("."):
                named.add(word)
    named -= entry_point_groups
    assert named, "the guide names no options"
    assert named <= set(OPTIONS), sorted(named - set(OPTIONS))


def test_shown_shell_commands_are_the_shells() -> None:
    """A listing of the shell's commands names only commands the shell's own help lists."""
    from auger.cli.shell import HELP

    known = set(re.findall(r"^([.!][a-z]+)", HELP, re.MULTILINE))
    shown = [b for b in BLOCKS if b.lang in SHOWN]
    named = {m for b in shown for m in re.findall(r"^([.!][a-z]+)", b.code, re.MULTILINE)}
    assert named, "README.md shows no shell commands"
    assert named <= known, sorted(named - known)


def test_block_finder_sees_markers() -> None:
    text = "a\n\n<!-- illustrative: x -->\n```sh\nmake\n```\n\n```python\nprint(1)\n```\n"
    found = readme_blocks(text)
    assert [(b.lang, b.illustrative) for b in found] == [("sh", True), ("python", False)]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    return env


def _run(args: list[str], block: Block, where: str = "README.md") -> None:
    done = subprocess.run(
        args,
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    _check(f"{where}:{block.line} ({block.lang})", done.stdout + done.stderr, done.returncode)


#: the end of a block's output in an interpreter's output, followed by "ok" or "failed"
END = "--- end of block (auger test) ---"
#: a python interpreter that runs the blocks it reads from standard input (one JSON string a
#: line) as ``python -c`` would run each, in a namespace of the block's own, and marks the end
#: of each block's output
INTERPRETER = f"""
import json, sys, traceback
for line in sys.stdin:
    ok = True
    try:
        exec(compile(json.loads(line), "<string>", "exec"), {{"__name__": "__main__"}})
    except SystemExit as exc:
        ok = exc.code in (None, 0)
    except BaseException:
        traceback.print_exc()
        ok = False
    sys.stderr.flush()
    print({END!r}, "ok" if ok else "failed", flush=True)
"""
#: a block that builds its own SparkSession (it must not get the one an earlier block started)
OWN_SPARK = re.compile(r"SparkSession\s*\.\s*builder")


def _check(where: str, output: str, returncode: int) -> None:
    assert returncode == 0, f"{where} failed:\n{output[-3000:]}"
    assert " ERROR: " not in output, f"{where} reported an error:\n{output[-3000:]}"
    assert "Traceback" not in output, f"{where}:\n{output[-3000:]}"


@dataclass
class Interpreter:
    """A python process running blocks one after another (see ``INTERPRETER``)."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str | None] = field(default_factory=queue.Queue)
    ran: list[str] = field(default_factory=list)

    @classmethod
    def start(cls) -> Interpreter:
        process = subprocess.Popen(
            [sys.executable, "-c", INTERPRETER],
            cwd=ROOT,
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self = cls(process)
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def run(self, block: Block, where: str) -> None:
        assert self.process.stdin is not None
        where = f"{where}:{block.line} ({block.lang})"
        self.ran.append(where)
        self.process.stdin.write(json.dumps(block.code) + "\n")
        self.process.stdin.flush()
        output, status = self._until_end(where)
        _check(where, output, 0 if status == "ok" else 1)

    def _until_end(self, where: str) -> tuple[str, str]:
        deadline = time.monotonic() + 900
        out: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{where} did not end:\n{''.join(out)[-3000:]}") from None
            if line is None:
                return "".join(out), f"exit {self.process.wait()}"
            if line.startswith(END):
                return "".join(out), line[len(END) :].strip()
            out.append(line)

    def close(self) -> None:
        """End the interpreter as ``python -c`` ends: what it prints on exit is checked too."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        out: list[str] = []
        while (line := self.lines.get(timeout=900)) is not None:
            out.append(line)
        returncode = self.process.wait(timeout=900)
        _check(f"the exit after {', '.join(self.ran)}", "".join(out), returncode)


@dataclass
class Interpreters:
    """The interpreters of this module's python blocks: the shared one, whose blocks get a
    session auger built, and the one of the current document's block that built its own
    SparkSession, which takes that document's later blocks."""

    shared: Interpreter | None = None
    own: Interpreter | None = None

    def run(self, block: Block, where: str) -> None:
        if OWN_SPARK.search(block.code):
            self.end_own()
            self.own = Interpreter.start()
        elif self.own is None and self.shared is None:
            self.shared = Interpreter.start()
        interpreter = self.own or self.shared
        assert interpreter is not None
        try:
            interpreter.run(block, where)
        except BaseException:
            interpreter.process.kill()  # the next block starts afresh
            if interpreter is self.own:
                self.own = None
            else:
                self.shared = None
            raise

    def end_own(self) -> None:
        """The next document starts: a SparkSession a block built ends with its document."""
        own, self.own = self.own, None
        if own is not None:
            own.close()


@pytest.fixture(scope="module")
def python_blocks() -> Iterator[Interpreters]:
    interpreters = Interpreters()
    yield interpreters
    interpreters.end_own()
    if interpreters.shared is not None:
        interpreters.shared.close()


def _run_sql(block: Block, tmp_path: Path) -> None:
    tmp = tmp_path / "dfs_tmp"
    config = {"storage": {"dfs": {"workspaces": {"tmp": {"location": str(tmp)}}}}}
    with auger.connect(config=config) as conn:
        cur = conn.cursor()
        for statement in split_statements(block.code):
            cur.execute(statement)
            cur.fetchall()


def _load_toml(block: Block) -> None:
    raw = tomllib.loads(block.code)
    cfg = load_config(raw)
    for name, plugin in raw.get("storage", {}).items():
        for fmt in plugin.get("formats", {}):
            # a format of one's own sits beside Drill's defaults, never instead of them
            formats = cfg.plugins[name].formats
            assert fmt in formats and {"csvh", "json", "parquet"} <= set(formats)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("document", list(DOCUMENTS))
def test_examples_run_as_written(
    document: str, tmp_path: Path, python_blocks: Interpreters
) -> None:
    blocks = DOCUMENTS[document]
    python_blocks.end_own()
    ran: list[int] = []
    for block in blocks:
        if block.illustrative or block.lang in SHOWN:
            continue
        if block.lang == "sh":
            _run(["bash", "-e", "-o", "pipefail", "-c", block.code], block, document)
        elif block.lang == "python":
            python_blocks.run(block, document)
        elif block.lang == "toml":
            _load_toml(block)
        elif block.lang == "sql":
            _run_sql(block, tmp_path)
        ran.append(block.line)
    assert len(ran) == len([b for b in blocks if b.lang in RUNNABLE and not b.illustrative])
