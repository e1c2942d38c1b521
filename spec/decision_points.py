"""The decisions of the model, named from its code (issue 43): one walk of model/'s syntax trees.

A *decision* is a place where the model's code chooses, and its *outcomes* are what it can choose:

- ``branch``: the test of an ``if``/``while``/conditional expression/comprehension filter, and any other
  comparison computed as a value (``true``, ``false``);
- ``condition``: each operand of ``and``/``or`` (condition coverage; ``true``, ``false``);
- ``compare``: each ordering comparison ``<``, ``<=``, ``>``, ``>=`` (a chain is one per pair) and the two
  values of ``min``/``max``, at its boundary: ``below``, ``equal``, ``above`` (left against right);
- ``cases``: a ``match`` statement: one outcome per ``case`` (a case that only calls ``assert_never`` is
  the type checker's, not an outcome);
- ``loop``: a ``for`` statement runs its body ``none`` or ``some`` of the times;
- ``handler``: a ``try`` statement: one outcome per ``except`` clause;
- ``order``: a FIFO/LIFO take (``.pop(0)``, ``.pop()``), ``reversed``, ``sorted``, ``min``/``max`` of one
  collection: ``single`` (at most one item: the order is not observable) or ``several``;
- ``merge``: ``.update(...)`` (key precedence): ``disjoint`` or ``overlap`` (a key of the update is there);
- ``rounding``: ``math.floor``/``math.ceil``/``round``/``//``: ``exact`` or ``rounded``.

An ``assert`` is not a decision (it fails only on a bug).  The walk skips model/compaction/contracts.py
(what the ``post:`` contracts state, evaluated by CrossHair and the tests, not by a rule) and
model/rules.py (the link registry).  A decision's id is ``module:function: text`` (``#2``... when the
same text recurs in one function), so it survives edits elsewhere in the file.

:func:`instrumented_module` returns, with the decisions, the module's tree rewritten so each decision
reports its outcome to ``__decision_probe__`` (spec/decision_probe.py installs it); the rewrite keeps
every node's position, and every value: the probe returns what the original expression would.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Final, final

import sessionspec.model as model_package

MODEL_DIR: Final = Path(model_package.__file__).resolve().parent
SKIPPED: Final = frozenset({"compaction/contracts.py", "rules.py", "__init__.py"})
PROBE: Final = "__decision_probe__"


class Kind(Enum):
    BRANCH = "branch"
    CONDITION = "condition"
    COMPARE = "compare"
    CASES = "cases"
    LOOP = "loop"
    HANDLER = "handler"
    ORDER = "order"
    MERGE = "merge"
    ROUNDING = "rounding"


OUTCOMES: Final = {Kind.BRANCH: ("true", "false"), Kind.CONDITION: ("true", "false"),
                   Kind.COMPARE: ("below", "equal", "above"), Kind.LOOP: ("none", "some"),
                   Kind.ORDER: ("single", "several"), Kind.MERGE: ("disjoint", "overlap"),
                   Kind.ROUNDING: ("exact", "rounded")}
ORDERING: Final = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
ROUNDERS: Final = frozenset({"floor", "ceil", "round"})


@final
@dataclass(frozen=True, slots=True)
class Decision:
    """One decision: where (``module`` under model/, dotted; ``function``, its qualified name; ``line``),
    what (``kind``, ``text``) and its ``outcomes``."""

    id: str
    module: str
    function: str
    line: int
    kind: Kind
    text: str
    outcomes: tuple[str, ...]

    def outcome_ids(self) -> tuple[str, ...]:
        return tuple(outcome_id(self.id, o) for o in self.outcomes)


def outcome_id(decision_id: str, outcome: str) -> str:
    return f"{decision_id} => {outcome}"


def module_files() -> Iterator[tuple[str, Path]]:
    """(dotted module under model/, path) of every module the walk reads, in path order."""
    for path in sorted(MODEL_DIR.rglob("*.py")):
        relative = path.relative_to(MODEL_DIR).as_posix()
        if relative in SKIPPED or relative.endswith("/__init__.py") or "__pycache__" in relative:
            continue
        yield relative.removesuffix(".py").replace("/", "."), path


def _text(node: ast.AST) -> str:
    return " ".join(ast.unparse(node).split())


def _probe(method: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(id=PROBE, ctx=ast.Load()), attr=method, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _is_ordering(node: ast.expr) -> bool:
    return isinstance(node, ast.Compare) and any(isinstance(op, ORDERING) for op in node.ops)


def _only_assert_never(body: list[ast.stmt]) -> bool:
    return (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call)
            and isinstance(body[0].value.func, ast.Name) and body[0].value.func.id == "assert_never")


class _Instrument(ast.NodeTransformer):
    """Rewrites one module, collecting its decisions; outcome k of the module is ``first + k``."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.decisions: list[Decision] = []
        self.scope: list[str] = []
        self.seen: dict[str, int] = {}
        self.temps = 0

    # ------------------------------------------------------------------ bookkeeping

    def _new(self, kind: Kind, node: ast.AST, text: str, outcomes: tuple[str, ...] | None = None) -> int | None:
        """Register a decision inside a function; the index of its first outcome (None at module level)."""
        if not self.scope:
            return None
        function = ".".join(self.scope)
        base = f"{self.module}:{function}: {text}"
        count = self.seen.get(base, 0) + 1
        self.seen[base] = count
        first = sum(len(d.outcomes) for d in self.decisions)
        self.decisions.append(Decision(id=base if count == 1 else f"{base} #{count}", module=self.module,
                                       function=function, line=getattr(node, "lineno", 0), kind=kind, text=text,
                                       outcomes=outcomes if outcomes is not None else OUTCOMES[kind]))
        return first

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> ast.AST:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.scope.append("<lambda>")
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        return node  # not a decision: an assertion fails only on a bug

    # ------------------------------------------------------------------ tests and conditions

    def _test(self, test: ast.expr) -> ast.expr:
        """The test of a branch: a decision of its own unless it is one ordering comparison (``compare``
        names its outcomes, finer); the operands of an ``and``/``or`` are conditions besides."""
        bare = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
        text = _text(test)
        new = self.visit(test)
        assert isinstance(new, ast.expr)
        if (isinstance(bare, ast.Compare) and len(bare.ops) == 1 and _is_ordering(bare)) or isinstance(bare, ast.Constant):
            return new  # a constant test (``while True``) decides nothing
        return self._wrap_branch(Kind.BRANCH, test, text, new)

    def _wrap_branch(self, kind: Kind, original: ast.expr, text: str, new: ast.expr) -> ast.expr:
        first = self._new(kind, original, text)
        if first is None:
            return new
        return ast.copy_location(_probe("truth", ast.Constant(first), new), original)

    def visit_If(self, node: ast.If) -> ast.AST:
        node.test = self._test(node.test)
        node.body = [self.visit(s) for s in node.body]
        node.orelse = [self.visit(s) for s in node.orelse]
        return node

    def visit_While(self, node: ast.While) -> ast.AST:
        return self.visit_If(node)  # type: ignore[arg-type]

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        node.test = self._test(node.test)
        node.body = self.visit(node.body)
        node.orelse = self.visit(node.orelse)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node.iter = self.visit(node.iter)
        node.ifs = [self._test(t) for t in node.ifs]
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        values: list[ast.expr] = []
        for value in node.values:
            if isinstance(value, ast.BoolOp) or (isinstance(value, ast.Compare) and _is_ordering(value) and len(value.ops) == 1):
                values.append(self.visit(value))
            else:
                text = _text(value)
                values.append(self._wrap_branch(Kind.CONDITION, value, text, self.visit(value)))
        node.values = values
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        """Each pair of a comparison: an ordering pair is a ``compare`` decision; any other pair is a value
        (its branch or condition is registered by the caller, or here when it stands alone in a chain)."""
        originals = [node.left, *node.comparators]
        texts = [_text(ast.Compare(left=originals[i], ops=[op], comparators=[originals[i + 1]])) for i, op in enumerate(node.ops)]
        left = self.visit(node.left)
        comparators = [self.visit(c) for c in node.comparators]
        if not any(isinstance(op, ORDERING) for op in node.ops):
            node.left, node.comparators = left, comparators
            return node
        parts: list[ast.expr] = []
        operands = [left, *comparators]
        for index, op in enumerate(node.ops):
            a, b = operands[index], operands[index + 1]
            if index > 0:
                a = ast.Name(id=f"__decision_t{self.temps}", ctx=ast.Load())
            if index < len(node.ops) - 1:
                self.temps += 1
                b = ast.NamedExpr(target=ast.Name(id=f"__decision_t{self.temps}", ctx=ast.Store()), value=b)
            if isinstance(op, ORDERING):
                first = self._new(Kind.COMPARE, node, texts[index])
                plain = ast.Compare(left=a, ops=[op], comparators=[b])
                parts.append(plain if first is None else
                             _probe("compare", ast.Constant(first), a, b, ast.Constant(type(op).__name__)))
            else:
                parts.append(ast.Compare(left=a, ops=[op], comparators=[b]))
        result: ast.expr = parts[0] if len(parts) == 1 else ast.BoolOp(op=ast.And(), values=parts)
        return ast.copy_location(result, node)

    # ------------------------------------------------------------------ statements

    def visit_Match(self, node: ast.Match) -> ast.AST:
        live = [c for c in node.cases if not _only_assert_never(c.body)]
        first = self._new(Kind.CASES, node, f"match {_text(node.subject)}",
                          tuple(f"case {_text(c.pattern)}" + (f" if {_text(c.guard)}" if c.guard else "") for c in live))
        node.subject = self.visit(node.subject)
        for case in node.cases:
            if case.guard is not None:
                case.guard = self._test(case.guard)
            case.body = [self.visit(s) for s in case.body]
            if first is not None and case in live:
                hit = ast.Expr(_probe("hit", ast.Constant(first + live.index(case))))
                case.body.insert(0, ast.copy_location(hit, case.body[0]))
        return node

    def visit_For(self, node: ast.For) -> ast.AST:
        first = self._new(Kind.LOOP, node, f"for {_text(node.target)} in {_text(node.iter)}")
        node.iter = self.visit(node.iter)
        if first is not None:
            node.iter = ast.copy_location(_probe("loop", ast.Constant(first), node.iter), node.iter)
        node.body = [self.visit(s) for s in node.body]
        node.orelse = [self.visit(s) for s in node.orelse]
        return node

    def visit_Try(self, node: ast.Try) -> ast.AST:
        if not node.handlers:
            self.generic_visit(node)
            return node
        caught = tuple(f"except {_text(h.type) if h.type else 'everything'}" for h in node.handlers)
        first = self._new(Kind.HANDLER, node, "try: " + "; ".join(caught), caught)
        self.generic_visit(node)
        if first is not None:
            for index, handler in enumerate(node.handlers):
                handler.body.insert(0, ast.copy_location(ast.Expr(_probe("hit", ast.Constant(first + index))), handler.body[0]))
        return node

    # ------------------------------------------------------------------ orders, merges, roundings

    def visit_Call(self, node: ast.Call) -> ast.AST:
        text = _text(node)
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "pop" and not node.keywords and (
                not node.args or (isinstance(node.args[0], ast.Constant) and node.args[0].value == 0)):
            first = self._new(Kind.ORDER, node, text)
            if first is not None:
                return ast.copy_location(_probe("pop", ast.Constant(first), func.value, *node.args), node)
        elif isinstance(func, ast.Attribute) and func.attr == "update" and len(node.args) == 1 and not node.keywords:
            first = self._new(Kind.MERGE, node, text)
            if first is not None:
                return ast.copy_location(_probe("update", ast.Constant(first), func.value, node.args[0]), node)
        elif isinstance(func, ast.Name) and ((func.id in ("reversed", "sorted") and node.args)
                                             or (func.id in ("min", "max") and len(node.args) == 1)):
            first = self._new(Kind.ORDER, node, text)
            if first is not None:
                node.args[0] = _probe("items", ast.Constant(first), node.args[0])
        elif isinstance(func, ast.Name) and func.id in ("min", "max") and len(node.args) >= 2 and not node.keywords:
            first = self._new(Kind.COMPARE, node, text)
            if first is not None:
                return ast.copy_location(_probe("extreme", ast.Constant(first), func, *node.args), node)
        elif (isinstance(func, ast.Attribute) and func.attr in ROUNDERS and isinstance(func.value, ast.Name)
              and func.value.id == "math") or (isinstance(func, ast.Name) and func.id == "round" and len(node.args) == 1):
            first = self._new(Kind.ROUNDING, node, text)
            if first is not None and len(node.args) == 1:
                return ast.copy_location(_probe("rounded", ast.Constant(first), func, node.args[0]), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        text = _text(node)
        self.generic_visit(node)
        if isinstance(node.op, ast.FloorDiv):
            first = self._new(Kind.ROUNDING, node, text)
            if first is not None:
                return ast.copy_location(_probe("floordiv", ast.Constant(first), node.left, node.right), node)
        return node


def _standalone_comparisons(tree: ast.Module) -> None:
    """Mark comparisons computed as values (not a test, not an operand): they become ``branch`` decisions."""
    tested: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.While | ast.IfExp):
            tested.add(id(node.test))
            if isinstance(node.test, ast.UnaryOp):
                tested.add(id(node.test.operand))
        elif isinstance(node, ast.comprehension):
            tested.update(id(t) for t in node.ifs)
        elif isinstance(node, ast.BoolOp):
            tested.update(id(v) for v in node.values)
        elif isinstance(node, ast.match_case) and node.guard is not None:
            tested.add(id(node.guard))
        elif isinstance(node, ast.Assert):
            tested.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and id(node) not in tested and not _is_ordering(node):
            node._decision_value = True  # type: ignore[attr-defined]


class _InstrumentValues(_Instrument):
    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        if not getattr(node, "_decision_value", False):
            return super().visit_Compare(node)
        text = _text(node)
        new = super().visit_Compare(node)
        assert isinstance(new, ast.expr)
        return self._wrap_branch(Kind.BRANCH, node, text, new)


@cache
def instrumented_module(module: str) -> tuple[tuple[Decision, ...], ast.Module]:
    """The decisions of ``module`` (dotted, under model/) and its tree rewritten to report them."""
    path = MODEL_DIR / (module.replace(".", "/") + ".py")
    return instrument_source(module, path.read_text(encoding="utf-8"))


def instrument_source(module: str, source: str) -> tuple[tuple[Decision, ...], ast.Module]:
    """The decisions of a module's ``source`` and its tree rewritten to report them."""
    tree = ast.parse(source)
    _standalone_comparisons(tree)
    walker = _InstrumentValues(module)
    new = walker.visit(tree)
    assert isinstance(new, ast.Module)
    return tuple(walker.decisions), ast.fix_missing_locations(new)


@cache
def derive_decisions() -> tuple[Decision, ...]:
    """Every decision of model/, module by module in path order, each in source order."""
    return tuple(d for module, _ in module_files() for d in instrumented_module(module)[0])
