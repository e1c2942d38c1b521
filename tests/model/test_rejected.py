"""The rejection value (model/rejected.py, RULES §0.5): compared by rule and kind, never by reason."""

from __future__ import annotations

import pytest

from sessionspec.model.rejected import FailureKind, Rejected


def test_rejections_compare_by_rule_and_kind_and_print_their_seq() -> None:
    a = Rejected(rule="SURF-5", reason="one", seq=3)
    assert a.same_kind(Rejected(rule="SURF-5", reason="another", seq=9))
    assert not a.same_kind(Rejected(rule="SURF-6", reason="one", seq=3))
    assert not a.same_kind(Rejected(rule="SURF-5", reason="one", seq=3, kind=FailureKind.LIMIT))
    assert str(a) == "SURF-5 seq 3: one"
    assert str(Rejected(rule="FMT-1", reason="empty file")) == "FMT-1: empty file"
    assert str(Rejected(rule="FMT-1", reason="x", seq=0)) == "FMT-1 seq 0: x"


def test_a_rejection_must_say_why() -> None:
    # A finding in a report names its rule and says why (FMT-7's findings, docs/check.md): a rejection made without
    # a reason is the model's own bug, stopped where it is made, not printed as "None" in a report.
    for reason in ("", None):
        with pytest.raises(AssertionError, match="CMP-19"):
            Rejected(rule="CMP-19", reason=reason, seq=4)  # type: ignore[arg-type]
    assert Rejected(rule="CMP-19", reason="x").reason == "x"
