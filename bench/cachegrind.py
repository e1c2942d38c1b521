"""Instruction counts of ``check`` and of a bare ``json.loads`` with valgrind's cachegrind (issue 26).

CPU seconds on a shared machine move with the neighbours (cache, frequency,
hyper-threads); the number of instructions a run executes does not.  Each
figure here is the ``summary`` (instructions read, ``Ir``) of ``valgrind
--tool=cachegrind --cache-sim=no`` running a fresh interpreter on a small
driver, minus the same driver doing nothing: so the interpreter start-up, the
imports and reading the lines into memory cancel out, and what is left is
the work itself.

* ``none``: start, import ``sessionspec.check.checker``, read the file's lines;
  the baseline;
* ``loads``: the baseline, then ``json.loads`` of every line (the bare parse,
  as ``bench/run`` times it);
* ``check``: the baseline, then ``check_path`` of the file (which reads it
  again: reading is part of what check costs).

The collector is disabled in all three (``check_path`` pauses it itself;
the bare parse is counted the same way), and ``PYTHONHASHSEED=0`` fixes the
hash seed, so two runs of the same command give the same counts (to the
instruction, measured); another environment (variables, paths) moves them by
about 0.05 %.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VALGRIND = shutil.which("valgrind") or "/usr/bin/valgrind"
MODES = ("none", "loads", "check")

_DRIVER = """
import gc, json, sys
sys.path.insert(0, sys.argv[1])
from sessionspec.check.checker import check_path
mode, path = sys.argv[2], sys.argv[3]
with open(path, "rb") as f:
    lines = f.read().splitlines()
gc.disable()
if mode == "check":
    check_path(path)
elif mode == "loads":
    for line in lines:
        json.loads(line)
"""


def available() -> bool:
    return Path(VALGRIND).exists()


def instructions(root: Path, mode: str, path: Path) -> int:
    """The ``Ir`` total of one cachegrind run of the driver in ``mode`` on ``path``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    with tempfile.TemporaryDirectory(prefix="cachegrind-") as folder:
        out = Path(folder) / "cachegrind.out"
        result = subprocess.run(
            [VALGRIND, "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
             sys.executable, "-c", _DRIVER, str(root), mode, str(path)],
            capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        if result.returncode != 0 or not out.exists():
            raise RuntimeError(f"cachegrind {mode} {path}: exit {result.returncode}: {result.stderr.strip()[-500:]}")
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"cachegrind {mode} {path}: no summary line")


def measure(root: Path, path: Path) -> dict[str, int | float]:
    """Instructions of ``check`` and of the bare parse of ``path``, net of the baseline, and their ratio."""
    counts = {mode: instructions(root, mode, path) for mode in MODES}
    check = counts["check"] - counts["none"]
    loads = counts["loads"] - counts["none"]
    return {"baseline_ir": counts["none"], "check_ir": check, "loads_ir": loads, "check_over_loads_ir": check / loads}
