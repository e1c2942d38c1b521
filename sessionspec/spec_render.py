"""``sessionspec spec``: render the reviewer's SPEC.md from the rule registry.

For every rule (book order): its ID and normative text, the source of each
implementing function with its PEP 316 contracts, and the properties, tests and
vectors that check it (``sessionspec.coverage``).  The seed note's claims are linked to
the rules that make them true.  The output is deterministic (no dates, sorted
lists), so ``tests/spec/test_spec_render.py`` can require the committed
``docs/SPEC.md`` to equal a fresh rendering; regenerate with
``sessionspec spec --out docs/SPEC.md``.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Final, assert_never

from sessionspec.coverage import RuleCoverage, coverage, summary
from sessionspec.model.rules import IMPLEMENTATIONS
from sessionspec.options import add_verbosity, describe
from sessionspec.spec.registry import Rule, deciders, load_definitions, properties, quirks, registry_digest, rules
from sessionspec.spec.status import (
    STATUS,
    Audited,
    Defined,
    LogStatus,
    NotDefined,
    NotYet,
    OutOfScope,
    Undecidable,
    WithDeployment,
)

HELP = "render the reviewer's spec (docs/SPEC.md) from the rule registry"

REGENERATE: Final = "sessionspec spec --out docs/SPEC.md"

# The seed note (the harness's session-prefix Agent Note) makes these claims;
# each is true in the model because of the listed rules.  Curated by hand: the
# note is prose, so no parser could find its claims.
SEED_CLAIMS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    ("deriveMessages() never returns the prefix; its one durable record is EpochHeader.messagePrefix",
     ("PFX-9", "DER-4", "HDR-1")),
    ("The loop fires the waterfall once per loop instance, lazily before the instance's first agent/pre-step",
     ("PFX-1", "PFX-2", "PFX-7", "LOOP-1")),
    ("Listeners receive a frozen empty seed and return an extension; the prepend idiom yields registration order on the wire",
     ("PFX-3", "PFX-4")),
    ("The composed list is deep-cloned, deep-frozen and cached on the instance", ("PFX-6",)),
    ("The prefix is placed in front of the entire derived history, directly after the provider's system slot",
     ("PFX-11", "WIRE-1", "WIRE-2")),
    ("Every loop-built request is a pure function of the session log (the invariant recomputes prefix + boundary derivation)",
     ("WIRE-5", "INV-3", "INV-5")),
    ("A process restart or resume is a new instance: it recomposes, and drift lands on the 'resume' header snapshot",
     ("PFX-1", "PFX-15", "HDR-7", "LOOP-9")),
    ("A composition interrupted by cancel/dispose is discarded, never cached; the next turn recomposes", ("PFX-5",)),
    ("A composing listener's session append joins the current request's derived history", ("PFX-8",)),
    ("The first routed request logs the current prefix on its header", ("PFX-16", "LOOP-9")),
    ("Compaction structurally cannot touch the prefix (or the system prompt)", ("CMP-24", "CMP-16")),
    ("The token meter folds the prefix from the canonical routed header", ("MTR-4", "MTR-6")),
    ("An empty composition is canonical absence: no extra header bytes, the request is the bare derivation",
     ("PFX-10", "HDR-2")),
)

_CONTRACT_LINE: Final = re.compile(r"^\s*(pre|post|inv)(\[[^\]]*\])?:\s*(.+)$")


def _qualname(function: Callable[..., object]) -> str:
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"


def contracts_of(function: Callable[..., object]) -> tuple[str, ...]:
    """The PEP 316 ``pre:``/``post:``/``inv:`` lines of a docstring, in order."""
    doc = inspect.getdoc(function) or ""
    return tuple(f"{m.group(1)}: {m.group(3).strip()}" for m in map(_CONTRACT_LINE.match, doc.splitlines()) if m)


def _source(function: Callable[..., object]) -> str:
    try:
        return inspect.getsource(function).rstrip()
    except (OSError, TypeError):
        return "# (source not available)"


def _log_line(rule_id: str, status: LogStatus) -> str:
    """What ``sessionspec check`` decides of the rule from a log (docs/check.md says the same)."""
    match status:
        case Audited(part=part):
            audited = sorted({_qualname(f) for f in deciders().get(rule_id, [])})
            scope = f" ({part})" if part else ""
            return f"*Audited in logs by* {', '.join(f'`{name}`' for name in audited)}{scope} (docs/check.md, audit table)."
        case WithDeployment(part=part):
            deciding = sorted({_qualname(f) for f in deciders().get(rule_id, [])})
            return f"*Decided with the deployment's facts (check --deployment) by* {', '.join(f'`{name}`' for name in deciding)}: {part}."
        case Undecidable(reason=reason):
            return f"*Not decidable from a log:* {reason}."
        case NotYet(reason=reason):
            return f"*Not yet audited in logs:* {reason}."
        case unreachable:
            assert_never(unreachable)


def _implementations(rule_id: str) -> list[Callable[..., object]]:
    return sorted({_qualname(f): f for f in IMPLEMENTATIONS.get(rule_id, [])}.values(), key=_qualname)


def _anchor(rule_id: str) -> str:
    return rule_id.lower()


def quoted_rule(r: Rule) -> list[str]:
    """The rule's whole block of the book as a Markdown quote: every line, bullets and examples included."""
    return [f"> {line}".rstrip() for line in r.text.splitlines()]


def _rule_section(item: RuleCoverage, shown: dict[str, str], property_names: dict[str, str]) -> list[str]:
    r: Rule = item.rule
    out = [f"### {r.id}", "", *quoted_rule(r), ""]
    status = STATUS[r.id]
    match status.model:
        case OutOfScope(reason=reason):
            out += [f"*Outside the model* (`spec/status.py`): {reason}", ""]
        case NotDefined(reason=reason):
            out += [f"*No definition of its own in the model* (`spec/status.py`): {reason}", ""]
        case Defined():
            pass
        case unreachable:
            assert_never(unreachable)
    for function in _implementations(r.id):
        name = _qualname(function)
        if name in shown:
            # A function that implements several rules is shown once; later entries link to it.
            out += [f"*Implemented by* `{name}` (source shown under [{shown[name]}](#{_anchor(shown[name])})).", ""]
            continue
        shown[name] = r.id
        out += [f"*Implemented by* `{name}`:", "", "```python", _source(function), "```", ""]
        contracts = contracts_of(function)
        if contracts:
            out += ["Contracts (PEP 316, checked by CrossHair, see `docs/proofs.md`):", ""]
            out += [f"- `{c}`" for c in contracts]
            out.append("")
    out += [_log_line(r.id, status.log), ""]
    props = [f"{p}: {property_names[p]}" if property_names.get(p) else p for p in item.properties]
    if props:
        out += ["*Properties:*", "", *[f"- {p}" for p in props], ""]
    else:
        out.append("*Properties:* none  ")
    out.append(f"*Tests:* {', '.join(f'`{t}`' for t in item.tests) if item.tests else 'none'}  ")
    out.append(f"*Vectors:* {', '.join(f'`{v}`' for v in item.vectors) if item.vectors else 'none yet'}")
    out.append("")
    return out


def render() -> str:
    """The whole SPEC.md text (deterministic)."""
    load_definitions()
    report = coverage()
    all_rules = rules()
    known = {r.id for r in all_rules}
    property_names = {p.id: p.statement for p in properties()}
    out = [
        "# sessionspec — the rules, their code and their checks",
        "",
        f"Generated from the rule registry (digest `{registry_digest()}`) by `{REGENERATE}`. Do not edit by hand.",
        "",
        "For each rule of `spec/rulebook.md`: the normative text, the model function(s) that implement it with their",
        "PEP 316 contracts, and the properties (P-…, `spec/*properties.py`), unit tests (`tests/`) and conformance",
        "vectors (`vectors/`) that fail when it is broken.  A newcomer should start with `docs/index.md`.",
        "",
        "## The seed note's claims and the rules that make them true",
        "",
        "| Claim of the session-prefix note | Rules |",
        "|---|---|",
    ]
    for claim, ids in SEED_CLAIMS:
        links = ", ".join(f"[{i}](#{_anchor(i)})" if i in known else f"{i} (not in the book)" for i in ids)
        out.append(f"| {claim} | {links} |")
    out += ["", "## Coverage by area", "", "```", *_summary_lines(report), "```", ""]
    area = ""
    shown: dict[str, str] = {}
    for item in report:
        if item.rule.area != area:
            area = item.rule.area
            out += [f"## {area}", ""]
        out += _rule_section(item, shown, property_names)
    out += ["## Quirks (Q-… from the book, QF-… found by sessionspec)", ""]
    out += [f"- **{q.id}** {q.title}." for q in quirks()]
    out.append("")
    return "\n".join(out)


def _summary_lines(report: tuple[RuleCoverage, ...]) -> list[str]:
    return summary(report).splitlines()


EXIT_CODES: Final = ((0, "the spec is written"), (2, "a usage error, or FILE cannot be written"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    describe(parser, exit_codes=EXIT_CODES, see="docs/SPEC.md (regenerate: sessionspec spec --out docs/SPEC.md)")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="write to FILE instead of stdout (default: stdout; the committed copy is docs/SPEC.md; missing directories are created)")
    add_verbosity(parser, quiet="with --out: say nothing on stderr",
                  verbose="with --out: also count what the spec holds (rules, properties, quirks) on stderr")


def run(args: argparse.Namespace) -> int:
    text = render()
    out: Path | None = args.out
    if out is None:
        sys.stdout.write(text)
        return 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    except OSError as error:
        print(f"sessionspec spec: cannot write {out}: {error.strerror or error}", file=sys.stderr)
        return 2
    if not args.quiet:
        counts = f"; {len(rules())} rules, {len(properties())} properties, {len(quirks())} quirks" if args.verbose else ""
        print(f"sessionspec spec: wrote {out} ({len(text.splitlines())} lines{counts})", file=sys.stderr)
    return 0
