"""``sessionspec conform --exhaustive --depth K``: every trace of up to K operations, in a small scope.

Random traces say "no divergence in N samples"; this says "no divergence in *any* trace of at most K
operations over the alphabet below" -- the small-scope hypothesis that TLC and Alloy rest on (most bugs
show in a small scope), applied to an implementation instead of a specification.

**The scope** (docs/conformance.md, section 4.1).  A trace is an initial agent (not counted in the depth)
and up to K operations, each a symbol of :data:`ALPHABET`:

- initial agents: no contributor; one prepend contributor that injects and one append contributor that
  edits what it returned; two prepend contributors, the second throwing; two append contributors, the
  first lossy with empty content (0-2 contributors of each idiom; PFX-4, PFX-6, PFX-8, PFX-12, PFX-13);
- ``text``: a one-step text turn; ``tools``: a tool round trip (a tool call, then text);
- ``blocked``: a blocked prompt with two steering items queued (re-queued as two turns, QF-4, which take the
  next replies: a tool round trip, then text);
- ``tools`` and ``blocked`` interrupted by each abort kind (cancel, dispose, foreign) at each of the 14
  windows of step 1 (docs/conformance.md section 3.2);
- ``dispose``; ``resume``; ``change`` (a new system prompt and tool list between turns).

The scope bounds one more thing, as Alloy's ``for 3 but 1 X`` does: at most **one interrupted send** per
trace.

**Deduplicated up to symmetry**: a trace is not run when an operation in it is the protocol's no-op
repetition of an earlier one, so it is the same as a shorter trace that is run: a second ``change`` (the
agent options already hold those values), a ``resume`` right after a ``resume``, a ``dispose`` of a
disposed instance.  And on a disposed instance every ``send`` is rejected before its arguments are read
(LOOP-1), so only ``text`` stands for them there.

**Order and sharing**: agents in the order above, then operations in alphabet order, depth first, so the
run is deterministic.  Only maximal traces are sent: every shorter trace is a prefix of one, and every
answer of that prefix is compared when the longer trace runs.  The model's answers are computed once per
prefix (its session is a value, copied at each branch); the implementation replays each trace from
``init``, with ``--jobs`` adapters working in parallel.
"""

from __future__ import annotations

import copy
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, TextIO, final

from sessionspec.conformance.adapter.capabilities import EVERYTHING, Capabilities, operation_needs
from sessionspec.conformance.adapter.driver import DEFAULT_TIMEOUT, MAX_ANSWER, InProcessAdapter
from sessionspec.conformance.adapter.protocol import Response
from sessionspec.conformance.adapter.session import ModelSession
from sessionspec.conformance.conform.exhaustive_leaf import Leaf, Op, Symbol
from sessionspec.conformance.conform.exhaustive_workers import Shared, worker
from sessionspec.conformance.conform.outcome import Divergence, Tally
from sessionspec.conformance.conform.traces import WINDOWS, WORK_TOOL
from sessionspec.conformance.vectors.build import ECHO_TOOL, message, reply, text
from sessionspec.conformance.vectors.expectations import Expectations
from sessionspec.conformance.vectors.runner import start_adapter

KINDS: Final = ("cancel", "dispose", "foreign")


def _contributor(label: str, idiom: str, **extra: Any) -> dict[str, Any]:
    return {"idiom": idiom, "content": [message(f"<{label}>")], **extra}


INITIAL_AGENTS: Final[tuple[tuple[str, Op], ...]] = tuple(
    (name, {"agent": {"system": "S", "tools": [WORK_TOOL], "contributors": contributors}})
    for name, contributors in (
        ("no-contributor", []),
        ("prepend+append", [_contributor("p", "prepend", inject={"content": text("inj p"), "source": {"kind": "user"}}),
                            _contributor("a", "append", mutateAfter=True)]),
        ("prepend+throwing-prepend", [_contributor("p", "prepend"), _contributor("t", "prepend", throws="contributor t failed")]),
        ("lossy-empty-append+append", [{"idiom": "append", "content": [], "lossy": True}, _contributor("a", "append")]),
    )
)

_TOOL_ROUND: Final = {"kind": "tool-calls", "text": "t", "usage": [10, 5],
                      "toolCalls": [{"callId": "c1", "name": "work", "arguments": "{}", "result": "r"}]}
_SENDS: Final[dict[str, Op]] = {
    "text": {"op": "send", "prompt": {"content": text("hi")}, "replies": [reply("a")]},
    "tools": {"op": "send", "prompt": {"content": text("go")}, "replies": [_TOOL_ROUND, reply("b")]},
    "blocked": {"op": "send", "prompt": {"content": text("blocked"), "blockReason": "policy"},
                "steering": [{"content": text("s1")}, {"content": text("s2")}],
                "replies": [_TOOL_ROUND, reply("r1"), reply("r2")]},
}


def _alphabet() -> tuple[Symbol, ...]:
    plain = [Symbol(name, op) for name, op in _SENDS.items()]
    others = [Symbol("dispose", {"op": "dispose"}), Symbol("resume", {"op": "resume"}),
              Symbol("change", {"op": "configure", "agent": {"system": "S2", "tools": [WORK_TOOL, ECHO_TOOL]}})]
    interrupted = [Symbol(f"{base}!{window}/{kind}", {**_SENDS[base], "interrupt": {"window": window, "kind": kind}},
                          interrupted=True)
                   for base in ("tools", "blocked") for window in WINDOWS for kind in KINDS]
    return (*plain, *others, *interrupted)


ALPHABET: Final = _alphabet()


def _every(_: Symbol) -> bool:
    return True


def extensions(prefix: Sequence[Symbol], allowed: Callable[[Symbol], bool] = _every) -> tuple[Symbol, ...]:
    """The symbols that may follow ``prefix`` in the scope (one interrupted send per trace) once the
    symmetric repetitions are left out (module docstring)."""
    names = [s.name for s in prefix]
    interrupted = any(s.interrupted for s in prefix)
    disposed = False
    for name in names:
        disposed = name == "dispose" or (disposed and name != "resume")
    out: list[Symbol] = []
    for s in ALPHABET:
        if not allowed(s):
            continue
        if s.interrupted and interrupted:
            continue
        if disposed and (s.name == "dispose" or (s.sends and s.name != "text")):
            continue
        if s.name == "change" and "change" in names:
            continue
        if s.name == "resume" and names[-1:] == ["resume"]:
            continue
        out.append(s)
    return tuple(out)


def trace_counts(depth: int, capabilities: Capabilities = EVERYTHING) -> tuple[int, ...]:
    """How many traces the scope holds at each depth 1..``depth`` (all initial agents the adapter can take)."""
    counts = [0] * depth
    allowed = _allowed(capabilities)

    def walk(prefix: tuple[Symbol, ...]) -> None:
        if len(prefix) == depth:
            return
        for s in extensions(prefix, allowed):
            counts[len(prefix)] += 1
            walk((*prefix, s))

    walk(())
    return tuple(c * len(_agents(capabilities)) for c in counts)


def _branch(reference: InProcessAdapter) -> InProcessAdapter:
    """A copy of the model's session to run one more operation on (the session holds values; the scripted
    summarizer's queue is the one list it owns)."""
    session = copy.copy(reference.session)
    session.summarizer = copy.copy(session.summarizer)
    session.summarizer.outputs = list(session.summarizer.outputs)
    return InProcessAdapter(session)


def leaves(depth: int, capabilities: Capabilities = EVERYTHING) -> Iterator[Leaf]:
    """Every maximal trace of the scope with the model's answers, in the run's deterministic order (only the
    agents and symbols whose operations and features the adapter declares)."""
    index = 0
    allowed = _allowed(capabilities)
    for agent, initial in _agents(capabilities):
        root = InProcessAdapter(ModelSession())
        first = root.call({"op": "init", **initial})
        stack: list[tuple[tuple[Symbol, ...], tuple[Response, ...], InProcessAdapter]] = [((), (first,), root)]
        while stack:
            prefix, answers, reference = stack.pop()
            following = extensions(prefix, allowed) if len(prefix) < depth else ()
            if not following:
                yield Leaf(index=index, agent=agent, initial=initial, symbols=prefix,
                           answers=(*answers, reference.call({"op": "log"})))
                index += 1
                continue
            children = []
            for s in following:
                child = _branch(reference)
                children.append(((*prefix, s), (*answers, child.call(s.op)), child))
            stack.extend(reversed(children))


# --------------------------------------------------------------------------- the run


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class ExhaustiveResult:
    depth: int
    counts: tuple[int, ...]  # traces at each depth 1..depth
    run: int  # maximal traces sent to the adapter
    seconds: float
    divergence: Divergence | None
    agent: str | None  # the initial agent of the divergence
    agents: int = len(INITIAL_AGENTS)  # the initial agents and symbols in scope (the adapter's capabilities)
    symbols: int = len(ALPHABET)
    failed: int = 0  # of the traces run, those that diverged (parallel workers may see more than one)


def run_exhaustive(command: str | None, *, depth: int, jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
                   max_answer: int = MAX_ANSWER, progress: TextIO | None = None, progress_every: float = 5.0,
                   tally: Tally | None = None, expectations: Expectations | None = None) -> ExhaustiveResult:
    """Send every maximal trace of the scope to ``jobs`` adapters (``command``; None: the model in-process)
    and compare every answer with the model's.  The divergence reported is the first unexpected one in the
    run's order; a divergence ``expectations`` lists is counted and the run goes on; an adapter that fails on
    a trace is restarted (a crash, counted in ``tally``); one that fails at start-up raises
    :class:`AdapterError`."""
    adapters = [start_adapter(command, timeout=timeout, max_answer=max_answer) for _ in range(max(1, jobs))]
    capabilities = adapters[0].capabilities
    counts = trace_counts(depth, capabilities)
    total = sum(1 for _ in _maximal(depth, capabilities)) * len(_agents(capabilities))
    work: queue.Queue[Leaf | None] = queue.Queue(maxsize=4 * len(adapters))
    shared = Shared(command=command, timeout=timeout, max_answer=max_answer, tally=tally if tally is not None else Tally(),
                     expectations=expectations)
    if capabilities != Capabilities():
        shared.tally.declared = capabilities.describe()
        shared.tally.unknown = capabilities.unknown()
    threads = [threading.Thread(target=worker, args=(a, work, shared), daemon=True) for a in adapters]
    started = last = time.monotonic()
    for t in threads:
        t.start()
    try:
        for leaf in leaves(depth, capabilities):
            if shared.stop_before(leaf.index):
                break
            work.put(leaf)
            now = time.monotonic()
            if progress is not None and now - last >= progress_every:
                last = now
                _report_progress(progress, shared.done, total, now - started)
    finally:
        for _ in threads:
            work.put(None)
        for t in threads:
            t.join()
    found = shared.found
    return ExhaustiveResult(depth=depth, counts=counts, run=shared.done, seconds=time.monotonic() - started,
                            divergence=None if found is None else found[1], agent=None if found is None else found[2],
                            agents=len(_agents(capabilities)), symbols=sum(1 for s in ALPHABET if _allowed(capabilities)(s)),
                            failed=shared.diverged)


def _allowed(capabilities: Capabilities) -> Callable[[Symbol], bool]:
    """Whether a symbol's operation and features are declared (issue 27: only declared operations)."""
    return lambda symbol: not capabilities.missing(operation_needs([symbol.op]))


def _agents(capabilities: Capabilities) -> tuple[tuple[str, Op], ...]:
    """The initial agents whose features are declared (``no-contributor`` always is)."""
    return tuple((name, initial) for name, initial in INITIAL_AGENTS
                 if not capabilities.missing(operation_needs([], [initial["agent"]])))


def _maximal(depth: int, capabilities: Capabilities = EVERYTHING) -> Iterator[tuple[Symbol, ...]]:
    """The maximal symbol sequences of one initial agent (the leaves of the scope's tree)."""
    allowed = _allowed(capabilities)
    stack: list[tuple[Symbol, ...]] = [()]
    while stack:
        prefix = stack.pop()
        following = extensions(prefix, allowed) if len(prefix) < depth else ()
        if not following:
            yield prefix
        stack.extend((*prefix, s) for s in following)


def _report_progress(out: TextIO, done: int, total: int, elapsed: float) -> None:
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 else 0.0
    eta = f", about {int(left) // 60}:{int(left) % 60:02d} left" if rate > 0 else ""
    print(f"conform --exhaustive: {done}/{total} traces agree ({rate:.1f}/s{eta})", file=out, flush=True)


def symbol_names(trace: Sequence[Op]) -> list[str]:
    """The alphabet names of a trace's operations (for the report), '?' for an operation outside it."""
    names = {repr(sorted(s.op.items())): s.name for s in ALPHABET}
    return [names.get(repr(sorted(op.items())), "?") for op in trace]


def report(result: ExhaustiveResult, out: TextIO | None = None) -> None:
    """The run's summary: the counts per depth, the time, and the verdict."""
    out = out or sys.stdout
    per_depth = ", ".join(f"depth {d}: {n}" for d, n in enumerate(result.counts, start=1))
    print(f"scope: {result.agents} initial agents x {result.symbols} operations, at most one interrupted send; "
          f"traces {per_depth} ({sum(result.counts)} in all, {result.run} maximal traces sent, "
          f"{result.seconds:.0f} s)", file=out)
    if result.divergence is None:
        print(f"no divergence in any trace of up to {result.depth} operations", file=out)
    if (result.agents, result.symbols) != (len(INITIAL_AGENTS), len(ALPHABET)):
        print(f"restricted to what the adapter declares: {result.agents} of {len(INITIAL_AGENTS)} initial agents, "
              f"{result.symbols} of {len(ALPHABET)} operations", file=out)


__all__ = ["ALPHABET", "INITIAL_AGENTS", "ExhaustiveResult", "Leaf", "Symbol", "extensions", "leaves", "report",
           "run_exhaustive", "symbol_names", "trace_counts"]
