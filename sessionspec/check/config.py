"""``check``'s settings from a ``[tool.sessionspec]`` table, read as ruff reads its configuration, and ``--exclude``.

The table is looked for in the nearest ``pyproject.toml`` from the current directory upwards that has one
(a ``pyproject.toml`` without the table is passed over, as ruff passes over one without ``[tool.ruff]``), or in
the file ``--config FILE`` names; ``--isolated`` reads none.  Its keys::

    [tool.sessionspec]
    select = ["ALL"]                 # rule IDs, areas or ALL (sessionspec/check/selection.py)
    ignore = ["Q", "LOOP-12"]
    exclude = ["*.replay.jsonl", "snapshots/ralph-loop"]

An option given on the command line replaces the key of the same name.  An unknown key, or a value of the
wrong type, is a usage error (exit 2) naming the file: a misspelt key must not silently select nothing.

``exclude``: glob patterns for files and directories a directory walk leaves out (a file named on the command
line is always checked, as in ruff).  A pattern without ``/`` matches any one file or directory name on the
way (``*.replay.jsonl``, ``ralph-loop``); a pattern with ``/`` matches a path from the directory it is relative
to (the configuration file's for ``exclude``, the current one for ``--exclude``), and ``**`` matches any
number of directories (``tests/data/**/ralph-loop``).  A directory that matches leaves out everything under it.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePath
from typing import Final, final

KEYS: Final = ("select", "ignore", "exclude")


class ConfigError(ValueError):
    """A configuration file that cannot be used: the message names the file and what is wrong."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The ``[tool.sessionspec]`` table of ``path`` (None: no file found)."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    @property
    def root(self) -> Path:
        """What the file's ``exclude`` patterns are relative to: its directory."""
        return self.path.parent if self.path is not None else Path.cwd()


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` from ``start`` upwards with a ``[tool.sessionspec]`` table."""
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        tool = _read(candidate).get("tool") if candidate.is_file() else None
        if isinstance(tool, dict) and "sessionspec" in tool:
            return candidate
    return None


def _read(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as problem:
        raise ConfigError(f"{path}: cannot read: {problem.strerror or problem}") from None
    except tomllib.TOMLDecodeError as problem:
        raise ConfigError(f"{path}: not valid TOML: {problem}") from None


def _strings(path: Path, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ConfigError(f"{path}: [tool.sessionspec] {key} must be a list of strings")


def load_config(explicit: str | None, isolated: bool, start: Path | None = None) -> Config:
    """The settings of ``--config FILE``, else of the nearest ``pyproject.toml`` with the table, else none."""
    if isolated:
        return Config()
    path = Path(explicit) if explicit is not None else find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    tool = _read(path).get("tool", {})
    table = tool.get("sessionspec", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.sessionspec] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: [tool.sessionspec] has no key {', '.join(map(repr, unknown))} (the keys are {', '.join(KEYS)})")
    return Config(path=path.resolve(),
                  select=_strings(path, "select", table["select"]) if "select" in table else None,
                  ignore=_strings(path, "ignore", table["ignore"]) if "ignore" in table else None,
                  exclude=_strings(path, "exclude", table.get("exclude", [])))


def _parts(path: PurePath) -> tuple[str, ...]:
    return tuple(p for p in path.parts if p not in ("", "."))


def _match_from(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Does ``pattern`` (segments, ``**`` any number of them) match a leading part of ``parts``?"""
    if not pattern:
        return True  # the pattern matched a directory on the way: everything under it is left out
    if pattern[0] == "**":
        return any(_match_from(pattern[1:], parts[k:]) for k in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], pattern[0]) and _match_from(pattern[1:], parts[1:])


@final
@dataclass(frozen=True, slots=True)
class Exclusion:
    """Patterns, each with the directory it is relative to."""

    patterns: tuple[tuple[str, Path], ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def excludes(self, path: str) -> bool:
        """Is the walked file ``path`` (or a directory on its way) matched by a pattern?"""
        absolute = Path(os.path.abspath(path))
        for pattern, root in self.patterns:
            segments = _parts(PurePath(pattern))
            try:
                parts, under_root = _parts(absolute.relative_to(root)), True
            except ValueError:  # a path outside the root: its names as given
                parts, under_root = _parts(PurePath(path)), False
            if len(segments) == 1 and segments[0] != "**":
                if any(fnmatchcase(name, segments[0]) for name in parts):
                    return True
            elif under_root and _match_from(segments, parts):
                return True
        return False


def exclusion(command_line: Sequence[str], config: Config) -> Exclusion:
    """``--exclude`` (relative to the current directory) if given, else the configuration's ``exclude``."""
    if command_line:
        return Exclusion(tuple((p, Path.cwd()) for p in command_line))
    return Exclusion(tuple((p, config.root) for p in config.exclude))
