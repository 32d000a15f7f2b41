"""The layers of docs/architecture.md, checked on the source: the core knows no app, system or
family; no benchreg module imports another that (directly or not) imports it back, counting
every import (inside functions and under ``if TYPE_CHECKING:`` too); only the loading door's own
modules reach behind its face; the app names no family; at most five functions of the package
run over 60 lines."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "benchreg"
FORBIDDEN_IN_CORE = ("benchreg.app", "benchreg.systems", "benchreg.families")
FAMILY_WORDS = re.compile(r"molp2s|cblue|reaction_mc|retrieval", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Import:
    """One import statement's target: ``module`` plus the names taken from it (``from``)."""

    module: str
    names: tuple[str, ...]  # empty for `import module`
    line: int
    is_from: bool


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE_DIR.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _statements(body: list[ast.stmt], *, nested: bool) -> Iterator[ast.stmt]:
    """Statements of ``body``, descending into blocks (``if TYPE_CHECKING:`` ones included: a
    type-only import still ties two modules together); into function bodies only when
    ``nested``."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and not nested:
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, name, None) or [], nested=nested)
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _statements(handler.body, nested=nested)
        for case in getattr(stmt, "cases", None) or []:
            yield from _statements(case.body, nested=nested)


def imports_of(path: Path, *, nested: bool) -> list[Import]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    importer = module_name(path)
    is_package = path.name == "__init__.py"
    out: list[Import] = []
    for stmt in _statements(tree.body, nested=nested):
        if isinstance(stmt, ast.Import):
            out += [Import(alias.name, (), stmt.lineno, False) for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            module = _absolute(stmt, importer, is_package)
            out.append(Import(module, tuple(a.name for a in stmt.names), stmt.lineno, True))
    return out


def targets(imp: Import, modules: dict[str, Path]) -> set[str]:
    """The benchreg modules an import statement runs: `from pkg import mod` runs pkg.mod when
    that is a module, else pkg itself (implicit parent-package imports are left out)."""
    found: set[str] = set()
    for name in imp.names or ("",):
        full = f"{imp.module}.{name}" if name and name != "*" else imp.module
        if full in modules:
            found.add(full)
        elif imp.module in modules:
            found.add(imp.module)
    return found


def import_graph(*, nested: bool = True) -> dict[str, set[str]]:
    modules = all_modules()
    return {
        name: set().union(*(targets(i, modules) for i in imports_of(path, nested=nested)))
        for name, path in modules.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a closed path [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


# --- the checker checks what it should --------------------------------------------------------


def test_the_package_is_found() -> None:
    modules = all_modules()
    assert {"benchreg", "benchreg.core.task", "benchreg.core.run", "benchreg.app.main"} <= set(
        modules
    )
    assert len(modules) > 50


def test_imports_inside_functions_and_type_checking_blocks_count(tmp_path: Path) -> None:
    source = PACKAGE_DIR / "core" / "registry.py"
    top = {i.module for i in imports_of(source, nested=False)}
    every = {i.module for i in imports_of(source, nested=True)}
    assert "benchreg.core.errors" in top
    assert "importlib.metadata" in every - top  # imported inside _load_group()
    typed = PACKAGE_DIR / "core" / "system.py"  # its Task comes in under `if TYPE_CHECKING:`
    assert "benchreg.core.task" in {i.module for i in imports_of(typed, nested=False)}


def test_find_cycle_reports_the_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# --- the layers -------------------------------------------------------------------------------


def core_files() -> list[Path]:
    return sorted((PACKAGE_DIR / "core").rglob("*.py"))


@pytest.mark.parametrize("path", core_files(), ids=lambda p: str(p.relative_to(PACKAGE_DIR)))
def test_core_imports_no_app_system_family_nor_the_package_face(path: Path) -> None:
    bad = []
    for imp in imports_of(path, nested=True):
        module = imp.module
        layered = any(module == f or module.startswith(f"{f}.") for f in FORBIDDEN_IN_CORE)
        # `import benchreg` or `from benchreg import ...` (even of a subpackage: it runs the
        # package face, which imports the run and everything else)
        face = module == "benchreg"
        if layered or face:
            names = f" ({', '.join(imp.names)})" if imp.names else ""
            bad.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{imp.line}: {module}{names}")
    assert not bad, "core imports outside its layer:\n" + "\n".join(bad)


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


DOOR = "benchreg.core.load"


def test_only_the_door_reaches_behind_its_face() -> None:
    """Everything but the door's own modules imports ``benchreg.core.load`` itself, never one
    of its ``_`` modules."""
    bad = []
    for name, path in all_modules().items():
        if name == DOOR or name.startswith(f"{DOOR}."):
            continue
        for imp in imports_of(path, nested=True):
            private = [imp.module] if imp.module.startswith(f"{DOOR}.") else []
            if imp.module == DOOR:
                private = [n for n in imp.names if n.startswith("_")]
            bad += [f"{path.relative_to(PACKAGE_DIR.parent)}:{imp.line}: {p}" for p in private]
    assert not bad, "behind the loading door's face:\n" + "\n".join(bad)


LONG_FUNCTION_LINES = 60
LONG_FUNCTIONS_ALLOWED = 5


def test_at_most_five_functions_run_over_60_lines() -> None:
    long = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LONG_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{node.lineno} {node.name}")
    assert len(long) <= LONG_FUNCTIONS_ALLOWED, "functions over 60 lines:\n" + "\n".join(long)


def test_app_names_no_family() -> None:
    hits = []
    for path in sorted((PACKAGE_DIR / "app").rglob("*")):
        if not path.is_file() or path.suffix == ".pyc":
            continue
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            match = FAMILY_WORDS.search(line)
            if match:
                hits.append(f"{path.relative_to(PACKAGE_DIR.parent)}:{number}: {match.group()}")
    assert not hits, "the app names families:\n" + "\n".join(hits)
