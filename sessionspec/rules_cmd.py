"""``sessionspec rules``: print the rule registry."""

from __future__ import annotations

import argparse
import json
import sys
from typing import assert_never

from sessionspec.options import add_verbosity, describe
from sessionspec.spec.decidability import DECIDED_WITH_DEPLOYMENT, decidability
from sessionspec.spec.registry import deciders, properties, quirks, registry_digest, rules
from sessionspec.spec.status import (
    STATUS,
    Audited,
    Defined,
    LogStatus,
    ModelStatus,
    NotDefined,
    NotYet,
    OutOfScope,
    Undecidable,
    WithDeployment,
)

HELP = "print the rule registry (ID, normative sentence, implementing functions, what the model and the checker decide)"


EXIT_CODES = ((0, "the registry is printed"), (2, "a usage error: an unknown --area (the areas are listed)"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see="docs/SPEC.md")
    parser.add_argument("--area", metavar="AREA",
                        help="only rules of this area, in any case (e.g. SURF; an unknown area lists the areas; default: every area)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: per rule its ID and normative sentence, the functions that implement it, and what the model "
                             "and the checker decide of it, then the registry digest; json: the registry, rules and quirks "
                             "(docs/schemas/rules.v1.schema.json)")
    parser.add_argument("--properties", action="store_true", help="list the properties instead")
    add_verbosity(parser, quiet="text: one line per rule, its ID and normative sentence",
                  verbose="text: each rule's whole normative text, not its first sentence")


def run(args: argparse.Namespace) -> int:
    if args.properties and args.format == "json":  # docs/schemas/rules.v1.schema.json
        print(json.dumps({"registry": registry_digest(), "properties": [
            {"id": p.id, "checks": list(p.checks), "statement": p.statement} for p in properties()]}, indent=2, sort_keys=True))
        return 0
    if args.properties:
        for p in properties():
            print(f"{p.id}\t{','.join(p.checks)}\t{p.statement}")
        return 0
    if args.area is not None and args.area.upper() not in areas():
        print(f"sessionspec rules: unknown area {args.area!r}; the areas are {', '.join(areas())}", file=sys.stderr)
        return 2
    selected = [r for r in rules() if args.area is None or r.area == args.area.upper()]
    if args.format == "json":
        print(json.dumps({
            "registry": registry_digest(),
            "rules": [{"id": r.id, "area": r.area, "sentence": r.sentence, "implementedBy": list(r.implemented_by),
                       "model": _facet(STATUS[r.id].model), "log": {**_facet(STATUS[r.id].log), **_deciders(r.id)}} for r in selected],
            "quirks": [{"id": q.id, "title": q.title} for q in quirks()],
        }, indent=2, sort_keys=True))
        return 0
    for r in selected:
        if args.quiet:
            print(f"{r.id:8} {r.sentence}")
            continue
        impl = ", ".join(r.implemented_by) or "(not implemented)"
        text = "\n         ".join(r.text.strip().splitlines()) if args.verbose else r.sentence
        print(f"{r.id:8} {text}\n         implemented by: {impl}")
        print(f"         model: {_facet_text(STATUS[r.id].model)}; log: {_facet_text(STATUS[r.id].log)}{_deciders_text(r.id)}")
    print(f"{len(selected)} rules; registry digest {registry_digest()}")
    return 0


def _facet(status: ModelStatus | LogStatus) -> dict[str, str]:
    """One facet of a rule's status (spec/status.py) as JSON: ``{"status": "defined"}`` or with its reason or part."""
    match status:
        case Defined():
            return {"status": "defined"}
        case OutOfScope(reason=reason):
            return {"status": "out-of-scope", "reason": reason}
        case NotDefined(reason=reason):
            return {"status": "not-defined", "reason": reason}
        case Audited(part=part, reported_as=named):
            return {"status": "audited", **({"part": part} if part else {}), **({"reportedAs": named} if named else {})}
        case WithDeployment(part=part):
            return {"status": "with-deployment", "part": part}
        case Undecidable(reason=reason):
            return {"status": "undecidable", "reason": reason}
        case NotYet(reason=reason):
            return {"status": "not-yet", "reason": reason}
        case unreachable:
            assert_never(unreachable)


def _deciders(rule_id: str) -> dict[str, object]:
    """Issue 44: for an audited rule, the model functions ``check`` runs to decide it (``@decides``).  Read without
    importing the checker."""
    decidable: dict[str, object] = {"decidable": decidability(rule_id)}
    if rule_id in DECIDED_WITH_DEPLOYMENT:
        decidable["withDeployment"] = DECIDED_WITH_DEPLOYMENT[rule_id]
    if not isinstance(STATUS[rule_id].log, Audited | WithDeployment):
        return decidable
    names = sorted(f"{f.__module__}.{f.__qualname__}" for f in deciders().get(rule_id, []))
    return {**decidable, "decidedBy": names}


def _deciders_text(rule_id: str) -> str:
    found = _deciders(rule_id)
    decidable = f"; decidable: {found['decidable']}" + (f" (with the deployment: {found['withDeployment']})" if "withDeployment" in found else "")
    if "decidedBy" not in found:
        return decidable
    names = ", ".join(str(name) for name in found["decidedBy"])  # type: ignore[attr-defined]
    shown = f", decided by {names}" if names else ""
    return shown + decidable


def _facet_text(status: ModelStatus | LogStatus) -> str:
    facet = _facet(status)
    detail = facet.get("reason") or facet.get("part")
    return facet["status"] + (f" ({detail})" if detail else "")


def areas() -> tuple[str, ...]:
    """The rule areas of the registry (the ID's letters: SURF of SURF-3), sorted."""
    return tuple(sorted({r.area for r in rules()}))
