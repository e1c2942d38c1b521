"""``sessionspec mutants``: the model with one rule broken, to prove the kit can fail.

Each mutant is served by ``sessionspec serve-model --mutant NAME``: the adapter
process either runs the loop with one of the planted variants of
:mod:`sessionspec.planted.loop`, sets one of :class:`~sessionspec.conformance.adapter.session.ModelSession`'s mutant switches, or
replaces ONE model function *in that adapter process only* (never in the
oracle's process).  ``sessionspec mutants`` runs the committed vectors and a
small ``conform`` budget against every mutant and prints the kill table: the
first vector that fails and its rules, and the rule ``conform`` reports.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, TextIO, final

from sessionspec.conformance.adapter.session import ModelSession
from sessionspec.model.jsonval import ABSENT, Absent, Json, JsonObject
from sessionspec.model.log import Dialect, Event
from sessionspec.model.rejected import Rejected
from sessionspec.planted.loop import Planted

HELP: Final = "run the vectors and conform against every mutant adapter and print the kill table"


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    name: str
    rule: str  # the rule the mutant breaks
    description: str
    install: Callable[[ModelSession], ModelSession]


def _fault(fault: Planted) -> Callable[[ModelSession], ModelSession]:
    def install(session: ModelSession) -> ModelSession:
        session.planted = fault
        return session

    return install


def _change_every_step(session: ModelSession) -> ModelSession:
    """LOOP-9 broken: a ``change`` header is written before every request."""
    import sessionspec.model.loop.step as step
    from sessionspec.model.header import EpochHeader, HeaderReason
    from sessionspec.model.loop import LoopInstance
    from sessionspec.model.loop.instance import header_record as original

    def header_record(instance: LoopInstance, logged: EpochHeader | Absent, header: EpochHeader) -> HeaderReason | None:
        reason = original(instance, logged, header)
        return HeaderReason.CHANGE if reason is None else reason

    setattr(step, "header_record", header_record)  # noqa: B010 (the patch is the point)
    return session


def _drop_prefix_on_resume(session: ModelSession) -> ModelSession:
    session.resume_drops_prefix = True
    return session


def _off_by_one_range(session: ModelSession) -> ModelSession:
    """CMP-11 broken: the replaced range ends one node early (the last shadowed node survives)."""
    import sessionspec.model.compaction as compaction
    import sessionspec.model.compaction.run as compaction_run  # where compact_if_needed looks select_range up

    original = compaction.select_range

    def select_range(priced: Sequence[tuple[int, int]], nodes: Sequence[int], events: Sequence[Event], retain_tokens: int,
                     dialect: Dialect = Dialect.A55) -> compaction.Range | None | Rejected:
        chosen = original(priced, nodes, events, retain_tokens, dialect)
        if isinstance(chosen, compaction.Range):
            index = list(nodes).index(chosen.end)
            if index > 0:
                return compaction.Range(start=chosen.start, end=nodes[index - 1])
        return chosen

    setattr(compaction_run, "select_range", select_range)  # noqa: B010
    return session


def _keep_empty_assistant(session: ModelSession) -> ModelSession:
    """DER-5 broken: an assistant message with empty content is kept in the derivation."""
    import sessionspec.model.derive as derive

    original = derive.project

    def project(event: Event, dialect: Dialect = Dialect.A55) -> JsonObject | None | Rejected:
        message = original(event, dialect)
        if message is None and event.type == "assistant/message":
            return JsonObject((("role", "assistant"), ("content", ())))
        return message

    setattr(derive, "project", project)  # noqa: B010
    return session


def _keep_empty_tools(session: ModelSession) -> ModelSession:
    """HDR-2 broken: the canonical header keeps ``tools: []``."""
    import sessionspec.model.header as header
    import sessionspec.model.loop.step as step

    original = header.canonical

    def canonical(h: header.EpochHeader, dialect: Dialect = Dialect.A55) -> header.EpochHeader:
        result = original(h, dialect)
        if h.tools == () and result.tools is ABSENT:
            return replace(result, tools=())
        return result

    setattr(step, "canonical", canonical)  # noqa: B010
    return session


def _accept_larger_summary(session: ModelSession) -> ModelSession:
    """CMP-21 broken: a summary that is not smaller than what it shadows is accepted."""
    import sessionspec.model.compaction.region as compaction_region  # where compact_region looks the gate up

    def check_summary_smaller(framed: Sequence[Json], shadowed_tokens: int) -> int | Rejected:
        return 0

    setattr(compaction_region, "check_summary_smaller", check_summary_smaller)  # noqa: B010
    return session


MUTANTS: Final = (
    Mutant(name="recompose-every-turn", rule="PFX-2", description="recompose the session prefix at every turn",
           install=_fault(Planted.RECOMPOSE_EVERY_TURN)),
    Mutant(name="cache-interrupted", rule="PFX-5", description="cache the prefix of an interrupted composition",
           install=_fault(Planted.CACHE_INTERRUPTED)),
    Mutant(name="prefix-after-history", rule="PFX-11", description="put the prefix after the history in the request",
           install=_fault(Planted.PREFIX_AFTER_HISTORY)),
    Mutant(name="prefix-in-history", rule="PFX-9", description="write the messagePrefix into the history",
           install=_fault(Planted.PREFIX_IN_HISTORY)),
    Mutant(name="no-clone", rule="PFX-6", description="cache the contributors' objects without a deep copy",
           install=_fault(Planted.NO_CLONE)),
    Mutant(name="snapshot-after-request", rule="LOOP-6", description="take the boundary after agent/request",
           install=_fault(Planted.SNAPSHOT_AFTER_REQUEST)),
    Mutant(name="change-every-step", rule="LOOP-9", description="write a change header before every request",
           install=_change_every_step),
    Mutant(name="drop-prefix-on-resume", rule="PFX-1", description="a resumed instance starts with an empty prefix",
           install=_drop_prefix_on_resume),
    Mutant(name="compaction-drops-prefix", rule="CMP-24",
           description="a compaction folds the prefix away (re-anchors a header without it)",
           install=_fault(Planted.COMPACT_DROPS_PREFIX)),
    Mutant(name="split-tool-pair", rule="CMP-10", description="the retention walk may cut inside a tool pair",
           install=_fault(Planted.COMPACT_SPLITS_TOOL_PAIR)),
    Mutant(name="off-by-one-range", rule="CMP-11", description="the replaced range ends one node early",
           install=_off_by_one_range),
    Mutant(name="keep-empty-assistant", rule="DER-5", description="derivation keeps empty assistant messages",
           install=_keep_empty_assistant),
    Mutant(name="keep-empty-tools", rule="HDR-2", description="the header keeps an empty tools list",
           install=_keep_empty_tools),
    Mutant(name="accept-larger-summary", rule="CMP-21", description="a summary not smaller than its region is accepted",
           install=_accept_larger_summary),
    # Issue 16: the model before the running harness corrected it (QF-3..QF-7).
    Mutant(name="step-result-cancel-drops-message", rule="LOOP-11",
           description="a cancel after step-result records no empty assistant message",
           install=_fault(Planted.STEP_RESULT_CANCEL_DROPS_MESSAGE)),
    Mutant(name="drop-requeued-steering", rule="LOOP-3",
           description="steering queued for a blocked or failed prompt is dropped, not run as the next turn",
           install=_fault(Planted.DROP_REQUEUED_STEERING)),
    Mutant(name="turn-stop-only-when-stopping", rule="LOOP-13",
           description="the after-turn-stop checkpoint is skipped on a continuing step",
           install=_fault(Planted.TURN_STOP_ONLY_WHEN_STOPPING)),
    Mutant(name="lossy-over-all-contributors", rule="PFX-13",
           description="a lossy contributor scoped to another agent still fails the header append",
           install=_fault(Planted.LOSSY_OVER_ALL_CONTRIBUTORS)),
    Mutant(name="thrown-stream-checkpoint", rule="LOOP-14",
           description="a thrown stream passes an after-stream checkpoint (a foreign abort wins over the failure)",
           install=_fault(Planted.THROWN_STREAM_CHECKPOINT)),
    # Issue 24: the model before the second run against the harness (QF-9, QF-10, replies in order, in-composition).
    Mutant(name="requeued-turns-outlive-interrupt", rule="LOOP-3",
           description="re-queued steering still runs after the send's cancel/dispose/foreign abort fired",
           install=_fault(Planted.REQUEUED_TURNS_OUTLIVE_INTERRUPT)),
    Mutant(name="replies-restart-per-requeued-turn", rule="LOOP-3",
           description="each re-queued steering turn is answered from the send's first reply again",
           install=_fault(Planted.REPLIES_RESTART_PER_REQUEUED_TURN)),
    Mutant(name="throw-passes-composition-window", rule="PFX-12",
           description="an interruption at in-composition fires although a contributor threw (a dispose disposes)",
           install=_fault(Planted.THROW_PASSES_COMPOSITION_WINDOW)),
    Mutant(name="lossy-without-messages", rule="PFX-13",
           description="a lossy contributor that returns no message still fails the header append",
           install=_fault(Planted.LOSSY_WITHOUT_MESSAGES)),
)

BY_NAME: Final = {m.name: m for m in MUTANTS}


def mutant_session(name: str) -> ModelSession:
    """A session with mutant ``name`` installed (patches this process: call only in an adapter process)."""
    return BY_NAME[name].install(ModelSession())


# --------------------------------------------------------------------------- the kill table


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Kill:
    mutant: Mutant
    vector: str | None  # the first vector that failed
    vector_rules: tuple[str, ...]  # the rules it exercises
    vector_breaks: tuple[str, ...]  # the rules its first difference breaks (what the killer reports)
    conform_rule: str | None  # the rule conform's first divergence maps to
    conform_trace: int | None  # its length (operations)

    @property
    def killed(self) -> bool:
        return self.vector is not None and self.conform_rule is not None


def adapter_command(name: str) -> str:
    return f"{sys.executable} -m sessionspec.conformance.adapter.serve_model --mutant {name}"


def kill_table(vectors_dir: Path, *, examples: int = 200, names: tuple[str, ...] | None = None,
               progress: TextIO | None = None) -> tuple[Kill, ...]:
    from sessionspec.conformance.conform.search import run_conform
    from sessionspec.conformance.vectors.command import load_dir, run_vectors

    files = load_dir(vectors_dir)
    out: list[Kill] = []
    chosen = [m for m in MUTANTS if names is None or m.name in names]
    started = time.monotonic()
    for number, mutant in enumerate(chosen, 1):
        command = adapter_command(mutant.name)
        if progress is not None:  # a run takes minutes: say what runs as it starts (--no-progress: nothing)
            print(f"mutants: {number}/{len(chosen)} {mutant.name}: running the vectors{_eta(started, number - 1, len(chosen))}",
                  file=progress, flush=True)
        results = run_vectors(files, command, stop_at_first=True)
        failed = next((r for r in results if r.status in ("fail", "error")), None)
        if progress is not None:
            print(f"mutants: {number}/{len(chosen)} {mutant.name}: vectors {'killed' if failed else 'SURVIVED'}; "
                  f"conform with {examples} traces", file=progress, flush=True)
        divergence = run_conform(command, examples=examples, progress=progress, progress_every=10.0)
        out.append(Kill(mutant=mutant, vector=None if failed is None else failed.vector_id,
                        vector_rules=() if failed is None else failed.rules,
                        vector_breaks=() if failed is None else failed.breaks,
                        conform_rule=None if divergence is None else divergence.rule,
                        conform_trace=None if divergence is None else len(divergence.trace)))
        if progress is not None:
            print(f"mutants: {number}/{len(chosen)} {mutant.name}: vectors "
                  f"{'killed' if failed else 'SURVIVED'}, conform {'killed' if divergence else 'SURVIVED'}", file=progress, flush=True)
    return tuple(out)


def _eta(started: float, done: int, total: int) -> str:
    """``, 1:20 elapsed, about 3:05 left`` once a mutant has run."""
    if done == 0:
        return ""
    elapsed = time.monotonic() - started
    left = elapsed / done * (total - done)
    return f", {int(elapsed) // 60}:{int(elapsed) % 60:02d} elapsed, about {int(left) // 60}:{int(left) % 60:02d} left"


def table_json(kills: tuple[Kill, ...]) -> dict[str, object]:
    """The kill table as ``--format json`` (docs/schemas/mutants.v3.schema.json)."""
    rows = [{"name": k.mutant.name, "breaks": k.mutant.rule, "description": k.mutant.description, "vector": k.vector,
             "vectorRules": list(k.vector_rules), "vectorReports": list(k.vector_breaks), "conformRule": k.conform_rule,
             "conformTrace": k.conform_trace, "status": "killed" if k.killed else "survived"} for k in kills]
    return {"format": "sessionspec-mutants/3", "killed": sum(1 for r in rows if r["status"] == "killed"),
            "total": len(rows), "mutants": rows}


def table_text(kills: tuple[Kill, ...], *, quiet: bool = False, verbose: bool = False) -> str:
    """The kill table: per mutant the rule it breaks, the first vector that failed and the rule its first
    difference reports, and the rule conform reports (issue 46, part 6); ``quiet``: the survivors only."""
    lines = [f"{'mutant':34} {'breaks':8} {'killed by vector':48} {'vector reports':14} {'conform reports':16}"]
    for k in kills:
        if quiet and k.killed:
            continue
        vector = "SURVIVED" if k.vector is None else k.vector
        reports = ", ".join(k.vector_breaks) if k.vector is not None else "-"
        by_conform = "SURVIVED" if k.conform_rule is None else f"{k.conform_rule} ({k.conform_trace} ops)"
        lines.append(f"{k.mutant.name:34} {k.mutant.rule:8} {vector:48} {reports:14} {by_conform}")
        if verbose:
            lines.append(f"    {k.mutant.description}; the vector exercises {', '.join(k.vector_rules) or '-'}")
    if len(lines) == 1:
        lines = []
    killed = sum(1 for k in kills if k.killed)
    lines.append(f"{killed}/{len(kills)} mutants killed by both the vectors and conform")
    return "\n".join(lines)


EXIT_CODES: Final = (
    (0, "every mutant was killed by both the vectors and conform"),
    (1, "a mutant survived the vectors or conform"),
    (2, "a usage error (an unknown mutant, no vector directory)"),
    (3, "a bug in sessionspec itself"),
    (130, "interrupted (Ctrl-C)"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from sessionspec.conformance.vectors.cli_words import add_verbosity_arguments, exit_codes

    parser.epilog = exit_codes(EXIT_CODES) + "\n\ndocs/conformance.md section 5"
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--vectors", default=None, metavar="DIR", help="vector directory (default: the committed vectors, as shipped with sessionspec)")
    parser.add_argument("--examples", type=int, default=200, metavar="N", help="conform examples per mutant (default 200)")
    parser.add_argument("--only", action="append", default=None, metavar="NAME",
                        help="run only this mutant (repeatable; default: every mutant)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit (default: run them)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress lines on stderr (default: a line as each mutant starts its vectors and conform)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default) or json (one object, docs/schemas/mutants.v3.schema.json)")
    add_verbosity_arguments(parser, quiet="the survivors and the final line only, no progress",
                            verbose="each mutant's description and the rules its killing vector exercises")


def run(args: argparse.Namespace) -> int:
    from sessionspec.conformance.vectors.shipped import shipped_vectors

    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34} {m.rule:8} {m.description}")
        return 0
    unknown = [n for n in args.only or [] if n not in BY_NAME]
    if unknown:
        print(f"sessionspec mutants: unknown mutant {unknown[0]} (see --list)", file=sys.stderr)
        return 2
    if args.examples < 1:
        print("sessionspec mutants: --examples must be at least 1", file=sys.stderr)
        return 2
    directory = Path(args.vectors) if args.vectors else shipped_vectors()
    if not directory.is_dir():
        print(f"sessionspec mutants: no vector directory {directory}", file=sys.stderr)
        return 2
    if not any(path.name != "schema.json" for path in directory.glob("*.json")):  # else every mutant "survives" nothing
        print(f"sessionspec mutants: no vector files in {directory}", file=sys.stderr)
        return 2
    kills = kill_table(directory, examples=args.examples, names=tuple(args.only) if args.only else None,
                       progress=None if args.no_progress or args.quiet else sys.stderr)
    if args.format == "json":
        import json

        print(json.dumps(table_json(kills)))
    else:
        print(table_text(kills, quiet=args.quiet, verbose=args.verbose))
    return 0 if all(k.killed for k in kills) else 1
