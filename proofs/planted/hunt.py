"""Hunt each planted fault with CrossHair, then replay the counterexample concretely.

:data:`PLANTED` lists every planted target with the real function it breaks.
:func:`hunt` runs ``crosshair check`` (with the plugin) on one target until the
first counterexample or the per-condition budget, and measures the wall time.
:func:`replay` evaluates the reported call with plain Python: the planted
function must break one of its postconditions (or a callee's, or raise) on that
input, and the real function must keep every one of its postconditions on the
same input.  A fault counts as found only when both hold.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proofs.limits import REPORT_ENV, Budget

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "proofs" / "plugin.py"


@dataclass(frozen=True, slots=True)
class Planted:
    target: str  # the planted CrossHair target (dotted)
    real: str  # the real function (or real contract) it breaks
    fault: str  # what is broken
    tier: str  # "ci" (hunted in the pytest suite) or "full"
    stock_too: bool = False  # also hunt with stock CrossHair (no strict callee contracts), to compare


PLANTED: tuple[Planted, ...] = (
    Planted("proofs.planted.scenario_faults.cache_interrupted", "proofs.scenarios.discard",
            "loop: cache an interrupted composition (PFX-5)", "ci"),
    Planted("proofs.planted.scenario_faults.recompose_every_turn", "proofs.scenarios.freeze",
            "loop: recompose every turn (PFX-2)", "ci"),
    Planted("proofs.planted.scenario_faults.no_clone", "proofs.scenarios.freeze",
            "loop: prefix not cloned (PFX-6)", "full"),
    Planted("proofs.planted.scenario_faults.ignore_scope", "proofs.scenarios.freeze",
            "loop: other agents' scoped listeners run (PFX-4)", "full"),
    Planted("proofs.planted.scenario_faults.prefix_after_history", "proofs.scenarios.reconstructability",
            "loop: prefix after history (PFX-11)", "ci"),
    Planted("proofs.planted.scenario_faults.snapshot_after_request", "proofs.scenarios.reconstructability",
            "loop: boundary taken after agent/request (LOOP-6)", "full"),
    Planted("proofs.planted.scenario_faults.swap_system_tools", "proofs.scenarios.reconstructability",
            "build_request swaps system/tools in the loop AND the rebuild (found only by strict callee contracts)", "full",
            stock_too=True),
    Planted("proofs.planted.scenario_faults.steering_lifo", "proofs.scenarios.orders",
            "loop: steering drained last-in first-out (LOOP-13, issue 43)", "ci"),
    Planted("proofs.planted.scenario_faults.seed_keys_win", "proofs.scenarios.orders",
            "loop: the request listener cannot override a seed key (LOOP-7, issue 43)", "ci"),
    Planted("proofs.planted.model_faults.composition", "proofs.scenarios.composition",
            "compose keeps a partial result on a throw (PFX-12)", "ci"),
    Planted("proofs.planted.model_faults.request_of_shape", "proofs.scenarios.request_of_shape",
            "build_request drops the prefix on an empty history (WIRE-1)", "ci"),
    Planted("proofs.planted.skeleton_faults.seed_counted", "proofs.skeletons.request_points_agree",
            "request_points ignores first_live_seq (INV-7)", "full"),
    Planted("proofs.planted.skeleton_faults.change_header_ignored", "proofs.skeletons.request_points_agree",
            "request_points ignores a change header (HDR-9)", "ci"),
    Planted("proofs.planted.skeleton_faults.replacement_duplicated", "proofs.skeletons.request_points_agree",
            "the rebuild's derivation duplicates a replacement message (DER)", "full"),
    Planted("proofs.planted.skeleton_faults.prune_uncounted", "proofs.skeletons.surface_folds",
            "fold_surface does not count a prune in replaceGeneration (SURF-10)", "full"),
    # Issue 29: faults of kinds the issue-18 contracts could not see (each keeps the log self-consistent).
    Planted("proofs.planted.whole_faults.reuse_logged_prefix", "proofs.whole.freeze_across_instances",
            "loop: a new instance reuses the logged messagePrefix instead of recomposing (PFX-1, PFX-2)", "full"),
    Planted("proofs.planted.whole_faults.cache_disposed", "proofs.whole.discard_every_kind",
            "loop: a dispose-interrupted composition is cached and counted (PFX-5)", "full"),
    Planted("proofs.planted.whole_faults.deferred_injects_lost", "proofs.whole.injects_durable",
            "loop: composition-time injects lost on a throw or an interruption (PFX-8)", "full"),
    Planted("proofs.planted.model_faults.header_eq", "sessionspec.model.header.header_eq",
            "headerEq compares the whole config (strictly stronger than HDR-3/HDR-4)", "full"),
    Planted("proofs.planted.compaction_faults.cites_short", "proofs.compaction_shapes.compaction_keeps_one_range",
            "compaction: the checkpoint cites one node fewer than it replaces (CMP-22)", "full"),
    Planted("proofs.planted.compaction_faults.split_tail", "proofs.compaction_shapes.compaction_keeps_one_range",
            "compaction: the tool-pair counter is never read, the tail splits a call from its result (CMP-10)", "full"),
    Planted("proofs.planted.compaction_faults.prune_shadowed", "proofs.compaction_shapes.prune_keeps_surface",
            "prune: walks every tool result of the log, prunes one already replaced (PRN-4)", "full"),
)


@dataclass(frozen=True, slots=True)
class Hunt:
    planted: Planted
    found: bool
    seconds: float  # wall time of the CrossHair run (start-up included)
    cpu: float  # CPU time of the CrossHair process (the machine is shared: wall time overstates)
    call: str | None  # the reported call, e.g. "discard(Scenario(...))"
    message: str  # the CrossHair line (or why nothing was found)


_ERROR = re.compile(r"^(?P<file>.+?):(?P<line>\d+): error: (?P<message>.*)$")


def call_text(message: str, name: str) -> str | None:
    """The balanced ``name(...)`` call inside a CrossHair error message."""
    start = message.find(f"when calling {name}(")
    if start < 0:
        return None
    start += len("when calling ")
    depth, quote, i = 0, "", start + len(name)
    while i < len(message):
        ch = message[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return message[start : i + 1]
        i += 1
    return None


def hunt(planted: Planted, budget: float | Budget, *, strict: bool = True) -> Hunt:
    """Run CrossHair on one planted target; the wall time includes CrossHair's start-up (about 1-2 s).

    ``budget``: seconds of CPU per condition (a report), or a :class:`~proofs.limits.Budget` (the tests
    bound the search by iterations, so that the verdict does not depend on the machine)."""
    if not isinstance(budget, Budget):
        budget = Budget(seconds=budget)
    command = [sys.executable, "-m", "crosshair", "check", "--analysis_kind=PEP316",
               *budget.args(), planted.target, "--extra_plugin", str(PLUGIN)]
    env = dict(budget.env(), SESSIONSPEC_CH_STRICT_CALLEES="1" if strict else "0")
    started, cpu_before = time.monotonic(), _children_cpu()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=budget.wall_guard())
        stdout, stderr = done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        stdout, stderr = "", "wall-clock budget exceeded"
    seconds, cpu = time.monotonic() - started, _children_cpu() - cpu_before
    if os.environ.get(REPORT_ENV) == "1":  # calibrating the tests' iteration bounds
        print(planted.target, *(line for line in stderr.splitlines() if line.startswith("proofs: iterations")),
              file=sys.stderr)
    name = planted.target.rpartition(".")[2]
    for line in stdout.splitlines():
        match = _ERROR.match(line)
        if match:
            return Hunt(planted, True, seconds, cpu, call_text(match.group("message"), name), match.group("message"))
    last = (stderr.strip().splitlines() or ["no counterexample"])[-1]
    return Hunt(planted, False, seconds, cpu, None, f"not found within {budget.describe()} ({last[:200]})")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def resolve(dotted: str) -> Callable[..., Any]:
    module, _, name = dotted.rpartition(".")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return fn


def _namespace(fn: Callable[..., Any]) -> dict[str, Any]:
    """Names a CrossHair repr may use: the function's globals plus the model's value types."""
    import proofs.compaction_shapes
    import proofs.scenarios
    import proofs.skeletons
    from sessionspec import model

    names: dict[str, Any] = {}
    for module in (model.jsonval, model.log, model.prefix, model.loop, model.header, model.compaction.records,
                   proofs.scenarios, proofs.skeletons, proofs.compaction_shapes):
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    names.update(fn.__globals__)
    return names


def posts(fn: Callable[..., Any]) -> list[str]:
    doc = inspect.getdoc(fn) or ""
    return [line.split(":", 1)[1].strip() for line in doc.splitlines() if line.strip().startswith("post:")]


def violated(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Run ``fn`` concretely; the first postcondition it breaks (or the exception it raises), else None."""
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - an exception on the input is a counterexample too
        return f"raised {type(exc).__name__}: {exc}"
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    scope = {**fn.__globals__, **bound.arguments, "__return__": result}
    for text in posts(fn):
        if not eval(text, scope):  # noqa: S307 - the contract text of our own code
            return f"post: {text}"
    return None


@contextmanager
def checked_callees() -> Iterator[None]:
    """Replay with strict callee contracts: planted callees check their own postconditions."""
    from proofs.planted import faults

    saved = faults.CHECK_CALLEE_POSTS
    faults.CHECK_CALLEE_POSTS = True
    try:
        yield
    finally:
        faults.CHECK_CALLEE_POSTS = saved


def replay(planted: Planted, call: str) -> tuple[str | None, str | None]:
    """(how the planted function fails on the reported input, how the real one fails: must be None)."""
    fn = resolve(planted.target)
    real = resolve(planted.real)
    parsed = ast.parse(call, mode="eval").body
    assert isinstance(parsed, ast.Call)
    namespace = _namespace(fn)
    args = tuple(eval(compile(ast.Expression(a), "<counterexample>", "eval"), namespace) for a in parsed.args)  # noqa: S307
    kwargs = {k.arg: eval(compile(ast.Expression(k.value), "<counterexample>", "eval"), namespace)  # noqa: S307
              for k in parsed.keywords if k.arg is not None}
    with checked_callees():
        broken = violated(fn, args, kwargs)
    return broken, violated(real, args, kwargs)
