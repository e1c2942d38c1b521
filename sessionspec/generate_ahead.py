"""The blocks of ``sessionspec generate``, simulated ahead in worker processes.

A block is pure in its seed and its turn count (:func:`sessionspec.generate.simulated_log`),
and the seeds are the one ``random.Random(seed)`` stream drawn in order, so
block ``k`` can be simulated before the writer reaches it: by another process,
on another core, while the writer stitches and writes block ``k - 1``.  The
writer takes the blocks in order, so the bytes written do not depend on the
number of workers (tests/tools/test_generate.py compares them).

Only *full* blocks (``block_turns`` turns, every earlier block full too, so
the turn offset of block ``k`` is ``k * block_turns``) are simulated ahead;
the first block sized otherwise (the log's tail) ends the workers, and it and
every later block are simulated by the writer itself.  Results travel as
pickles, with :class:`model.jsonval.JsonObject` (a read-only ``dict``, which the
default pickle protocol would rebuild through the ``__setitem__`` it refuses)
reduced to its constructor over its items.

The workers are a ``concurrent.futures`` executor started by a fork server (spawn where there is none), not a
forked ``multiprocessing.Pool``: forking a process that runs threads (a test runner's, a caller's) can copy a
lock another thread held into a child that then waits for ever, and a pool whose worker dies waits for ever for
the block it held, where an executor raises ``BrokenProcessPool``.
"""

from __future__ import annotations

import copyreg
import io
import os
import pickle
import random
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Final

from sessionspec.model.jsonval import JsonObject
from sessionspec.model.log import Event
from sessionspec.workers import worker_context

Block = tuple[Event, ...]
# (seed, turns, turn offset) -> the block, its turns moved by the offset.
SimulateBlock = Callable[[int, int, int], Block]
# Blocks in flight per worker: enough to keep a worker busy while the writer
# takes a result, few enough that a log's tail wastes little speculation.
AHEAD_PER_WORKER: Final = 2


def default_workers() -> int:
    """Worker processes for a large log: one per *idle* CPU this process may use, at most two.

    Under load they cost more than they give: Linux groups a session's
    processes for the scheduler (``sched_autogroup``), so workers share the
    writer's slice of a busy machine instead of adding to it, and pickling
    the blocks adds a tenth to the CPU (docs/performance.md, issue 26)."""
    idle = len(os.sched_getaffinity(0)) - os.getloadavg()[0]
    return max(0, min(2, round(idle)))


def _reduce_json_object(value: JsonObject) -> tuple[type[JsonObject], tuple[tuple[tuple[str, object], ...]]]:
    return JsonObject, (tuple(value.items()),)


def dumps_block(block: Block) -> bytes:
    """``block`` as a pickle that :func:`pickle.loads` turns back into equal events."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, JsonObject: _reduce_json_object}
    pickler.dump(block)
    return buffer.getvalue()


def _simulate_pickled(simulate: SimulateBlock, seed: int, turns: int, turn_offset: int) -> bytes:
    return dumps_block(simulate(seed, turns, turn_offset))


class BlockSource:
    """Block after block of one log: ``block(turns, turn_offset)`` is
    ``simulate(next seed, turns, turn_offset)``, from a worker when it was
    simulated ahead, else simulated here.  A context manager: leaving it ends
    the workers (and the speculation the log did not need)."""

    def __init__(self, simulate: SimulateBlock, seed: int, block_turns: int, workers: int) -> None:
        self._simulate = simulate
        self._block_turns = block_turns
        self._rng = random.Random(seed)
        self._taken = 0  # blocks handed out
        self._drawn = 0  # seeds drawn (handed out or in flight)
        self._pending: deque[tuple[int, Future[bytes]]] = deque()
        self._seeds: deque[int] = deque()  # drawn for speculation the log did not use, in order
        self._workers = workers
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(workers, mp_context=worker_context()) if workers > 0 else None
        self._fill()

    def _fill(self) -> None:
        if self._pool is None:
            return
        while len(self._pending) < AHEAD_PER_WORKER * self._workers:
            seed = self._rng.getrandbits(32)
            turn_offset = self._drawn * self._block_turns
            self._drawn += 1
            self._pending.append((seed, self._pool.submit(_simulate_pickled, self._simulate, seed, self._block_turns, turn_offset)))

    def block(self, turns: int, turn_offset: int) -> Block:
        index = self._taken
        self._taken += 1
        if self._pool is not None and turns == self._block_turns and turn_offset == index * self._block_turns:
            _, result = self._pending.popleft()
            block: Block = pickle.loads(result.result())
            self._fill()
            return block
        # The tail: the speculation is not the block asked for, but its seeds are the next ones.
        self.close()
        seed = self._seeds.popleft() if self._seeds else self._rng.getrandbits(32)
        return self._simulate(seed, turns, turn_offset)

    def close(self) -> None:
        if self._pool is not None:
            # Blocks not started are cancelled; the at most ``workers`` running ones finish (a block is short).
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._seeds.extend(seed for seed, _ in self._pending)
        self._pending.clear()

    def __enter__(self) -> BlockSource:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.close()
