"""Check auger's import layers and its module graph.

The layers (bottom to top) are the ones ``docs/architecture.md`` describes: a package never
imports one from a higher layer. Packages of one layer may import each other, but no two
top-level packages may import each other, and no two modules may either, directly or through
others.

Every import of an ``auger`` module is an edge, at the top of a module or inside a function;
imports under ``if TYPE_CHECKING:`` are annotations only and are not. Imports of other packages
(pyspark, sqlglot, pyarrow...) are never edges, so a function may put one off until it runs; it
may put off an ``auger`` module too (to spare ``import auger`` or a Spark worker its cost), but
that import still counts, so it can never hide a cycle. ``from auger.a import b`` is an edge to
``auger.a.b`` when that is a module, else to ``auger.a`` (the package's ``__init__``); a bare
``import auger`` is none (every module of the package runs after the package itself).
Any module of ``sql`` that names ``UserSession`` or imports ``auger.session`` is reported too
(the SQL layer takes its own statement context), and so is any import inside a function that
does not say, in a ``# deferred: <why>`` comment on its line or the line above, what it puts
off: an import belongs at the top of its module unless it defers a heavy or optional
dependency (pyspark, pyarrow, sqlglot, the server's stack...) that importing the module would
otherwise load.

Usage: ``python scripts/check_layers.py [--report] [SRC]``. Prints each violation as
``file:line: importer -> imported``, each module cycle as its chain of imports with the
``file:line`` of each, and a summary; exits 1 when there is any violation or cycle, unless
``--report`` is given (then it only prints).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

#: Bottom to top; a package may import its own layer and the layers before it. ``spark`` sits
#: below ``sql`` because the planner builds Spark DataFrames (``docs/architecture.md``,
#: Layers). ``catalog``, the layer of name resolution, is today the sub-package ``sql.catalog``;
#: a top-level ``catalog`` package would sit with ``sql``.
LAYERS: tuple[frozenset[str], ...] = (
    # ground: errors, configuration, options, types, projections, the C scanners, the version
    frozenset(
        {"errors", "config", "options", "types", "projection", "version", "_jsonscan", "_textscan"}
    ),
    frozenset({"data"}),  # the sample files of the ``cp`` plugin
    frozenset({"storage"}),
    frozenset({"formats"}),
    frozenset({"resultset"}),
    frozenset({"scan"}),
    frozenset({"plugins"}),  # format plugins auger ships, on the scan framework
    frozenset({"spark"}),
    frozenset({"catalog", "sql"}),
    frozenset({"session", "engine"}),
    frozenset({"dbapi", "server"}),
    # ``__init__``: the package, auger.connect; ``sqlalchemy``: the SQLAlchemy dialects
    frozenset({"cli", "sqlalchemy", "__main__", "__init__"}),
)
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


@dataclass(frozen=True)
class Import:
    path: Path
    line: int
    importer: str  # top-level part of the importing module
    imported: str  # top-level part of the imported module
    in_function: bool


def _part(module: str) -> str:
    """``auger.sql.planner`` -> ``sql``; ``auger`` itself -> ``__init__``."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else "__init__"


def _module_name(path: Path, src: Path) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.stmt, bool]]:
    """Every import statement, with whether it sits inside a function; none under
    ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), in_function)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
            continue
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        yield from _imports(node, inside)


def _from_module(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` names, relative imports resolved against ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(node: ast.stmt, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    assert isinstance(node, ast.ImportFrom)
    target = _from_module(node, module, is_package)
    if target == "auger":  # ``from auger import sql``: the names are the modules
        return [f"auger.{alias.name}" for alias in node.names]
    return [target]


@dataclass(frozen=True)
class ModuleImport:
    """One import of an ``auger`` module by another: an edge of the module graph."""

    path: Path
    line: int
    importer: str  # ``auger.sql.planning.planner``
    imported: str
    in_function: bool


def _imported_modules(node: ast.stmt, module: str, is_package: bool, known: set[str]) -> list[str]:
    """The ``auger`` modules an import statement loads (each the longest dotted name that is a
    module of ``known``)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names if alias.name != "auger"]
    else:
        assert isinstance(node, ast.ImportFrom)
        base = _from_module(node, module, is_package)
        names = [
            f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
            for alias in node.names
        ]
    out: list[str] = []
    for name in names:
        bits = name.split(".")
        while bits and ".".join(bits) not in known:
            bits.pop()
        found = ".".join(bits)
        if (found == "auger" or found.startswith("auger.")) and found not in out:
            out.append(found)
    return out


def _module_files(src: Path) -> dict[str, Path]:
    """Each module of the package at ``src`` (dotted, from ``auger``) and its file."""
    files = {}
    for path in sorted(src.rglob("*.py")):
        name = _module_name(path, src)
        files[f"auger.{name}" if name else "auger"] = path
    return files


def _compiled_modules(src: Path) -> set[str]:
    """The C extensions (``auger._textscan``...), known by their type stubs: leaves of the
    graph."""
    return {f"auger.{_module_name(path, src)}" for path in src.rglob("*.pyi")}


def collect_modules(src: Path) -> list[ModuleImport]:
    """Every import of one ``auger`` module by another, in the package at ``src``."""
    files = _module_files(src)
    known = set(files) | _compiled_modules(src)
    out = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.stem == "__init__"
        for node, in_function in _imports(tree):
            for target in _imported_modules(node, module, is_package, known):
                if target != module:
                    out.append(ModuleImport(path, node.lineno, module, target, in_function))
    return out


def module_cycles(imports: list[ModuleImport]) -> list[list[ModuleImport]]:
    """One cycle of imports for each group of modules that import each other, directly or
    not: the shortest that starts and ends at the group's first module (by name)."""
    edges: dict[str, dict[str, ModuleImport]] = defaultdict(dict)
    for i in imports:
        edges[i.importer].setdefault(i.imported, i)
    graph = {node: set(targets) for node, targets in edges.items()}
    out = []
    for group in _strongly_connected(graph):
        members = set(group)
        start = group[0]
        # breadth first from ``start`` inside the group, back to ``start``
        came_from: dict[str, ModuleImport] = {}
        frontier = [start]
        done = False
        while frontier and not done:
            following = []
            for node in frontier:
                for nxt in sorted(graph.get(node, ())):
                    if nxt not in members or nxt in came_from:
                        continue
                    came_from[nxt] = edges[node][nxt]
                    if nxt == start:
                        done = True
                        break
                    following.append(nxt)
                if done:
                    break
            frontier = following
        chain = [came_from[start]]
        while chain[-1].importer != start:
            chain.append(came_from[chain[-1].importer])
        out.append(chain[::-1])
    return out


def collect(src: Path) -> list[Import]:
    """Imports between top-level parts of the package at ``src`` (the ``auger`` folder)."""
    out = []
    for path in sorted(src.rglob("*.py")):
        name = _module_name(path, src)
        module = f"auger.{name}" if name else "auger"
        is_package = path.stem == "__init__"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        importer = _part(module)
        for node, in_function in _imports(tree):
            for target in _targets(node, module, is_package):
                # ``import auger`` (its version, its folder) adds no dependency: a module of
                # the package runs only once the package itself has been imported
                if not target.startswith("auger."):
                    continue
                imported = _part(target)
                if imported != importer:
                    out.append(Import(path, node.lineno, importer, imported, in_function))
    return out


def violations(imports: list[Import]) -> list[Import]:
    """Imports of a higher layer (a part missing from ``LAYERS`` is a violation too)."""
    return [
        i
        for i in imports
        if i.importer not in RANK or i.imported not in RANK or RANK[i.imported] > RANK[i.importer]
    ]


def cycles(imports: list[Import]) -> list[list[str]]:
    """Groups of top-level parts that import each other, directly or not."""
    graph: dict[str, set[str]] = defaultdict(set)
    for i in imports:
        graph[i.importer].add(i.imported)
    return _strongly_connected(graph)


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of more than one node that reach each other, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


_USER_SESSION = re.compile(r"\bUserSession\b")


def session_in_sql(src: Path) -> list[str]:
    """Each place a module of ``sql`` names ``UserSession`` (code, comment or docstring) or
    imports ``auger.session`` (annotations and function bodies included), as ``file:line:
    what``. The SQL layer is given the statement's context it defines itself
    (``auger.sql.context``), never the session that builds it."""
    found: list[tuple[Path, int, str]] = []
    for path in sorted((src / "sql").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        module = f"auger.{_module_name(path, src)}"
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                targets = _targets(node, module, path.stem == "__init__")
                if any(t == "auger.session" or t.startswith("auger.session.") for t in targets):
                    found.append((path, node.lineno, "imports auger.session"))
        for number, line in enumerate(text.splitlines(), 1):
            if _USER_SESSION.search(line):
                found.append((path, number, "names UserSession"))
    return [
        f"{path.relative_to(src.parent)}:{line}: sql {what}; the SQL layer takes "
        "auger.sql.context.StatementContext, never the session"
        for path, line, what in sorted(found)
    ]


#: The comment that says why an import sits inside a function.
DEFERRED = "# deferred:"


def undeclared_deferred_imports(src: Path) -> list[str]:
    """Each import inside a function (none under ``if TYPE_CHECKING:``) with no
    :data:`DEFERRED` comment on its lines or the line above, as ``file:line: what``."""
    found: list[str] = []
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node, in_function in _imports(ast.parse(text, str(path))):
            if not in_function:
                continue
            around = lines[max(node.lineno - 2, 0) : node.end_lineno]
            if not any(DEFERRED in line for line in around):
                found.append(
                    f"{path.relative_to(src.parent)}:{node.lineno}: an import inside a function "
                    f"with no '{DEFERRED} <why>' comment: import it at the top of the module "
                    "unless it puts off a heavy or optional dependency"
                )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("src", nargs="?", default=str(Path(__file__).parent.parent / "src/auger"))
    parser.add_argument("--report", action="store_true", help="print only; always exit 0")
    args = parser.parse_args(argv)
    src = Path(args.src)
    imports = collect(src)
    bad = violations(imports)
    for i in bad:
        where = " (inside a function)" if i.in_function else ""
        print(f"{i.path.relative_to(src.parent)}:{i.line}: {i.importer} -> {i.imported}{where}")
    groups = cycles(imports)
    for group in groups:
        print("cycle between: " + ", ".join(group))
    loops = module_cycles(collect_modules(src))
    for loop in loops:
        print(f"module cycle: {' -> '.join([loop[0].importer] + [i.imported for i in loop])}")
        for i in loop:
            where = " (inside a function)" if i.in_function else ""
            print(f"  {i.path.relative_to(src.parent)}:{i.line}: imports {i.imported}{where}")
    undeclared = undeclared_deferred_imports(src)
    for line in undeclared:
        print(line)
    pairs = sorted({(i.importer, i.imported) for i in bad})
    print(
        f"{len(bad)} imports of a higher layer ({sum(i.in_function for i in bad)} inside "
        f"functions) in {len(pairs)} package pairs; {len(groups)} cycles; "
        f"{len(loops)} module cycles"
    )
    session_uses = session_in_sql(src)
    for use in session_uses:
        print(use)
    failed = bad or groups or loops or session_uses or undeclared
    return 0 if args.report or not failed else 1


if __name__ == "__main__":
    sys.exit(main())
