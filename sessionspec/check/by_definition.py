"""The rules the checker decides by running the model's own definition on the log.

FMT-7's pipeline reads, expands, folds and validates a log with the functions of ``model/``
(through ``model.codec.parse_event_line``, ``model.seed.validate_load``, ``model.surface.fold_surface``
and the fast paths tied to them by properties), so for these rules the definition *is* the audit:
a violation is the ``Rejected`` the definition returns.  Registering the link here, on the function,
keeps one answer to "what checks rule X" (``@audits``; docs/check.md and docs/SPEC.md read it).
"""

from __future__ import annotations

from sessionspec.check.audits import audits
from sessionspec.model.codec import event_from_json, expand_row, parse_session_header
from sessionspec.model.header import check_llm_shape
from sessionspec.model.jsonval import parse_json
from sessionspec.model.migrate import dialect_evidence
from sessionspec.model.surface import (
    check_coverage,
    check_provenance,
    check_seq,
    check_tool_result_rewrite,
    fold_surface,
    plan_surface_event,
    replacement_range,
    surface_op_of,
)

audits("LOG-2", "LOG-3", "LEG-1")(event_from_json)
audits("CHK-5", "CHK-6", "FMT-5", "P-CHK-1")(expand_row)
audits("LOG-17", "LOG-18")(parse_session_header)
audits("HDR-8", "LEG-5", "LEG-6")(check_llm_shape)
audits("LOG-4", "FMT-2", "P-LOG-3")(parse_json)
audits("DIA-1", "FMT-10")(dialect_evidence)
audits("SURF-6")(check_coverage)
audits("SURF-4")(check_provenance)
audits("SURF-7", "P-SURF-4")(check_tool_result_rewrite)
audits("DIA-11", "P-SURF-2")(fold_surface)
audits("SURF-9", "CHK-8", "LEG-10", "P-LOG-1")(plan_surface_event)
audits("LOG-1")(check_seq)
audits("SURF-5")(replacement_range)
audits("SURF-2", "SURF-3", "P-SURF-1")(surface_op_of)
