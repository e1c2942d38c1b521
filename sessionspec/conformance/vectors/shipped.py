"""Where the committed vectors are read from by default: the copy an installed wheel ships as
``sessionspec/_vectors``, which in a source checkout is a link to ``vectors/``.  The pytest plugin, ``mutants`` and
``vectors pack`` ask here, so an installed sessionspec finds the vectors it ships (a wheel has no ``vectors/``
beside the package).  Importing this module imports nothing of the kit: the plugin loads in every pytest run."""

from __future__ import annotations

from pathlib import Path
from typing import Final

PACKAGED: Final = Path(__file__).resolve().parents[2] / "_vectors"
SOURCE: Final = Path(__file__).resolve().parents[3] / "vectors"


def shipped_vectors() -> Path:
    """The shipped copy, resolved (a checkout's link names ``vectors/``), else a source tree's ``vectors/``."""
    return PACKAGED.resolve() if PACKAGED.is_dir() else SOURCE
