"""``--min-run N|P%`` and ``--fail-on-skip`` (issue 45, part 2): a run that tested almost nothing is not green.

``vectors run``, ``conform`` and the pytest plugin take both.  ``N`` is the fewest vectors (traces) that
must run, ``P%`` the least share of those selected (generated); the default, ``1``, says a run where nothing
ran fails.  ``--fail-on-skip`` fails any run that skipped something.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from typing import Final, final

DEFAULT_MIN_RUN: Final = "1"


@final
@dataclass(frozen=True, slots=True)
class Floor:
    count: int | None = 1  # at least this many ran
    percent: float | None = None  # at least this share of the total ran
    fail_on_skip: bool = False
    options: str = "--"  # how the options are spelled where they were given (the plugin's: --sessionspec-)

    def problem(self, ran: int, total: int, skipped: int, unit: str) -> str | None:
        """Why a run of ``ran`` out of ``total`` (``skipped`` of them skipped) is below the floor, or None."""
        if self.fail_on_skip and skipped:
            return f"{skipped} {unit} skipped ({self.options}fail-on-skip)"
        if self.count is not None and ran < self.count:
            return f"{ran} {unit} ran, fewer than {self.options}min-run {self.count}"
        if self.percent is not None and ran * 100 < self.percent * total:
            share = 100.0 * ran / total if total else 0.0
            return f"{ran} of {total} {unit} ran ({share:.1f} %), less than {self.options}min-run {self.percent:g}%"
        return None

    def describe(self) -> str:
        least = f"{self.percent:g}%" if self.percent is not None else str(self.count)
        return f"min-run {least}" + (", fail-on-skip" if self.fail_on_skip else "")


def parse_min_run(text: str) -> Floor:
    """``N`` or ``P%`` (a usage error otherwise)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(%?)\s*", text)
    if found is None or (not found.group(2) and "." in found.group(1)):
        raise argparse.ArgumentTypeError(f"{text!r}: give a count (N) or a share (P%), e.g. 50 or 90%")
    value = float(found.group(1))
    if found.group(2):
        if not 0 <= value <= 100:
            raise argparse.ArgumentTypeError(f"{text!r}: a share is 0% to 100%")
        return Floor(count=None, percent=value)
    return Floor(count=int(value))


def add_floor_arguments(parser: argparse.ArgumentParser, unit: str) -> None:
    parser.add_argument("--min-run", type=parse_min_run, default=parse_min_run(DEFAULT_MIN_RUN), metavar="N|P%",
                        help=f"fail (exit 1) when fewer than N {unit}, or less than P%% of them, ran (not skipped) "
                             f"(default {DEFAULT_MIN_RUN}: a run where nothing ran fails)")
    parser.add_argument("--fail-on-skip", action="store_true",
                        help=f"fail (exit 1) when any of the {unit} was skipped (default: a skip is not a failure)")


def floor_of(args: argparse.Namespace) -> Floor:
    chosen: Floor = args.min_run
    return Floor(count=chosen.count, percent=chosen.percent, fail_on_skip=bool(args.fail_on_skip))


__all__ = ["DEFAULT_MIN_RUN", "Floor", "add_floor_arguments", "floor_of", "parse_min_run"]
