"""The installs a user gets (issue 42), built as a user builds them: from the sdist, into fresh virtualenvs.

- The default wheel compiles the checker's fast layer (hatch_build.py) where a C compiler is at hand, and
  ``sessionspec --version`` says so; ``SESSIONSPEC_PURE=1`` or no compiler gives the pure wheel, with one line.
- Installed, sessionspec owns one import name: a project with its own ``model`` and ``spec`` packages keeps
  them, under ``python -m pytest`` and plain ``pytest``, with the plugin running vectors over the reference adapter.
- The compiled checker passes tests/check and tests/fast, and gives the pure checker's reports, byte for byte,
  over the recorded inputs (``bench/record_reports collect``: the logs the checker tests hand to the reader,
  mutated ones included, and the generated logs) and tests/data, under every option set of bench/record_reports.

Slow (wheel builds, a compilation, fresh virtualenvs): ``-m slow``; the quick loop leaves them out.
Each virtualenv takes its dependencies from the package registry, as a user's would.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COMPILED_LINE = "sessionspec: building the compiled wheel"
PURE_LINE = "sessionspec: building the pure-Python wheel"


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    """The command's result.  Its output goes to files, not pipes: a pipe is read until every process holding it
    has closed it, so a grandchild that outlives the command (a worker, a fork server) would keep the test waiting
    after the command itself had ended; a file is read once the command has.  Past ``timeout`` the command is
    killed and its result is exit -9 with the output it had written (a pytest run under faulthandler_timeout has
    dumped its stacks there by then)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            code = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, stdout=out, stderr=err, timeout=timeout,
                                  check=False).returncode
            tail = ""
        except subprocess.TimeoutExpired:
            code, tail = -9, f"\n(killed after {timeout:.0f} s)"
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, code, out.read().decode(errors="replace"),
                                           err.read().decode(errors="replace") + tail)


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{' '.join(map(str, done.args))}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def build_wheel(sdist: Path, out: Path, env: dict[str, str] | None = None) -> tuple[Path, str]:
    """``pip wheel`` of the sdist (verbose, so the build hook's line shows); the wheel and pip's output."""
    done = ok(run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(out), str(sdist)], cwd=out.parent, env=env))
    wheels = sorted(out.glob("sessionspec-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0], done.stdout + done.stderr


def make_venv(where: Path, *requirements: str) -> Path:
    ok(run([sys.executable, "-m", "venv", str(where)], cwd=where.parent))
    ok(run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", *requirements], cwd=where.parent))
    return where / "bin" / "python"


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path
    build_output: str
    python: Path  # a fresh virtualenv with the compiled wheel, pytest and the checker tests' own dependencies


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """Built once per run: xdist's workers share the parent of their temporary folders (pytest-xdist's way to run
    a session fixture once); a run without workers builds in its own temporary folder."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "sessionspec-builds"
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        record = shared / "built.json"
        if not record.exists():
            ok(run([sys.executable, "-m", "build", "--sdist", "--outdir", str(shared / "sdist"), str(ROOT)], cwd=shared))
            (sdist,) = sorted((shared / "sdist").glob("sessionspec-*.tar.gz"))
            wheel, output = build_wheel(sdist, shared / "compiled")
            python = make_venv(shared / "venv", str(wheel), "pytest", "pytest-xdist", "jsonschema", "fsspec")
            record.write_text(json.dumps({"sdist": str(sdist), "wheel": str(wheel), "output": output, "python": str(python)}))
        value = json.loads(record.read_text())
    yield Built(Path(value["sdist"]), Path(value["wheel"]), value["output"], Path(value["python"]))


def test_the_default_wheel_is_compiled_and_says_so(built: Built) -> None:
    assert COMPILED_LINE in built.build_output
    assert not built.wheel.name.endswith("-py3-none-any.whl"), built.wheel.name  # a platform wheel
    names = zipfile.ZipFile(built.wheel).namelist()
    assert any(name.startswith("sessionspec/fast/parse.") and name.endswith(".so") for name in names)
    assert not any(name.startswith("sessionspec/model/") and name.endswith(".so") for name in names)  # the definition stays Python
    version = ok(run([str(built.python), "-m", "sessionspec.cli", "--version"], cwd=built.python.parents[2]))
    assert "(compiled (mypyc);" in version.stdout


def test_the_wheel_installs_one_import_name(built: Built) -> None:
    """Every file of the wheel is under ``sessionspec/``, or its metadata, or mypyc's group library: one module,
    ``sessionspec__mypyc``, which mypyc needs at the top of site-packages (hatch_build.py, GROUP_NAME)."""
    outside = [name for name in zipfile.ZipFile(built.wheel).namelist()
               if not name.startswith(("sessionspec/", "sessionspec-0.1.0.dist-info/"))]
    assert len(outside) == 1 and outside[0].startswith("sessionspec__mypyc.") and outside[0].endswith(".so"), outside
    names = zipfile.ZipFile(built.wheel).namelist()
    assert "sessionspec/model/surface.py" in names and "sessionspec/spec/rulebook.md" in names
    assert any(name.startswith("sessionspec/_vectors/") for name in names)


def test_the_installed_kit_reads_the_vectors_it_ships(built: Built, tmp_path: Path) -> None:
    """An install has no ``vectors/`` beside the package: ``mutants`` runs the shipped copy (it stopped with "no
    vector directory .../site-packages/vectors"), and ``vectors pack``, which builds the release artifact from a
    checkout, says that it needs one instead of naming a missing vector directory."""
    sessionspec = str(built.python.parent / "sessionspec")
    done = run([sessionspec, "mutants", "--only", "prefix-after-history", "--examples", "1", "--format", "json"], cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (kill,) = json.loads(done.stdout)["mutants"]
    assert kill["vector"] is not None, kill  # a vector of the shipped copy killed it
    packed = run([sessionspec, "vectors", "pack", "--out", str(tmp_path / "pack.tar.gz")], cwd=tmp_path)
    assert packed.returncode == 2 and "packing needs a source checkout" in packed.stderr, packed.stderr


@pytest.mark.parametrize(("env", "reason"), [({"SESSIONSPEC_PURE": "1"}, "(SESSIONSPEC_PURE=1)"),
                                             ({"CC": "/nonexistent/cc"}, "(no C compiler (/nonexistent/cc is not on PATH))")])
def test_a_forced_or_compilerless_build_is_the_pure_wheel_and_says_why(built: Built, tmp_path: Path, env: dict[str, str],
                                                                        reason: str) -> None:
    wheel, output = build_wheel(built.sdist, tmp_path / "wheels", env=env)
    assert f"{PURE_LINE} {reason}" in output
    assert wheel.name.endswith("-py3-none-any.whl")
    assert not any(name.endswith(".so") for name in zipfile.ZipFile(wheel).namelist())


DOWNSTREAM_TEST = '''
from pathlib import Path

import model
import spec
import sessionspec.model.surface
import sessionspec.spec.registry

HERE = Path(__file__).resolve().parents[1]


def test_each_side_imports_its_own_code():
    assert (model.OWNER, spec.OWNER) == ("downstream", "downstream")
    assert Path(model.__file__).resolve().parent == HERE / "model"
    assert Path(spec.__file__).resolve().parent == HERE / "spec"
    assert "site-packages" in sessionspec.model.surface.__file__ and "site-packages" in sessionspec.spec.registry.__file__
    assert not hasattr(model, "surface")
'''


@pytest.mark.parametrize("pytest_command", [["-m", "pytest"], ["pytest"]], ids=["python -m pytest", "pytest"])
def test_a_project_with_its_own_model_and_spec_packages_keeps_them(built: Built, tmp_path: Path,
                                                                  pytest_command: list[str]) -> None:
    project = tmp_path / "downstream"
    for package in ("model", "spec"):
        (project / package).mkdir(parents=True)
        (project / package / "__init__.py").write_text('OWNER = "downstream"\n', encoding="utf-8")
    (project / "tests").mkdir()
    (project / "tests" / "test_own.py").write_text(DOWNSTREAM_TEST, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8")
    bin_dir = built.python.parent
    command = [str(built.python), "-m", "pytest"] if pytest_command[0] == "-m" else [str(bin_dir / "pytest")]
    done = run([*command, "-p", "no:cacheprovider", "-rA", "--sessionspec-adapter", f"{bin_dir / 'sessionspec'} serve-model",
                "--sessionspec-examples", "3", "-k", "own or sessionspec_loop or conform"], cwd=project)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "INTERNALERROR" not in done.stdout + done.stderr
    assert "PASSED tests/test_own.py::test_each_side_imports_its_own_code" in done.stdout
    vector_items = [line for line in done.stdout.splitlines() if line.startswith("PASSED sessionspec")]
    assert len(vector_items) > 10, done.stdout[-3000:]  # the loop vectors and conform ran, through the plugin


@pytest.fixture(scope="session")
def compiled_test_run(built: Built, tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """tests/check and tests/fast run by the compiled build.  The checkout stays off the path: ``PYTHONSAFEPATH``
    keeps the working folder off it in every process the tests start, and ``tests`` is importable through a
    folder that holds only a link to it; SESSIONSPEC_EXPECT_BUILD stops the run if the compiled build is not
    the one imported (tests/conftest.py)."""
    work = tmp_path_factory.mktemp("compiled-run")
    (work / "tests").symlink_to(ROOT / "tests")
    env = {"PYTHONSAFEPATH": "1", "PYTHONPATH": str(work), "SESSIONSPEC_EXPECT_BUILD": "compiled",
           "HYPOTHESIS_PROFILE": "ci", "SESSIONSPEC_HEARTBEAT": "0"}
    return run([str(built.python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "auto", "tests/check", "tests/fast"],
               cwd=ROOT, env=env, timeout=3600)


def test_the_compiled_checker_passes_the_check_and_fast_tests(compiled_test_run: subprocess.CompletedProcess[str]) -> None:
    assert compiled_test_run.returncode == 0, compiled_test_run.stdout[-6000:] + compiled_test_run.stderr[-3000:]


def test_the_compiled_and_pure_checkers_give_identical_reports(built: Built, tmp_path: Path) -> None:
    """bench/record_reports: the corpus collected by the pure build (the checker tests' inputs and the generated
    logs), then every input and tests/data checked by each build under every option set, and the two recordings
    compared.  Both run from a folder that holds only a link to tests/, so neither imports the checkout by accident."""
    recorder = str(ROOT / "bench" / "record_reports")
    corpus = tmp_path / "corpus"
    ok(run([sys.executable, recorder, "collect", str(corpus)], cwd=ROOT, env={"SESSIONSPEC_HEARTBEAT": "0"}, timeout=1200))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "tests").symlink_to(ROOT / "tests")
    for name, python in (("pure", sys.executable), ("compiled", str(built.python))):
        ok(run([sys.executable, recorder, "record", str(corpus), str(tmp_path / f"{name}.json"), "--tree", str(tree), "--python", python],
               cwd=tmp_path, env={"PYTHONSAFEPATH": "1"}))
    recordings = {name: json.loads((tmp_path / f"{name}.json").read_text()) for name in ("pure", "compiled")}
    assert recordings["pure"]["inputs"] > 400 and len(recordings["pure"]["option_sets"]) == 4
    diff = run([sys.executable, recorder, "diff", str(tmp_path / "pure.json"), str(tmp_path / "compiled.json")], cwd=tmp_path)
    assert diff.returncode == 0, diff.stdout[-6000:]
