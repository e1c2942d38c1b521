"""Which model functions an operation of the adapter protocol can reach (issue 43 item 3), read from the source.

A call graph of the package from its syntax trees, resolved through each module's imports: a function reaches
what its body names (called, passed as a value or stored in a table): a function of its module or one it
imports, a class (its methods, all of them), ``module.name`` through an imported module, and any method of that
name for ``obj.name`` on anything else, of a class some loaded module defines (the modules the operations' import
statements load, transitively); its nested functions and its module's top-level code (tables, defaults) go with it;
and what a loaded module's top-level code calls is reached (it runs at import).  The graph over-approximates (every method called ``take`` is reached where
one ``.take`` is), so a model function it does not reach from an operation is out of that operation's reach: no
vector can take its decisions, which spec/decision_not_by_vectors.py states per group and
tests/spec/test_decision_not_by_vectors.py checks.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parents[1]
ADAPTER: Final = "sessionspec.conformance.adapter"
# The adapter's reference implementation: each operation of ModelSession.handle and its entry point.
OPERATIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "session": (f"{ADAPTER}.session:ModelSession",),  # init, configure, send, resume, dispose, fork, log
    "check": (f"{ADAPTER}.stateless_ops:check_op",), "replay": (f"{ADAPTER}.stateless_ops:replay_op",),
    "pack": (f"{ADAPTER}.stateless_ops:pack_op",), "repair": (f"{ADAPTER}.stateless_ops:repair_op",),
    "append-out-of-band": (f"{ADAPTER}.stateless_ops:append_out_of_band_op",),
    "measure": (f"{ADAPTER}.stateless_ops:measure_op",), "compact": (f"{ADAPTER}.stateless_ops:compact_op",),
}
Key = str  # "dotted.module:Qualified.name"


@dataclass(slots=True)
class _Function:
    names: set[str] = field(default_factory=set)
    attrs: set[tuple[str | None, str]] = field(default_factory=set)  # (base name when a plain name, attribute)
    nested: list[Key] = field(default_factory=list)


@dataclass(slots=True)
class _Module:
    name: str
    imports: dict[str, str] = field(default_factory=dict)  # local name -> "module:name" or "module" (a module)
    loads: set[str] = field(default_factory=set)  # the modules its import statements name (inside functions too)
    defined: dict[str, list[Key]] = field(default_factory=dict)  # top-level name -> its function(s) / class's methods
    top: set[str] = field(default_factory=set)  # names the top-level code mentions (not inside a def)
    top_attrs: set[tuple[str | None, str]] = field(default_factory=set)
    top_calls: _Function = field(default_factory=lambda: _Function())  # what the top-level code calls at import


def _files() -> Iterator[tuple[str, Path]]:
    """Every module of the package; model/ and spec/ through their links (a glob does not follow a link)."""
    roots = [(PACKAGE, "sessionspec")] + [((PACKAGE / linked).resolve(), f"sessionspec.{linked}") for linked in ("model", "spec")]
    for base, package in roots:
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            yield ".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts))), path


def _resolve_from(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _mentions(nodes: Iterable[ast.AST], into: _Function | _Module, stop_at_defs: bool) -> None:
    names = into.names if isinstance(into, _Function) else into.top
    attrs = into.attrs if isinstance(into, _Function) else into.top_attrs
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            attrs.add((node.value.id if isinstance(node.value, ast.Name) else None, node.attr))
        for child in ast.iter_child_nodes(node):
            if stop_at_defs and isinstance(child, _DEFS):
                stack.extend(child.decorator_list)
                continue
            stack.append(child)


_DEFS: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _defs(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The definitions directly inside ``node`` (inside its if/try/with blocks too, not inside another def)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _DEFS):
            yield child
        elif not isinstance(child, ast.expr):
            yield from _defs(child)


@dataclass(slots=True)
class _Reader:
    """The functions of one module, added to the graph's tables."""

    module: _Module
    functions: dict[Key, _Function]
    methods: dict[str, set[Key]]

    def define(self, node: ast.AST, prefix: str, in_class: bool) -> list[Key]:
        """The functions defined in ``node`` (a class's methods, nested ones under their function)."""
        keys: list[Key] = []
        for child in _defs(node):
            qualified = prefix + child.name
            if isinstance(child, ast.ClassDef):
                parts: list[ast.AST] = [n for n in child.body if not isinstance(n, _DEFS)]
                _mentions([*parts, *child.bases, *child.decorator_list], self.module, stop_at_defs=True)
                class_keys = self.define(child, qualified + ".", True)
                if not prefix:
                    self.module.defined[child.name] = class_keys
                keys.extend(class_keys)
                continue
            key = f"{self.module.name}:{qualified}"
            function = self.functions[key] = _Function()
            _mentions([*child.body, *child.decorator_list, child.args, *([child.returns] if child.returns else [])], function,
                      stop_at_defs=True)
            function.nested = self.define(child, qualified + ".", False)
            if in_class:
                self.methods.setdefault(child.name, set()).add(key)
            elif not prefix:
                self.module.defined[child.name] = [key]
            keys.append(key)
        return keys


def _imports(module: _Module, tree: ast.Module, is_package: bool) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve_from(module.name, node, is_package)
            module.loads.add(source)
            for alias in node.names:
                module.imports[alias.asname or alias.name] = f"{source}:{alias.name}"
                module.loads.add(f"{source}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.imports[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
                module.loads.add(alias.name)


@cache
def _graph() -> tuple[dict[str, _Module], dict[Key, _Function], dict[str, frozenset[Key]]]:
    """(module name -> its imports and top level, function -> what its body names, method name -> the methods)."""
    modules: dict[str, _Module] = {}
    functions: dict[Key, _Function] = {}
    methods: dict[str, set[Key]] = {}
    for name, path in _files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = modules[name] = _Module(name)
        _imports(module, tree, path.name == "__init__.py")
        top: list[ast.AST] = [n for n in tree.body if not isinstance(n, _DEFS)]
        top += [d for n in tree.body if isinstance(n, _DEFS) for d in n.decorator_list]
        _mentions(top, module, stop_at_defs=True)
        calls = [n for t in top for n in ast.walk(t) if isinstance(n, ast.Call)]
        _mentions([c.func for c in calls] + [d for n in tree.body if isinstance(n, _DEFS) for d in n.decorator_list], module.top_calls,
                  stop_at_defs=True)
        _Reader(module, functions, methods).define(tree, "", False)
    return modules, functions, {k: frozenset(v) for k, v in methods.items()}


def _named(modules: Mapping[str, _Module], target: str, depth: int = 0) -> list[Key]:
    """``module:name`` -> the functions it names (a class: its methods; a re-export: followed)."""
    module_name, _, name = target.partition(":")
    module = modules.get(module_name)
    if module is None or depth > 8:
        return []
    if name in module.defined:
        return module.defined[name]
    if name in module.imports:
        return _named(modules, module.imports[name], depth + 1)
    return []  # a submodule imported as a name (its attributes resolve through it), or not a function


def _callees(modules: Mapping[str, _Module], methods: Mapping[str, frozenset[Key]], module: _Module,
             names: Iterable[str], attrs: Iterable[tuple[str | None, str]]) -> Iterator[Key]:
    for name in names:
        if name in module.defined:
            yield from module.defined[name]
        elif name in module.imports:
            yield from _named(modules, module.imports[name])
    for base, attr in attrs:
        imported = module.imports.get(base, "") if base is not None else ""
        as_module = imported.replace(":", ".") if imported else ""
        if as_module in modules:
            yield from _named(modules, f"{as_module}:{attr}")
        yield from methods.get(attr, ())


def _loaded(modules: Mapping[str, _Module], entries: set[str]) -> set[str]:
    """The modules a process running ``entries`` can have imported: their import statements' closure, with each
    module's parent packages (a method can be called only on an object of a class some loaded module defines)."""
    out: set[str] = set()
    frontier = list(entries)
    while frontier:
        name = frontier.pop()
        if name in out or name not in modules:
            continue
        out.add(name)
        parts = name.split(".")
        frontier += [".".join(parts[:i]) for i in range(1, len(parts))]
        frontier += sorted(modules[name].loads)
    return out


@cache
def reached(operations: frozenset[str], without: tuple[str, ...] = ()) -> frozenset[Key]:
    """The functions the named operations (keys of OPERATIONS) can reach; ``without``: modules (dotted prefixes)
    whose functions the walk does not enter (what the operations reach other than through them)."""
    modules, functions, methods = _graph()
    frontier = [k for op in operations for entry in OPERATIONS[op] for k in _named(modules, entry)]
    seen = set(frontier)
    loaded = _loaded(modules, {k.split(":", 1)[0] for k in frontier})
    skipped = {k for k in functions if k.split(":", 1)[0].startswith(without) or k.split(":", 1)[0] not in loaded}
    seen |= skipped
    # A loaded module's top-level code runs when it is imported: what it calls is reached (a table it builds is
    # reached with the first of the module's functions, which may read it).
    for name in sorted(loaded):
        module = modules[name]
        frontier += [k for k in _callees(modules, methods, module, module.top_calls.names, module.top_calls.attrs) if k not in seen]
        seen.update(frontier)
    topped: set[str] = set()
    while frontier:
        key = frontier.pop()
        module = modules[key.split(":", 1)[0]]
        function = functions[key]
        found = list(_callees(modules, methods, module, function.names, function.attrs)) + function.nested
        if module.name not in topped:
            topped.add(module.name)
            found += _callees(modules, methods, module, module.top, module.top_attrs)
        for callee in found:
            if callee not in seen:
                seen.add(callee)
                frontier.append(callee)
    return frozenset(seen - skipped)


def model_functions_reached(operations: Iterable[str], without: Iterable[str] = ()) -> frozenset[tuple[str, str]]:
    """The reached functions of model/, as (module under model/, qualified name), as the decision ids name them."""
    prefix = "sessionspec.model."
    keys = reached(frozenset(operations), tuple(sorted(without)))
    return frozenset((m.removeprefix(prefix), f) for m, _, f in (k.partition(":") for k in keys) if m.startswith(prefix))


__all__ = ["OPERATIONS", "model_functions_reached", "reached"]
