"""Planted bug in ``model.header.canonical``: keeps an empty ``system`` string (HDR-2 drops it)."""

from __future__ import annotations

from sessionspec.model.header import EpochHeader
from sessionspec.model.jsonval import ABSENT, js_length
from sessionspec.model.log import Dialect


def canonical(h: EpochHeader, dialect: Dialect = Dialect.A55) -> EpochHeader:
    """HDR-2 with a presence test that forgets the length.

    post: all(v is ABSENT or (js_length(v) or 0) > 0 for v in (__return__.system, __return__.tools, __return__.message_prefix))
    """
    def present(v: object) -> bool:
        length = js_length(v)  # type: ignore[arg-type]
        return length is not None and length > 0

    return EpochHeader(
        config=h.config,
        system=h.system,  # BUG: should be ABSENT unless present with length > 0
        tools=h.tools if present(h.tools) else ABSENT,
        message_prefix=h.message_prefix if dialect is Dialect.A55 and present(h.message_prefix) else ABSENT,
    )
