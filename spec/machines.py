"""Stateful Hypothesis machines over the loop model (RULES §16.2).

:func:`loop_machine` builds a ``RuleBasedStateMachine`` that drives
:func:`model.loop.run_turn` through turns, contributor edits, system/tool
changes, cancel/dispose at every window, throwing contributors, tool rounds,
request errors with retry, resumes (new instances) and forks, and checks after
every step the invariants of ``spec/loop_properties.py``:

- RECONSTRUCT  P-INV-1/2: every request equals its rebuild from the log;
- FREEZE       P-PFX-1: one composition per instance, identical prefix, no
               prefix-only change header, contributor mutation never leaks;
- DISCARD      P-PFX-6: an interrupted composition leaves nothing behind;
- CACHE        P-INV-4: requests of an instance append-extend each other;
- HISTORY      P-PFX-8: the prefix is never history;
- HEADERS      P-LOOP-1 and P-LOOP-4/P-LOOP-7 shape checks;
- DISPATCH     P-PFX-4: another agent's scoped listeners never contribute.

With compact-basic mounted (an ``initialize`` rule draws a small context window,
with or without the prune service), pressure compaction at post-step, overflow
compaction after a request error (with retry), manual compaction and prunes
happen as the log grows, and the compaction invariants of
``spec/loop_compaction_properties.py`` hold too:

- ENVELOPE     P-CMP-5: no header in a bracket; history ``[checkpoint, retained…]``;
               every later request is ``prefix ++ [checkpoint, …]``;
- PAIRS        P-CMP-3: no compacted range splits a tool call from its result;
- RESUMMARIZE  P-CMP-4: ranges are the surface head, so re-compaction
               re-summarises the previous checkpoint; summarizer input is
               ``prefix ++ shadowed``;
- OVERFLOW     P-CMP-10: out-of-step compaction only after a failed step; retry iff a replace landed;
- PRESSURE     P-CMP-11: in-step compaction after the step's results, before ``step/end``;
- PRUNE        P-PRN-3: prunes inside a turn, content-only.

``under_test`` (an :class:`~spec.machine_checks.UnderTest`) names what a run
checks besides the model: a context installed around each turn (the tests
install a planted variant of ``sessionspec.planted.loop`` there, and
``tests/spec/test_machine_mutants.py`` proves each invariant catches one), the
checker's request finder (P-INV-1 via the checker) and the pressure listener
(an incremental meter in front of compact-basic).  They are passed in, so
spec/ depends on the model alone.

The machine is put together from one module per part: what a run checks
(``spec/machine_checks.py``), what it feeds the loop (``spec/machine_scripts.py``),
its state and turn driver (``spec/machine_state.py``), its rules
(``spec/machine_rules.py``) and its invariants (``spec/machine_invariants.py``).
"""

from __future__ import annotations

from typing import Final

from hypothesis.stateful import RuleBasedStateMachine

from sessionspec.spec.machine_checks import ALL_CHECKS, MODEL_ALONE, Check, UnderTest
from sessionspec.spec.machine_invariants import LoopInvariants
from sessionspec.spec.machine_rules import LoopRules


def loop_machine(under_test: UnderTest = MODEL_ALONE, checks: frozenset[Check] = ALL_CHECKS) -> type[RuleBasedStateMachine]:
    """The loop machine class for what is under test and a set of invariants."""
    name = f"LoopMachine_{under_test.name}"
    machine = type(name, (LoopInvariants, LoopRules), {"under_test": under_test, "checks": checks, "__qualname__": name,
                                                       "__module__": __name__})
    return machine


LoopMachine: Final = loop_machine()
