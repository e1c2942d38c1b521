"""How a rule is decided in a log, in one word, and what the deployment's facts add (issue 44).

``spec/status.py`` says for each rule whether ``check`` decides it from a log (``Audited``), only with the
deployment's facts (``WithDeployment``), or why not (``Undecidable``, ``NotYet``); this module names the answer
(:func:`decidability`, what ``sessionspec rules`` prints under each rule's ``log`` and ``check`` lists as not
decided) and states what ``check --deployment FILE`` decides of a rule beyond the log alone.
"""

from __future__ import annotations

from typing import Final

from sessionspec.spec.status import REQUEST_ONLY_REASONS, STATUS, Audited, NotYet, Undecidable, WithDeployment

# Issue 44, item 3: what ``check --deployment FILE`` decides of a rule beyond the log alone (the compaction and
# prune configuration and the models' context windows; ``model.compaction.obligation``).  Without a deployment
# these parts are not decided, and ``check`` lists the rules (``not_decided``).  ``tests/spec/test_rule_status.py``
# holds the keys equal to the rules the deployment's definitions decide.
DECIDED_WITH_DEPLOYMENT: Final[dict[str, str]] = {
    "CMP-6": "whether compaction had to run at an A55 post-step (the measurement over the threshold, a prune or a range due)",
    "CMP-7": "whether the overflow recovery had to run after a failed step whose logged failure is CONTEXT_WINDOW_EXCEEDED (auto, maxOverflowRetries, a prune or a range due), or ran beyond them (A55)",
    "CMP-8": "whether compaction ran below its threshold, with no range, or summarized before its prune; and whether another transaction had to follow each of its writes (P-CMP-12)",
    "CMP-12": "that the range of a bracket a pressure point wrote is the one the retention walk selects at the policy's retainTokens (alone: one some retainTokens selects)",
    "CMP-9": "that an overflow recovery runs the prune pass due before its summary",
    "DIA-6": "whether compaction had to run at a D08 pre-step (the measurement over the threshold, a prune or a range due)",
    "DIA-7": "whether the D08 overflow recovery had to run inside the step after a failed attempt's CONTEXT_WINDOW_EXCEEDED finish (auto, the recoveries that retried below maxOverflowRetries, a prune or a range due), or ran beyond them",
    "PRN-3": "that a pruned content is pruneContent under the configured thresholdChars, headChars and tailChars",
    "PRN-4": "that a prune pass replaced exactly the results the configured threshold prunes",
    "P-CMP-4": "the shortest retained tail reaching the policy's retainTokens, rounded head-ward to a balanced cut (findings name CMP-12)",
    "P-CMP-12": "the number of region transactions at a pressure point: CMP-8's loop under the policy's threshold and compactionRetries (findings name CMP-8)",
    "P-CMP-9": "pressure gating: no compaction event at a trigger point below the threshold (findings name CMP-8)",
}


def decidability(rule_id: str) -> str:
    """For ``sessionspec rules``: ``log`` (decided from a log alone), ``log+deployment`` (and more with the
    deployment), ``deployment`` (only with it), ``request-only`` (the request, not the log, shows it),
    ``never`` (no log can show it) or ``not-yet``."""
    match STATUS[rule_id].log:
        case Audited():
            return "log+deployment" if rule_id in DECIDED_WITH_DEPLOYMENT else "log"
        case WithDeployment():
            return "deployment"
        case Undecidable(reason=reason):
            return "request-only" if reason in REQUEST_ONLY_REASONS else "never"
        case NotYet():
            return "not-yet"
