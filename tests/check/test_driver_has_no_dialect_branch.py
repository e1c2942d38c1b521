"""Issue 44 item 2: ``sessionspec/check`` is a driver with no dialect branch.  Dialect differences are overlays in
the model (``model/compaction/dialect.py``, ``trigger_points.point_rules``, ``message_shape.message_shape``...);
the only module of the driver that compares a dialect is the reader that detects it and migrates a D08 log's
events as it reads them (``log_pass.py``: the guess from the markers, DIA-5's seed end, DIA-13's migration).

A dialect comparison is any comparison with ``A55``/``D08`` (``is``, ``==``, ``in``...), a ``match`` on a dialect,
or a ``case`` pattern naming one."""

from __future__ import annotations

import ast
from pathlib import Path

import sessionspec.check

CHECK = Path(sessionspec.check.__file__).parent
READER = "log_pass.py"
_NAMES = frozenset({"A55", "D08"})


def _names_a_dialect(node: ast.AST) -> bool:
    """``A55``, ``D08`` or ``Dialect.A55``/``Dialect.D08`` (the constants of sessionspec.fast.constants or the enum)."""
    if isinstance(node, ast.Name):
        return node.id in _NAMES
    return isinstance(node, ast.Attribute) and node.attr in _NAMES


def dialect_comparisons(source: str) -> list[int]:
    """The lines of ``source`` that compare a dialect."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if _compares_a_dialect(node)})


def _compares_a_dialect(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare):
        return any(_names_a_dialect(side) for side in (node.left, *node.comparators))
    if isinstance(node, ast.Match):
        return "dialect" in ast.unparse(node.subject).lower()
    return isinstance(node, ast.MatchValue) and _names_a_dialect(node.value)


def test_the_detector_finds_each_form_of_a_dialect_comparison() -> None:
    """The forms the driver used to branch with (deployment_fold's, event_fields', file_load's) are found; a dialect
    passed on as a value is not a comparison."""
    source = (
        "if self.dialect is A55:\n    pass\n"
        "x = a if dialect is not D08 else b\n"
        "y = kind == ('step/end' if self.dialect == Dialect.A55 else 'step/start')\n"
        "match self.dialect:\n    case _:\n        pass\n"
        "match kind:\n    case Dialect.D08:\n        pass\n"
        "run(events, A55, 0)\n"
        "DIALECTS = frozenset({D08})\n"
    )
    assert dialect_comparisons(source) == [1, 3, 4, 5, 9]


def test_the_reader_is_the_one_module_of_the_driver_that_compares_a_dialect() -> None:
    found = {path.name: dialect_comparisons(path.read_text(encoding="utf-8")) for path in sorted(CHECK.glob("*.py"))}
    assert found[READER], "the reader detects the dialect and migrates D08 events: it compares them"
    assert {name: lines for name, lines in found.items() if lines and name != READER} == {}
