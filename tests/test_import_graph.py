"""No import loop among the package's modules (issue 36): counting imports inside functions
too, not those under `if TYPE_CHECKING:` (annotations only), read with ast (nothing is
imported). A loop makes the import order decide what works."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "roofline"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(name: str, path: Path, modules: dict) -> set[str]:
    """The package modules `name` imports (not its own parents, not the lazy top package)."""
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {  # `if TYPE_CHECKING:` imports serve annotations; nothing runs them
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for inner in ast.walk(node)
    }
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for a in node.names:
                found.add(f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module)
    return {
        m for m in found if m in modules and m != "roofline" and not name.startswith(m + ".")
    } - {name}


def _loops(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    loops = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return loops


def test_the_finder_sees_a_loop():
    # a -> b -> c -> a is one loop; d -> a is none
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _loops(edges) == [["a", "b", "c"]]


def test_no_module_imports_itself_back():
    modules = _modules()
    edges = {name: _imported(name, path, modules) for name, path in modules.items()}
    assert "roofline.exercises.editions" in edges["roofline.exercises.homework"]  # sees imports
    assert _loops(edges) == []
