"""``sessionspec rules``: print the rule registry."""

from __future__ import annotations

import argparse
import json
import sys

from spec.registry import properties, quirks, registry_digest, rules

HELP = "print the rule registry (ID, implementing functions, normative sentence)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--area", metavar="AREA", help="only rules of this area, in any case (e.g. SURF; an unknown area lists the areas)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--properties", action="store_true", help="list the properties instead")


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
            "rules": [{"id": r.id, "area": r.area, "sentence": r.sentence, "implementedBy": list(r.implemented_by)} for r in selected],
            "quirks": [{"id": q.id, "title": q.title} for q in quirks()],
        }, indent=2, sort_keys=True))
        return 0
    for r in selected:
        impl = ", ".join(r.implemented_by) or "(not implemented)"
        print(f"{r.id:8} {r.sentence}\n         implemented by: {impl}")
    print(f"{len(selected)} rules; registry digest {registry_digest()}")
    return 0


def areas() -> tuple[str, ...]:
    """The rule areas of the registry (the ID's letters: SURF of SURF-3), sorted."""
    return tuple(sorted({r.area for r in rules()}))
