"""The folds ``check`` runs over every log: one list, named here (issue 44: no registration by import).

A fold is a driver of the model's definitions over the log (``@decides`` in ``model/``; no rule is decided by
checker code).  Each runs once per log, in the order of
their module and name (the order the findings were always reported in); ``tests/check/test_one_pass.py``
checks every fold class of the checker is here.
"""

from __future__ import annotations

from typing import Final

from sessionspec.check.compaction_audit import CompactionFold
from sessionspec.check.compaction_rules_audit import CompactionRulesAudit
from sessionspec.check.d08_audit import D08MessageShapeAudit, RetryAttemptAudit
from sessionspec.check.folds import AuditFold
from sessionspec.check.header_audit import HeaderReasonAudit
from sessionspec.check.load_shape_audit import LoadShapeAudit
from sessionspec.check.loop_audit import LoopAudit
from sessionspec.check.nesting_audit import NestingAudit
from sessionspec.check.observations import PlaceholderNoteAudit, PreA55DesignAudit, QuirkAudit
from sessionspec.check.provenance_audit import ProvenanceAudit
from sessionspec.check.repair_audit import RepairAudit
from sessionspec.check.request_audit import RequestPointAudit
from sessionspec.check.retention_audit import ZeroRetentionAudit
from sessionspec.check.shape_audit import ShapeAudit
from sessionspec.check.writers_audit import TurnWritersAudit


def _declared_name(fold: type) -> tuple[str, str]:
    # A function on ``type``, not a lambda on ``type[AuditFold]``: mypyc reads ``__module__`` only through the metaclass.
    return fold.__module__, fold.__qualname__


FOLDS: Final[tuple[type[AuditFold], ...]] = tuple(sorted((
    CompactionFold, CompactionRulesAudit, D08MessageShapeAudit, RetryAttemptAudit, HeaderReasonAudit, LoadShapeAudit,
    LoopAudit, NestingAudit, PlaceholderNoteAudit, PreA55DesignAudit, QuirkAudit, ProvenanceAudit, RepairAudit,
    RequestPointAudit, ZeroRetentionAudit, ShapeAudit, TurnWritersAudit,
), key=_declared_name))


def registered_folds() -> list[type[AuditFold]]:
    """Every fold ``check`` runs, in a fixed order (by module and name)."""
    return list(FOLDS)
