"""What a session log alone shows about its own correctness (FMT-7, FMT-9, LOG-13).

:func:`audit_log` runs every log-alone check of the checker pipeline (FMT-7)
over an event list that is already decoded (rows expanded) and, in D08 mode,
migrated (DIA-13).  It returns *all* findings it can establish, not only the
first: each check is independent, so one corruption may show under several
rules.  Checks that depend on a valid surface (derivation, request points,
compaction) are left out when the surface fold fails, so they never report
knock-on noise.

Every check that walks the log is a fold (:mod:`sessionspec.check.folds`, issue 26), listed
in :mod:`sessionspec.check.fold_set`, and :func:`audit_events` is their one loop over the
events, the surface folded once per event and its plan handed to each fold:

* seed/load shape (LOG-8 order: LEG-2, LEG-3, LEG-4, HDR-8/LEG-5/LEG-6, LOG-11; here);
* the surface fold (SURF-*, LOG-1; the loop itself);
* turn/step nesting and tool pairing as the session invariant companion
  vetoes them (LOG-13; ``nesting_audit``);
* the header-reason audit (FMT-9 a..g, PFX-15; ``header_audit``);
* request points (FMT-8, INV-7; ``request_audit``);
* the compaction/prune audit (``compaction_audit``);
* the D08 message shapes and retries (DIA-10, DIA-7; ``d08_audit``);
* the writers' own rules (issue 17): data shapes (``shape_audit``), the loop
  (``loop_audit``), provenance (``provenance_audit``), crash repair
  (``repair_audit``), compaction triggers and ranges (``compaction_rules_audit``,
  ``retention_audit``);
* the quirks, placeholder notes and pre-A55 designs a log shows (``observations``).

The rule-by-rule table is ``audit_table``.

Placeholders (FMT-6, LEG-8) are opaque: headers holding one are compared by
string identity, never through HDR-4 (Q-15).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import final

from sessionspec.check.declines import FileNotDecided, in_log_order
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.folds import FoldOutcome
from sessionspec.check.observations import placeholder_notes as placeholder_notes
from sessionspec.check.observations import pre_a55_designs as pre_a55_designs
from sessionspec.check.observations import quirk_observations as quirk_observations
from sessionspec.check.writers import Attribution
from sessionspec.check.writers_audit import TurnWritersAudit
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """All findings of one log, plus notes (never verdict-changing) and the
    quirks of the real code the log shows (§17: notes by default, findings
    under ``--strict-quirks``)."""

    findings: tuple[Rejected, ...]
    notes: tuple[str, ...] = ()
    quirks: tuple[Rejected, ...] = ()
    # Why the log is outside what the model decides (LEG-7): the verdict is
    # ``unknown`` with this reason unless a finding makes it ``invalid``.
    outside: tuple[str, ...] = ()
    # FMT-7 Writers: the writer of each turn (sessionspec.check.writers_audit).
    writers: Attribution = Attribution(turns=(), api_steps=frozenset())
    # The rules the folds declined to decide in this log, and why (sessionspec/check/undecided.py).
    undecided: tuple[FileNotDecided, ...] = ()


def _sorted(findings: Sequence[Rejected]) -> tuple[Rejected, ...]:
    """Deterministic order: by seq (file-level first), then rule, then reason; duplicates dropped."""
    unique = {(f.seq, f.rule, f.reason, f.kind.value): f for f in findings}
    return tuple(unique[k] for k in sorted(unique, key=lambda k: (-1 if k[0] is None else k[0], k[1], k[2], k[3])))


# --------------------------------------------------------------------------- all


def audit_events(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0, logged: Sequence[Event] | None = None) -> Audit:
    """FMT-7 (after decoding/migration): load shapes, D08 message shapes and
    retries (DIA-10, DIA-7), surface, nesting, header reasons, request
    points, compaction, the writer of each turn (on ``logged``, the events before the
    D08 migration; ``events`` when not given) — every finding, in a stable order;
    pre-A55 designs (LEG-7) as the reason the log is outside the model."""
    # Issue 26: the audits are folds run in one loop over the events, which folds the surface
    # once (DIA-11's rejection is fold_surface's) and hands each event's plan to them
    # (sessionspec.check.folds); the folds that need the surface stop at its rejection.
    return audit_outcome(run_folds(events, dialect, first_live_seq, registered_folds(), logged))


def audit_outcome(outcome: FoldOutcome) -> Audit:
    """The :class:`Audit` of what the registered folds found in one loop (:func:`audit_events`)."""
    found = outcome.findings
    if outcome.surface_rejected is not None:
        found = [*found, outcome.surface_rejected]
    writers = next(fold.attribution() for fold in outcome.folds if isinstance(fold, TurnWritersAudit))
    return Audit(findings=_sorted(found), notes=tuple(outcome.notes), quirks=_sorted(outcome.quirks), outside=tuple(outcome.outside),
                 writers=writers, undecided=in_log_order(outcome.undecided))


def audit_log(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> tuple[Rejected, ...]:
    """Every log-alone finding of ``events`` (see :func:`audit_events`)."""
    return audit_events(events, dialect, first_live_seq).findings
