"""What a session log alone shows about its own correctness (FMT-7, FMT-9, LOG-13).

:func:`audit_log` runs every log-alone check of the checker pipeline (FMT-7)
over an event list that is already decoded (rows expanded) and, in D08 mode,
migrated (DIA-13).  It returns *all* findings it can establish, not only the
first: each check is independent, so one corruption may show under several
rules.  Checks that depend on a valid surface (derivation, request points,
compaction) are left out when the surface fold fails, so they never report
knock-on noise.

Every check that walks the log is a fold (:mod:`sessionspec.check.folds`, issue 26),
registered by its ``@audits`` link, and :func:`audit_events` is their one loop over the
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

from sessionspec.check.audits import audits
from sessionspec.check.fold_loop import run_folds
from sessionspec.check.fold_set import registered_folds
from sessionspec.check.folds import FoldOutcome
from sessionspec.check.observations import placeholder_notes as placeholder_notes
from sessionspec.check.observations import pre_a55_designs as pre_a55_designs
from sessionspec.check.observations import quirk_observations as quirk_observations
from sessionspec.check.writers import Attribution
from sessionspec.check.writers_audit import TurnWritersAudit
from sessionspec.model.codec import serialize_event
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


def _sorted(findings: Sequence[Rejected]) -> tuple[Rejected, ...]:
    """Deterministic order: by seq (file-level first), then rule, then reason; duplicates dropped."""
    unique = {(f.seq, f.rule, f.reason, f.kind.value): f for f in findings}
    return tuple(unique[k] for k in sorted(unique, key=lambda k: (-1 if k[0] is None else k[0], k[1], k[2], k[3])))


# --------------------------------------------------------------------------- LEG-7


@audits("DIA-5")
def check_end_seed(events: Sequence[Event], seed_length: int) -> list[Rejected]:
    """DIA-5 (D08): "The Session constructor MUST append ``session/end-seed {}`` after a seed unless
    the seed already ends with one."  A seed of ``seed_length`` events is followed by, or ends with,
    a ``session/end-seed``.  (The rule's compaction-lock half is in-process: no log shows it.)"""
    if seed_length <= 0 or seed_length > len(events):
        return []  # no seed, or a seed not all read (FMT-11 says which)
    if events[seed_length - 1].type == "session/end-seed":
        return []
    if seed_length < len(events) and events[seed_length].type == "session/end-seed":
        return []
    after = f"{events[seed_length].type} at seq {events[seed_length].seq}" if seed_length < len(events) else "the end of the log"
    return [Rejected(rule="DIA-5", seq=events[seed_length - 1].seq,
                     reason=f"the {seed_length}-event seed is followed by {after}, not session/end-seed")]


# --------------------------------------------------------------------------- requests


# --------------------------------------------------------------------------- FMT-11


@audits("FMT-11", "LOG-15", "P-LOG-7")
def check_fork_seed(child: Sequence[Event], parent: Sequence[Event], seed_length: int) -> list[Rejected]:
    """FMT-11: a fork child's first ``seedLength`` events equal the parent's
    first ``seedLength`` events (byte-equal as logged, time included: the seed
    is a copy); LOG-15: the seed ends at a ``turn/end`` of the source."""
    if seed_length <= 0:
        return []
    if seed_length > len(parent):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the parent's {len(parent)} events")]
    if seed_length > len(child):
        return [Rejected(rule="FMT-11", reason=f"seedLength {seed_length} exceeds the child's {len(child)} events")]
    for index in range(seed_length):
        if serialize_event(child[index]) != serialize_event(parent[index]):
            return [Rejected(rule="FMT-11", seq=child[index].seq, reason=f"seed event {index} differs from the parent's event {index}")]
    if parent[seed_length - 1].type != "turn/end":
        return [Rejected(rule="LOG-15", seq=seed_length - 1, reason=f"the fork boundary is a {parent[seed_length - 1].type}, not a turn/end")]
    return []


# --------------------------------------------------------------------------- §17 quirks


# --------------------------------------------------------------------------- compaction


# --------------------------------------------------------------------------- all


@audits("FMT-7")
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
                 writers=writers)


def audit_log(events: Sequence[Event], dialect: Dialect, first_live_seq: int = 0) -> tuple[Rejected, ...]:
    """Every log-alone finding of ``events`` (see :func:`audit_events`)."""
    return audit_events(events, dialect, first_live_seq).findings
