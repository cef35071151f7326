"""The package's import graph: no module imports itself back through others, and no private name crosses modules."""

from __future__ import annotations

import ast
from pathlib import Path

import playpen

ROOT = Path(playpen.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> dict[str, list[tuple[str, list[str]]]]:
    """Each playpen module's imports of other playpen modules, anywhere in it: (module, names imported from it)."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    for name, path in modules.items():
        edges = found.setdefault(name, [])
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("playpen"):
                for alias in node.names:  # `from playpen.x import y` where y is a module counts as importing it
                    target = f"{node.module}.{alias.name}"
                    edges.append((target, []) if target in modules else (node.module, [alias.name]))
            elif isinstance(node, ast.Import):
                edges += [(a.name, []) for a in node.names if a.name.startswith("playpen")]
    return found


def test_no_module_imports_itself_back():
    graph = {m: {t for t, _ in edges if t != m and t in imports_}
             for imports_ in [imports()] for m, edges in imports_.items()}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(node: str, path: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend(path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt])
                return True
            if nxt not in state and visit(nxt, path + [node]):
                return True
        state[node] = 2
        return False

    assert not any(visit(m, []) for m in sorted(graph) if m not in state), " -> ".join(cycle)


def test_no_private_name_is_imported_from_another_module():
    private = [f"{m} imports {n} from {t}" for m, edges in imports().items() for t, names in edges
               for n in names if n.startswith("_") and not n.startswith("__")]
    assert not private, private
