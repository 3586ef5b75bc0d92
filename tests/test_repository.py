"""Rules about the repository itself: the code cites only documents that ship with it."""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import auger

SRC = Path(auger.__file__).resolve().parent
ROOT = SRC.parent.parent

# Documents that live outside the repository, and the ways the code used to cite them: design
# and style notes by section, seed files, and Drill reference notes.
OUTSIDE_CITATION = re.compile(
    r"STYLE ?#\d|DESIGN ?§|DESIGN\.md|STYLE\.md|drill-behaviou?r|seeds?/|seed scenario|"
    r"the seed's|reference/[\w-]+\.md|[\w-]+\.txt\b|§"
)
SOURCE_SUFFIXES = {".py", ".pyi", ".c", ".h", ".md", ".toml"}


def _citations(root: Path, pattern: re.Pattern[str] = OUTSIDE_CITATION) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or "egg-info" in str(path):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    return found


def test_source_cites_no_document_outside_the_repository() -> None:
    found = _citations(SRC)
    assert not found, (
        "State the rule where it applies or cite docs/architecture.md instead of:\n"
        + "\n".join(found)
    )


# Tests name files ending in .txt as data; there, only the design documents' own names count.
TEST_CITATION = re.compile(
    OUTSIDE_CITATION.pattern.replace(
        r"[\w-]+\.txt\b",
        r"(?:temporary-tables|scan-schema-tracker|projection-framework|result-set-loader-overflow"
        r"|row-set-writer)\.txt\b",
    )
)


def test_tests_cite_no_document_outside_the_repository() -> None:
    found = [
        line
        for line in _citations(ROOT / "tests", TEST_CITATION)
        if not line.startswith("test_repository.py:")
    ]
    assert not found, "Say what the test checks instead of citing:\n" + "\n".join(found)


def test_the_pattern_catches_each_kind_of_outside_citation(tmp_path: Path) -> None:
    lines = [
        "# a table, not an if chain (STYLE #9)",
        '"""The reader lifecycle (DESIGN §3.4)."""',
        "# see drill-behaviour.md",
        "# temporary-tables.txt says so",
        "# wire format: reference/drill-rest-api.md",
        "# in the seed's words",
        "# as Drill §Views says",
    ]
    (tmp_path / "m.py").write_text("\n".join(lines) + "\n# docs/architecture.md is ours\n")
    assert len(_citations(tmp_path)) == len(lines)


ARCHITECTURE = ROOT / "docs" / "architecture.md"

#: The top-level parts of ``auger`` the architecture page names modules of.
_PACKAGES = (
    "types|storage|formats|resultset|scan|plugins|spark|sql|server|cli|sqlalchemy|"
    "errors|config|options|projection|version|dbapi|session|engine"
)
_DOTTED = re.compile(rf"`(?:auger\.)?((?:{_PACKAGES})(?:\.\w+)+)")


def _top_level_names(path: Path) -> dict[str, ast.AST]:
    """The names a module (or a class body) defines at its top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return _defined(tree.body)


def _defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
    return names


def _module_path(dotted: str) -> Path | None:
    base = SRC / dotted.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _names_something(dotted: str) -> bool:
    """Whether ``spark.frames.scan_frame`` (say) is a module, or a name (a class's member
    too) that the longest module it starts with defines."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_path(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        names = _top_level_names(path)
        for i, name in enumerate(rest):
            node = names.get(name)
            if node is None:
                return False
            if i + 1 < len(rest):
                if not isinstance(node, ast.ClassDef):
                    return False
                names = _defined(node.body)
        return True
    return False


def test_the_architecture_document_names_modules_that_exist() -> None:
    names = set(_DOTTED.findall(ARCHITECTURE.read_text(encoding="utf-8")))
    assert len(names) > 50, "docs/architecture.md names few modules"
    missing = sorted(n for n in names if not _names_something(n))
    assert not missing, f"docs/architecture.md names modules or names that do not exist: {missing}"


def _tree_block() -> list[str]:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("```", text.index("The tree, a line per folder"))
    return text[start + 3 : text.index("```", start + 3)].strip("\n").splitlines()


def _tree_folders() -> dict[str, str]:
    """Each folder the page's tree shows (below ``src``) and the text beside it."""
    folders: dict[str, str] = {}
    stack: list[str] = []
    current = ""
    for line in _tree_block():
        match = re.match(r"( *)(\w+)/\s+(.*)", line)
        if match:
            depth = len(match.group(1)) // 2
            stack = [*stack[:depth], match.group(2)]
            current = "/".join(stack)
            folders[current] = match.group(3)
        elif current:
            folders[current] += " " + line.strip()
    return folders


def test_the_architecture_tree_shows_every_package_and_only_packages() -> None:
    packages = {
        str(p.parent.relative_to(SRC.parent))
        for p in SRC.rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    # folders of files the package ships (their sub-folders go unmentioned)
    data = {"auger/data", "auger/server/static"}
    assert set(_tree_folders()) == packages | data


def test_the_architecture_layers_are_the_checked_layers() -> None:
    """The layer table names every top-level part of ``auger`` the layer check places, and
    nothing else."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index("| layer | packages |") : text.index("Why `spark` sits below")]
    named = {
        name
        for row in table.splitlines()[2:]
        if row.startswith("|")
        for name in re.findall(r"`(\w+)`", row.split("|")[2])
    }
    tops = {p.stem for p in SRC.glob("*.py")} | {
        p.name for p in SRC.iterdir() if (p / "__init__.py").exists() or p.name == "data"
    }
    tops -= {"__init__", "__main__"}
    assert named == tops
    placed = set(_check_layers().RANK) - {"__init__", "__main__", "_jsonscan", "_textscan"}
    assert named == placed - {"catalog"}  # catalog: kept for a top-level catalog to come


def test_the_architecture_lists_the_plugins_auger_ships() -> None:
    shipped = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "entry-points"
    ]["auger.formats"]
    described = _tree_folders()["auger/plugins"]
    listed = set(re.findall(r"\b(\w+)\b", described.split("(", 1)[1].split(")", 1)[0]))
    assert listed == set(shipped), described
    for name, target in shipped.items():
        module, _, cls = target.partition(":")
        path = _module_path(module.removeprefix("auger."))
        assert path is not None and cls in _top_level_names(path), name


def test_the_architecture_lists_the_planner_rules_in_order() -> None:
    from auger.sql.planning.planner import RULES

    text = ARCHITECTURE.read_text(encoding="utf-8")
    start = text.index("one module each in `sql.planning.rules`:")
    listed = re.findall(r"`(\w+)`", text[start : text.index(")", start)])
    assert listed == [rule.__name__ for rule in RULES]
    modules = {p.stem for p in (SRC / "sql/planning/rules").glob("*.py")} - {"__init__"}
    assert set(listed) == modules


#: pyspark's private handles: the JVM behind a session, context or DataFrame.
PYSPARK_PRIVATE = re.compile(
    r"\._(?:jsc|jvm|gateway|jdf|jsparkSession|jconf|jrdd|jcol|jreader|jwrite|jseq|jdstream|"
    r"active_spark_context|instantiatedSession|sc)\b"
)


def test_pyspark_private_names_stay_in_the_spark_package() -> None:
    found = [
        line
        for line in _citations(SRC, PYSPARK_PRIVATE)
        if not line.startswith(("spark/", "spark\\"))
    ]
    assert not found, "Move what needs pyspark's private names into auger.spark:\n" + "\n".join(
        found
    )
    assert _citations(SRC / "spark", PYSPARK_PRIVATE), "the pattern no longer finds any"


def _check_layers() -> Any:
    spec = importlib.util.spec_from_file_location("check_layers", ROOT / "scripts/check_layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_layers"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_layer_check_catches_imports_of_a_higher_layer_even_inside_functions(
    tmp_path: Path,
) -> None:
    check = _check_layers()
    src = tmp_path / "auger"
    (src / "scan").mkdir(parents=True)
    (src / "sql").mkdir()
    (src / "__init__.py").write_text("")
    (src / "sql" / "__init__.py").write_text("")
    (src / "sql" / "planner.py").write_text("from auger.scan import spec\n")  # downwards: fine
    (src / "scan" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import auger\n"  # the package itself: no dependency
        "if TYPE_CHECKING:\n"
        "    from auger.sql.planner import x\n"  # an annotation only: fine
        "def f():\n"
        "    from auger.sql import planner\n"  # upwards, hidden in a function
        "    from ..sql.planner import y\n"  # upwards, relative
    )
    bad = check.violations(check.collect(src))
    assert [(i.importer, i.imported, i.line, i.in_function) for i in bad] == [
        ("scan", "sql", 6, True),
        ("scan", "sql", 7, True),
    ]
    assert check.cycles(check.collect(src)) == [["scan", "sql"]]
    assert check.main([str(src)]) == 1
    assert check.main([str(src), "--report"]) == 0


def test_layer_check_fails_on_a_planted_violation_and_passes_on_the_source(
    tmp_path: Path,
) -> None:
    """The script as ``make lint`` runs it: exit status 1 when a lower layer imports a higher
    one, 0 on auger's own source."""
    src = tmp_path / "auger"
    (src / "storage").mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "storage" / "__init__.py").write_text("")
    (src / "storage" / "writer.py").write_text("def f():\n    from auger.spark import jobs\n")
    script = [sys.executable, str(ROOT / "scripts/check_layers.py")]
    planted = subprocess.run([*script, str(src)], capture_output=True, text=True, check=False)
    assert planted.returncode == 1
    assert "auger/storage/writer.py:2: storage -> spark (inside a function)" in planted.stdout
    ours = subprocess.run([*script, str(SRC)], capture_output=True, text=True, check=False)
    assert ours.returncode == 0, ours.stdout
    assert ours.stdout.strip().endswith(
        "0 imports of a higher layer (0 inside functions) in 0 package pairs; 0 cycles; "
        "0 module cycles"
    )


def _plant(src: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_module_check_finds_a_cycle_hidden_in_a_function(tmp_path: Path) -> None:
    """Two modules of one package that import each other, one of them inside a function: the
    cycle is found, printed as its chain of imports with the file and line of each, and fails
    the check as ``make lint`` runs it."""
    check = _check_layers()
    src = tmp_path / "auger"
    _plant(
        src,
        {
            "__init__.py": "",
            "types/__init__.py": "",
            "types/metadata.py": (
                "import pyarrow\n"  # another package: never an edge
                "class TupleSchema:\n"
                "    def to_arrow(self):\n"
                "        from auger.types.arrow import schema_to_arrow\n"
                "        return schema_to_arrow(self)\n"
            ),
            "types/arrow.py": "from auger.types.metadata import TupleSchema\n",
            "types/spark.py": (  # an annotation only: no edge, no cycle
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from auger.types.metadata import TupleSchema\n"
            ),
        },
    )
    (loop,) = check.module_cycles(check.collect_modules(src))
    assert [(i.importer, i.imported, i.path.name, i.line, i.in_function) for i in loop] == [
        ("auger.types.arrow", "auger.types.metadata", "arrow.py", 1, False),
        ("auger.types.metadata", "auger.types.arrow", "metadata.py", 4, True),
    ]
    script = [sys.executable, str(ROOT / "scripts/check_layers.py")]
    run = subprocess.run([*script, str(src)], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    out = run.stdout
    assert "module cycle: auger.types.arrow -> auger.types.metadata -> auger.types.arrow" in out
    assert "auger/types/arrow.py:1: imports auger.types.metadata" in out
    assert "auger/types/metadata.py:4: imports auger.types.arrow (inside a function)" in out
    assert out.strip().endswith("; 1 module cycles")


def test_module_check_tells_a_package_facade_from_its_modules(tmp_path: Path) -> None:
    """``from auger.pkg import name`` is an import of the module ``auger.pkg.name`` when there
    is one, else of the package's ``__init__``: a writer that takes a sibling module through
    the package is fine, one that takes a name the package re-exports closes a cycle."""
    check = _check_layers()
    src = tmp_path / "auger"
    files = {
        "__init__.py": "",
        "resultset/__init__.py": "from auger.resultset.writer import Writer\n",
        "resultset/vectors.py": "",
        "resultset/writer.py": "from auger.resultset import vectors\nclass Writer: ...\n",
    }
    _plant(src, files)
    assert check.module_cycles(check.collect_modules(src)) == []
    facade = "from . import vectors\nfrom auger.resultset import Writer\n"
    (src / "resultset/writer.py").write_text(facade)
    (loop,) = check.module_cycles(check.collect_modules(src))
    assert [(i.importer, i.imported, i.line) for i in loop] == [
        ("auger.resultset", "auger.resultset.writer", 1),
        ("auger.resultset.writer", "auger.resultset", 2),
    ]


def test_an_import_inside_a_function_must_say_what_it_defers(tmp_path: Path) -> None:
    """``make lint`` fails on an import inside a function with no ``# deferred:`` comment (it
    belongs at the top of the module), and passes once the comment says what it puts off."""
    src = tmp_path / "auger"
    body = "def f():\n    {comment}import json\n    return json.dumps(1)\n"
    _plant(src, {"__init__.py": "", "storage/__init__.py": "", "storage/a.py": ""})
    script = [sys.executable, str(ROOT / "scripts/check_layers.py"), str(src)]
    (src / "storage" / "a.py").write_text(body.format(comment=""))
    bare = subprocess.run(script, capture_output=True, text=True, check=False)
    assert bare.returncode == 1
    assert "auger/storage/a.py:2: an import inside a function with no '# deferred:" in bare.stdout
    said = "# deferred: loads nothing heavy, for this test\n    "
    (src / "storage" / "a.py").write_text(body.format(comment=said))
    ok = subprocess.run(script, capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stdout
    assert "deferred" not in ok.stdout


#: Calls whose result, bound at module level, is state the process keeps.
_STATE_CALLS = {
    "set",
    "dict",
    "list",
    "OrderedDict",
    "BoundedCache",
    "KeptAnswers",
    "KeptFrames",
    "Queue",
    "WeakKeyDictionary",
    "WeakValueDictionary",
}
_MEMOS = {"cache", "lru_cache"}


def _called(node: ast.expr) -> str:
    func = node.func if isinstance(node, ast.Call) else node
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _process_state(tree: ast.Module) -> list[tuple[str, int, str]]:
    """Module-level names bound to an empty container or a cache object, and functions
    memoized by ``functools``: (name, line, kind)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            value = node.value
            empty = isinstance(value, ast.Dict | ast.List | ast.Set) and not (
                value.keys if isinstance(value, ast.Dict) else value.elts
            )
            made = isinstance(value, ast.Call) and _called(value) in _STATE_CALLS
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id != "__all__" and (empty or made):
                    found.append((target.id, node.lineno, "state"))
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if _called(deco) in _MEMOS:
                    bounded = isinstance(deco, ast.Call) and any(
                        k.arg == "maxsize" and isinstance(k.value, ast.Constant) and k.value.value
                        for k in deco.keywords
                    )
                    argless = not node.args.args
                    found.append(
                        (node.name, node.lineno, "memo" if bounded or argless else "unbounded")
                    )
    return found


def test_state_a_process_keeps_is_listed_and_memos_are_bounded() -> None:
    """Every module-level container, cache object and ``functools`` memo of ``src`` is named in
    the architecture document's list of the state a process keeps (so a new cache has a stated
    owner and bound), and no memo of a function with arguments is unbounded."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    listed = doc[doc.index("## State a process keeps") :]
    missing, unbounded = [], []
    for path in sorted(SRC.rglob("*.py")):
        module = ".".join(path.relative_to(SRC).with_suffix("").parts)
        for name, line, kind in _process_state(ast.parse(path.read_text(encoding="utf-8"))):
            if f"`{module}.{name}`" not in listed:
                missing.append(f"{path.relative_to(ROOT)}:{line}: {module}.{name}")
            if kind == "unbounded":
                unbounded.append(f"{path.relative_to(ROOT)}:{line}: {module}.{name}")
    assert missing == []
    assert unbounded == []


def test_the_process_state_check_sees_containers_caches_and_memos() -> None:
    """The check's finder, on planted code: what counts and what does not."""
    tree = ast.parse(
        "import functools\n"
        "TABLE = {'a': 1}\n"  # a constant table: not state
        "_seen: dict[str, int] = {}\n"
        "KEPT = BoundedCache('x', 4)\n"
        "@functools.lru_cache(maxsize=8)\n"
        "def parsed(text): ...\n"
        "@functools.cache\n"
        "def grows(key): ...\n"
        "@functools.cache\n"
        "def once(): ...\n"
    )
    assert _process_state(tree) == [
        ("_seen", 3, "state"),
        ("KEPT", 4, "state"),
        ("parsed", 6, "memo"),
        ("grows", 8, "unbounded"),
        ("once", 10, "memo"),
    ]
