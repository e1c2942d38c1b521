"""One implementation per rule (issue 14): every fold splices through SURF-8's
one ``splice``, and every reader asks FMT-6's one placeholder token.

The method: plant a *different* behaviour in the one implementation (patched
wherever a module holds a reference to it) and require every consumer to show
it.  A consumer with its own copy of the rule keeps the old behaviour and
fails here, named by the parameter.  The unpatched run pins the real
behaviour, reasoned from the rules, so neither half passes vacuously.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from sessionspec import model
from sessionspec.check.audit import placeholder_notes
from sessionspec.check.compaction_audit import CompactionAudit, audit_compactions
from sessionspec.fast.derivation import IncrementalDerivation
from sessionspec.generate import WrittenSurface
from sessionspec.model.compaction import compact_region
from sessionspec.model.derive import derive, derive_nodes
from sessionspec.model.header import EpochHeader, header_eq
from sessionspec.model.header_log import check_header_types
from sessionspec.model.jsonval import JsonObject, freeze, with_values
from sessionspec.model.log import Dialect, Event, log_view, make_event
from sessionspec.model.meter import PricedSurface, measure
from sessionspec.model.rejected import Rejected
from sessionspec.model.surface import SurfacePlan, SurfaceState, fold_surface, step_surface
from tests.support import Log, busy_log, short

ROOT = Path(__file__).resolve().parents[2]


def _replace_log() -> tuple[list[Event], tuple[int, ...]]:
    """Three appends, a replace of the first two by ``r``, one more append.

    SURF-8: the replacement takes the position of ``start``, so the nodes are
    ``[r, u3, u4]`` (not ``[u3, r, u4]``)."""
    log = Log()
    u1, u2, u3 = log.user("one"), log.user("two"), log.user("three")
    r = log.add("user/message", {"content": [{"type": "text", "text": "r"}], "source": {"kind": "user"}},
                op={"op": "replace", "start": u1, "end": u2}, prov=[u1, u2])
    u4 = log.user("four")
    return log.events, (r, u3, u4)


def _tail_splice(nodes: list[object], plan: SurfacePlan, node: object) -> list[object]:
    """A planted SURF-8: the replacement goes to the END of the list instead of the start position."""
    if not plan.is_replace:
        nodes.append(node)
        return []
    removed = nodes[plan.start_idx : plan.end_idx + 1]
    del nodes[plan.start_idx : plan.end_idx + 1]
    nodes.append(node)
    return removed


def _plant(monkeypatch: pytest.MonkeyPatch, original: object, planted: object) -> int:
    """Replace ``original`` by ``planted`` in every loaded module of the project that holds it."""
    patched = 0
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(("model", "sessionspec", "spec")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                monkeypatch.setattr(module, attribute, planted)
                patched += 1
    return patched


def _by_fold_surface(events: Sequence[Event]) -> tuple[int, ...]:
    fold = fold_surface(events)
    assert not isinstance(fold, Rejected), fold
    return fold.state.nodes


def _by_apply_plan(events: Sequence[Event]) -> tuple[int, ...]:
    state = SurfaceState()
    for index, event in enumerate(events):
        stepped = step_surface(state, event, log_view(events, index))
        assert not isinstance(stepped, Rejected), stepped
        state = stepped
    return state.nodes


def _by_meter(events: Sequence[Event]) -> tuple[int, ...]:
    measured = measure(events)
    assert not isinstance(measured, Rejected), measured
    return tuple(n.seq for n in measured.nodes)


def _by_priced_surface(events: Sequence[Event]) -> tuple[int, ...]:
    priced = PricedSurface()
    for index, event in enumerate(events):
        assert priced.fold(event, log_view(events, index)) is None
    return tuple(n.seq for n in priced.nodes)


def _by_compaction_audit(events: Sequence[Event]) -> tuple[int, ...]:
    audit = CompactionAudit()
    assert audit.run(events) == ()
    return tuple(audit.surface.seqs)


def _by_generator(events: Sequence[Event]) -> tuple[int, ...]:
    written = WrittenSurface()
    for event in events:
        written.add(event)
    return tuple(written.seqs)


def _by_derivation(events: Sequence[Event]) -> tuple[int, ...]:
    """The derivation's message order, read back as the node order whose projections it lists."""
    derived = derive(events)
    assert not isinstance(derived, Rejected), derived
    _, (r, u3, u4) = _replace_log()
    for order in ((r, u3, u4), (u3, r, u4)):
        if derive_nodes(order, events) == derived:
            return order
    return ()


def _by_incremental(events: Sequence[Event]) -> tuple[int, ...]:
    derivation = IncrementalDerivation()
    for event in events:
        assert derivation.append(event) is None
    return tuple(derivation.nodes)


FOLDS: dict[str, Callable[[Sequence[Event]], tuple[int, ...]]] = {
    "fold_surface": _by_fold_surface,
    "apply_plan": _by_apply_plan,
    "meter": _by_meter,
    "priced_surface": _by_priced_surface,
    "compaction_audit": _by_compaction_audit,
    "generator": _by_generator,
    "derivation": _by_derivation,
}


@pytest.mark.parametrize("fold", sorted(FOLDS))
def test_SURF_8_every_fold_puts_the_replacement_at_the_start_position(fold: str) -> None:
    events, nodes = _replace_log()
    assert FOLDS[fold](events) == nodes


@pytest.mark.parametrize("fold", sorted(FOLDS))
def test_SURF_8_every_fold_splices_through_the_one_splice(fold: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the planted splice installed, every fold shows the planted order: none has its own copy."""
    events, (r, u3, u4) = _replace_log()
    assert _plant(monkeypatch, model.surface.splice, _tail_splice) >= 1
    assert FOLDS[fold](events) == (u3, r, u4)


def test_SURF_8_incremental_derivation_splices_through_the_one_splice(monkeypatch: pytest.MonkeyPatch) -> None:
    events, (r, u3, u4) = _replace_log()
    assert _by_incremental(events) == (r, u3, u4)
    _plant(monkeypatch, model.surface.splice, _tail_splice)
    assert _by_incremental(events) == (u3, r, u4)


# --------------------------------------------------------------------------- FMT-6: one placeholder token

NEVER = re.compile(r"(?!)")  # matches nothing: with it planted, no reader may still see a placeholder


def _header_event(tools: object, system: str = "sys") -> Event:
    header = {"config": {"provider": "p", "model": "m"}, "system": system, "tools": tools}
    return make_event("request/header", seq=0, time=0, data=freeze({"reason": "initial", "header": header}))


def _scrubbed_bracket() -> tuple[list[Event], int]:
    """A committed compaction over content holding ``{{cwd}}`` whose recorded
    ``shadowedTokenCount`` is off by one: the price of scrubbed text is unknown
    (FMT-6), so the audit must not judge it; without the placeholder it must (CMP-15)."""
    log = busy_log(steps=2)
    log.user("working in {{cwd}}/src " * 20)
    fold = fold_surface(log.events)
    assert not isinstance(fold, Rejected)
    outcome = compact_region(log.events, fold.state.nodes[0], fold.state.nodes[-1], short)
    assert not isinstance(outcome, Rejected) and outcome.result is not None
    start, summary, checkpoint, end = outcome.events
    assert isinstance(summary.data, JsonObject)
    count = summary.data["shadowedTokenCount"]
    assert isinstance(count, int)
    forged = make_event(summary.type, seq=summary.seq, time=summary.time,
                        data=with_values(summary.data, shadowedTokenCount=count - 1))
    return [*log.events, start, forged, checkpoint, end], summary.seq


def _header_types_skip(placeholder: bool) -> bool:
    return check_header_types(_header_event("{{tools}}"), Dialect.A55) == []


def _header_eq_by_identity(placeholder: bool) -> bool:
    a = EpochHeader(config=freeze({"provider": "p", "model": "m", "x": 1}), tools="{{tools}}")
    b = EpochHeader(config=freeze({"provider": "p", "model": "m", "x": 2}), tools="{{tools}}")
    return not header_eq(a, b)  # by identity the configs differ; element-wise (HDR-3) they are equal


def _notes_name_it(placeholder: bool) -> bool:
    # (tools as a whole-field token: a list of plain names is opaque by shape, not by token)
    return placeholder_notes([_header_event("{{tools}}", system="{{system}}")]) != []


def _compaction_audit_skips(placeholder: bool) -> bool:
    events, summary_seq = _scrubbed_bracket()
    return not any(f.rule == "CMP-15" and f.seq == summary_seq for f in audit_compactions(events, Dialect.A55))


READERS: dict[str, Callable[[bool], bool]] = {
    "header types (HDR-1)": _header_types_skip,
    "header equality (Q-15)": _header_eq_by_identity,
    "placeholder notes": _notes_name_it,
    "compaction audit (CMP-15)": _compaction_audit_skips,
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_FMT_6_every_reader_treats_placeholders_as_opaque(reader: str) -> None:
    assert READERS[reader](True)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_FMT_6_every_reader_asks_the_one_placeholder_token(reader: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a token that matches nothing planted, every reader judges the scrubbed values as real ones."""
    monkeypatch.setattr(model.placeholder, "TOKEN", NEVER)
    assert not READERS[reader](False)


def _braces_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and "{{" in n.value]


def test_FMT_6_no_second_placeholder_literal_in_the_model_or_the_checker() -> None:
    """A second placeholder test would spell the token: outside model/placeholder.py no
    string constant of model/ or sessionspec/check/ holds ``{{`` (docstrings excepted)."""
    found: list[str] = []
    for path in sorted([*(ROOT / "model").rglob("*.py"), *(ROOT / "sessionspec" / "check").rglob("*.py")]):
        if path.name == "placeholder.py":
            continue
        docstrings = {ast.get_docstring(n, clean=False) for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                      if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef))}
        found += [f"{path.relative_to(ROOT)}: {v[:40]!r}" for v in _braces_literals(path) if v not in docstrings]
    assert found == []
