"""quality/run's scratch copy: the project laid out so mutmut mutates the files the tests import.

The tests import the model as ``sessionspec.model`` (the link ``sessionspec/model -> ../model``).  mutmut
names a mutant, and its trampoline records a hit, by the dotted path of the mutated file, so the copy
puts model/ where the import name says: ``sessionspec/model/`` is a real directory holding model/
(``[tool.mutmut] source_paths``), and ``model`` is a link to it for the tests that read the sources by
path.  mutmut copies the rest of ``sessionspec/`` beside the mutated tree (``also_copy``, written here
from the copy's own listing, so the unmutated model is never copied over the mutated one).

Two more edits, in the copy only: each module-level ``@implements(ARGS)`` (and ``@decides(ARGS)``) becomes the
call ``implements(ARGS)(name)`` after its function (mutmut 3 does not mutate decorated functions; the call
registers the same function), and tests/conftest.py registers the ``mutation`` Hypothesis profile and
a recursion limit of 2,500 that leaves room for the trampolines: under mutmut each model call is four
frames, and the depth-limit tests walk a value nested MAX_DEPTH (200) deep through the model's
recursive ``_arrays_to_tuples`` (800 frames plus pytest's, over the default 1,000).  The limit stays
below the 5,000-deep hostile line, which the decoder must still refuse as in a plain run (json's C
decoder checks the same limit), so no test's answer changes.
"""

from __future__ import annotations

import ast
import io
import os
import re
import shutil
import subprocess
import tarfile
import tomllib
from pathlib import Path

COPIED_DIRS = ("model", "spec", "sessionspec", "proofs", "vectors", "tests", "docs")
COPIED_FILES = ("README.md", "pyproject.toml")
MUTATED = Path("sessionspec") / "model"
PREFIX = "sessionspec.model."


REGISTRATIONS = ("implements", "decides")  # model/rules.py: each registers the function and returns it unchanged


def lift_implements(source: str) -> str:
    """Move each module-level registration decorator (``@implements(...)``, ``@decides(...)``) to a call after its
    function, innermost first as the decorators apply; a function with any other decorator is left as it is."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (first decorator line, last decorator line, function end line, calls)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not node.decorator_list:
            continue
        if not all(isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id in REGISTRATIONS for d in node.decorator_list):
            continue
        texts = [ast.get_source_segment(source, d) for d in node.decorator_list]
        last = node.decorator_list[-1].end_lineno
        assert all(t is not None for t in texts) and last is not None and node.end_lineno is not None
        calls = "".join(f"{text}({node.name})\n" for text in reversed(texts))
        edits.append((node.decorator_list[0].lineno, last, node.end_lineno, calls))
    for first, last, end, calls in sorted(edits, reverse=True):
        lines.insert(end, calls)
        del lines[first - 1 : last]
    return "".join(lines)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def copy_project(root: Path, workdir: Path, fresh: bool, rev: str | None) -> None:
    """Copy the project into ``workdir``: the work tree, or with ``rev`` the commit alone (``git archive``),
    its tests included, so edits in progress cannot break the run.  mutmut's cache (``mutants/``) stays
    unless ``fresh``; its copies of everything but the mutated tree are refreshed."""
    if fresh and workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    mutants = workdir / "mutants"
    for name in (*COPIED_DIRS, *COPIED_FILES):
        _remove(workdir / name)
    if mutants.exists():
        for entry in list(mutants.iterdir()):
            if entry.name != "sessionspec" and not entry.name.startswith("mutmut"):
                _remove(entry)
        if (mutants / "sessionspec").exists():
            for entry in list((mutants / "sessionspec").iterdir()):
                if entry.name != "model":
                    _remove(entry)
    if rev is None:
        for name in COPIED_DIRS:
            # symlinks=True: the links of sessionspec/ stay links here (re-pointed below).
            shutil.copytree(root / name, workdir / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        for name in COPIED_FILES:
            shutil.copy2(root / name, workdir / name)
    else:
        present = [n for n in (*COPIED_DIRS, *COPIED_FILES)
                   if subprocess.run(["git", "cat-file", "-e", f"{rev}:{n}"], cwd=root, capture_output=True).returncode == 0]
        archive = subprocess.run(["git", "archive", "--format=tar", rev, *present], cwd=root, capture_output=True, check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(workdir, filter="data")
    relayout(workdir)


def relayout(workdir: Path) -> None:
    """model/ moves to sessionspec/model (the import name's place); ``model`` links to it."""
    target = workdir / MUTATED
    _remove(target)
    shutil.move(str(workdir / "model"), str(target))
    os.symlink(MUTATED.as_posix(), workdir / "model")
    for path in sorted(target.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lifted = lift_implements(text)
        if lifted != text:
            path.write_text(lifted, encoding="utf-8")
    write_mutmut_paths(workdir)
    # The tests that read model/ by path find the mutated tree (mutmut never writes this link).
    (workdir / "mutants").mkdir(exist_ok=True)
    link = workdir / "mutants" / "model"
    _remove(link)
    os.symlink(MUTATED.as_posix(), link)


def write_mutmut_paths(workdir: Path) -> None:
    """The copy's ``[tool.mutmut]``: the mutated tree, and everything of sessionspec/ beside it to copy."""
    pyproject = workdir / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    table = tomllib.loads(text)["tool"]["mutmut"]
    base = [p for p in table.get("also_copy", []) if not p.startswith("sessionspec")]
    beside = sorted(f"sessionspec/{e.name}" + ("/" if (workdir / "sessionspec" / e.name).is_dir() else "")
                    for e in (workdir / "sessionspec").iterdir() if e.name != "model" and e.name != "__pycache__")
    also = ", ".join(f'"{p}"' for p in [*base, *beside])
    text, n = re.subn(r"(?m)^also_copy = \[.*\]$", f"also_copy = [{also}]", text)
    assert n == 1, "pyproject.toml [tool.mutmut] needs one 'also_copy = [...]' line"
    text, n = re.subn(r"(?m)^source_paths = \[.*\]$", f'source_paths = ["{MUTATED.as_posix()}/"]', text)
    assert n == 1, "pyproject.toml [tool.mutmut] needs one 'source_paths = [...]' line"
    pyproject.write_text(text, encoding="utf-8")


def restrict_tests(workdir: Path, test_files: list[str]) -> None:
    """Run only the named test modules against each mutant (a smoke run of the driver)."""
    pyproject = workdir / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    text, n = re.subn(r'"python_files=[^"]*"', '"python_files=' + " ".join(test_files) + '"', text)
    assert n == 1, "pyproject.toml [tool.mutmut] names the tests by one python_files=... argument"
    pyproject.write_text(text, encoding="utf-8")


# The Hypothesis profile of mutation runs (issue 29): every property test still runs its body on a few
# derandomized examples, enough to execute the mutated line; the full budgets are the suite's job.
MUTATION_PROFILE = ("# quality/run (issue 29): the fast profile of mutation runs, only in the scratch copy.\n"
                    "settings.register_profile('mutation', max_examples=MAX, derandomize=True, deadline=None, "
                    "database=None, print_blob=False, suppress_health_check=list(HealthCheck))\n"
                    "import sys; sys.setrecursionlimit(2500)  # quality/run (issue 43): room for the trampolines, below 5,000\n")


def install_mutation_profile(workdir: Path, examples: int = 8) -> None:
    """Register the ``mutation`` profile in the copy's tests/conftest.py (the work tree is never changed)."""
    conftest = workdir / "tests" / "conftest.py"
    lines = [line for line in conftest.read_text(encoding="utf-8").splitlines(keepends=True) if "quality/run (issue" not in line
             and "register_profile('mutation'" not in line]
    # Registered before the conftest loads the profile the environment names.
    at = next(i for i, line in enumerate(lines) if line.startswith("settings.load_profile("))
    lines.insert(at, MUTATION_PROFILE.replace("MAX", str(examples)))
    conftest.write_text("".join(lines), encoding="utf-8")


def model_modules(root: Path) -> list[str]:
    """Every module of model/, packages included, as its path under model/ without ``.py``
    (``surface``, ``compaction/region``): the population of a whole-model sample."""
    base = root / "model"
    return sorted(p.relative_to(base).with_suffix("").as_posix() for p in base.rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)
