"""Planted bug in ``model.wire.build_request``: ``system`` and ``tools`` swapped (WIRE-1 takes each from its own slot)."""

from __future__ import annotations

from collections.abc import Sequence

from sessionspec.model.header import EpochHeader, prefix_messages
from sessionspec.model.jsonval import Json, get
from sessionspec.model.wire import Request


def build_request(header: EpochHeader, boundary: Sequence[Json]) -> Request:
    """WIRE-1/2 with two slots crossed.

    post: __return__.system is header.system and __return__.tools is header.tools
    """
    config = header.config
    return Request(
        provider=get(config, "provider"),
        model=get(config, "model"),
        messages=prefix_messages(header) + tuple(boundary),
        system=header.tools,  # BUG: the system slot comes from header.system
        tools=header.system,
    )
