"""The wheel's build hook: the checker's fast layer compiled with mypyc where a C compiler is at hand (issue 42).

``pip install .``, ``pip wheel .`` and an install from the sdist compile ``sessionspec/fast`` and
``sessionspec/check`` (the model, the definition, is never compiled): about twice as fast a ``check``
(docs/performance.md).  Where that cannot be done the wheel is the pure-Python one, and one line says why:

- ``SESSIONSPEC_PURE=1`` in the environment (the build option: force pure);
- no C compiler (``CC``, or the one Python was built with, is not on ``PATH``);
- the compilation itself failed (the compiler's own output is above that line).

An editable install is never compiled: a contributor edits the ``.py`` files, and a ``.so`` beside them
would shadow every edit.

Written on mypyc's ``mypycify`` and setuptools' ``build_ext`` rather than the hatch-mypyc plugin, which
compiles in place (the ``.so`` files stay in the source tree, shadowing it), has no fallback and
compiles the one large C file on one core.  Here the C is split per module (``multi_file``), compiled
on every core, at ``-O2`` (docs/performance.md, "The compiled build": time and speed of each choice),
into a scratch folder whose ``.so`` files the wheel takes from there.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sysconfig
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# What is compiled: the checker and its fast layer (the interpreted model stays the definition they are tied to).
COMPILED_PACKAGES = ("sessionspec/fast", "sessionspec/check")
# The compiler the build uses; the build result (and its equality with the pure build, tests/packaging) is this one's.
BUILD_REQUIRES = ["mypy==2.4.1", "setuptools>=65"]
OPT_LEVEL = "2"
# mypyc's shared library, a module of its own, must sit at the top of site-packages (mypyc derives each compiled
# module's __file__ and __path__ from its place; inside the package they came out wrong) and is named by default
# from a hash: named here, the one top-level name the wheel adds besides sessionspec is sessionspec__mypyc.
GROUP_NAME = "sessionspec"
PURE_ENV = "SESSIONSPEC_PURE"


def pure_requested() -> bool:
    return os.environ.get(PURE_ENV, "").strip() not in ("", "0")


def missing_compiler() -> str | None:
    """Why no C compiler can be run, or None: the ``CC`` of the environment or of Python's own build."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    words = shlex.split(command)
    if not words or shutil.which(words[0]) is None:
        return f"no C compiler ({words[0] if words else 'CC is empty'} is not on PATH)"
    if not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        return "no Python headers (Python.h) for this interpreter"
    return None


def compiled_sources(root: Path) -> list[str]:
    """The modules compiled; a package's ``__init__`` stays Python (it holds only a docstring)."""
    return sorted(str(path.relative_to(root)) for package in COMPILED_PACKAGES for path in (root / package).rglob("*.py")
                  if path.name != "__init__.py")


def parallel_compile(jobs: int) -> Callable[..., list[str]]:
    """A ``CCompiler.compile`` that compiles a module's C files on ``jobs`` threads (setuptools compiles the
    sources of one extension one after another; mypyc's whole build is one extension)."""

    def compile_sources(self: Any, sources: Sequence[str], output_dir: str | None = None, macros: Any = None,
                        include_dirs: Any = None, debug: bool = False, extra_preargs: Any = None,
                        extra_postargs: Any = None, depends: Any = None) -> list[str]:
        macros, objects, extra_postargs, pp_opts, build = self._setup_compile(output_dir, macros, include_dirs, sources,
                                                                              depends, extra_postargs)
        cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

        def one(obj: str) -> None:
            src, ext = build[obj]
            self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(one, objects))
        return list(objects)

    return compile_sources


def build_extensions(root: Path, scratch: Path) -> list[Path]:
    """Compile the fast layer into ``scratch/lib``; the built files, relative to it."""
    from mypyc.build import mypycify
    from setuptools import Distribution
    from setuptools.command.build_ext import build_ext

    jobs = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)

    class ParallelBuildExt(build_ext):  # type: ignore[misc]
        def build_extensions(self) -> None:
            self.compiler.compile = parallel_compile(jobs).__get__(self.compiler)
            super().build_extensions()

    cwd = Path.cwd()
    os.chdir(root)  # mypy names a module from its path: sessionspec/fast/parse.py is sessionspec.fast.parse
    try:
        extensions = mypycify([f"--cache-dir={scratch / 'mypy'}", *compiled_sources(root)], opt_level=OPT_LEVEL,
                              multi_file=True, target_dir=str(scratch / "c"), group_name=GROUP_NAME)
        lib = scratch / "lib"
        distribution = Distribution({"name": "sessionspec", "ext_modules": extensions,
                                     "cmdclass": {"build_ext": ParallelBuildExt}})
        command = distribution.get_command_obj("build_ext")
        command.build_lib, command.build_temp, command.parallel = str(lib), str(scratch / "tmp"), jobs
        distribution.run_command("build_ext")
    finally:
        os.chdir(cwd)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return sorted(path.relative_to(lib) for path in lib.rglob(f"*{suffix}"))


class CompiledWhenPossible(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def _pure_reason(self, version: str) -> str | None:
        if self.target_name != "wheel" or version == "editable":
            return "editable"
        if pure_requested():
            return f"{PURE_ENV}=1"
        return missing_compiler()

    def dependencies(self) -> list[str]:
        return [] if pure_requested() else list(BUILD_REQUIRES)

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        reason = self._pure_reason(version)
        if reason == "editable":
            return
        if reason is not None:
            self.app.display_info(f"sessionspec: building the pure-Python wheel ({reason})")
            return
        self._scratch = tempfile.TemporaryDirectory(prefix="sessionspec-build-")
        scratch = Path(self._scratch.name)
        try:
            built = build_extensions(Path(self.root), scratch)
        except Exception as error:  # the compiler's diagnostics are above; the build goes on pure
            first = str(error).strip().splitlines()[:1]
            self.app.display_warning(f"sessionspec: building the pure-Python wheel (the compiled build failed: "
                                     f"{type(error).__name__}{': ' + first[0] if first else ''})")
            return
        build_data["force_include"].update({str(scratch / "lib" / path): str(path) for path in built})
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"sessionspec: building the compiled wheel ({len(built)} extension files)")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            scratch.cleanup()


def get_build_hook() -> type[BuildHookInterface]:
    return CompiledWhenPossible
