"""No import circles in the package (issue 44): a module never needs, however indirectly, a module that needs it.

Every import counts, the ones inside functions too (a lazy import closes a circle as surely as a module-level
one: the checker's 29-module circle was closed by a function that imported the whole checker so that importing
registered its audits).  The graph is read from the sources; a package's ``__init__`` is a node of its own, as
``from package import module`` makes it one.  KNOWN lists circles not yet broken; it is empty and stays so.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[2]
# The package's sources by module name: sessionspec/, and model/ and spec/ under the names they are imported by.
SOURCES: Final = ((ROOT / "sessionspec", "sessionspec"), (ROOT / "model", "sessionspec.model"), (ROOT / "spec", "sessionspec.spec"))
LINKS: Final = ("model", "spec", "_vectors")

# Circles not yet broken, each a frozenset of module names (to leave with the merge of the kit's work on those modules).
KNOWN: Final[frozenset[frozenset[str]]] = frozenset()


def modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for base, prefix in SOURCES:
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if base.name == "sessionspec" and parts[0] in LINKS:
                continue
            found[".".join([prefix, *(part for part in parts if part != "__init__")])] = path
    return found


def import_graph(sources: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in sources}
    for name, path in sources.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            graph[name] |= {target for target in targets if target in sources and target != name}
    return graph


def circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                target = pending.pop()
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, sorted(graph[target])))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_no_import_circle_but_the_known_ones() -> None:
    found = circles(import_graph(modules()))
    assert sorted(map(sorted, found - KNOWN)) == []  # a new circle
    assert sorted(map(sorted, KNOWN - found)) == []  # a broken circle: take it out of KNOWN


def test_the_search_finds_a_circle_through_a_lazy_import(tmp_path: Path) -> None:
    """Control: a function-level import closing a circle is seen, and a chain without one is not."""
    for name, text in (("a", "import b\n"), ("b", "def f():\n    from c import x\n"), ("c", "import a\nx = 1\n"), ("d", "import a\n")):
        (tmp_path / f"{name}.py").write_text(text, encoding="utf-8")
    graph = import_graph({name: tmp_path / f"{name}.py" for name in "abcd"})
    assert circles(graph) == {frozenset({"a", "b", "c"})}
