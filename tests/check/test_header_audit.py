"""The header audit's field types (sessionspec/check/header_audit.py).

HDR-1 (A55) / DIA-8 (D08): every typed header field that is present and not a
placeholder (FMT-6) must have its type; each wrong field is one finding that
names the field.
"""

from __future__ import annotations

import pytest

from sessionspec.model.header_log import check_header_types
from sessionspec.model.jsonval import freeze
from sessionspec.model.log import Dialect, Event, make_event


def _header(header: dict[str, object]) -> Event:
    return make_event("request/header", seq=4, time=0, data=freeze({"header": header, "reason": "initial"}))


CONFIG = {"provider": "p", "model": "m"}


@pytest.mark.parametrize("value,wrong", [(100, False), ("100", True), (1.5, True), (True, True)])
def test_HDR_1_max_tokens_must_be_an_integer(value: object, wrong: bool) -> None:
    found = check_header_types(_header({"config": {**CONFIG, "maxTokens": value}}), Dialect.A55)
    assert [(f.rule, f.seq) for f in found] == ([("HDR-1", 4)] if wrong else [])
    if wrong:
        assert found[0].reason.startswith("request/header config.maxTokens is ") and "not an integer" in found[0].reason


def test_DIA_8_d08_adapter_defaults_must_be_an_object() -> None:
    found = check_header_types(_header({"config": CONFIG, "adapterDefaults": [1]}), Dialect.D08)
    assert [(f.rule, f.seq) for f in found] == [("DIA-8", 4)]
    assert found[0].reason.startswith("request/header adapterDefaults is [1], not an object")
    assert check_header_types(_header({"config": CONFIG, "adapterDefaults": {"temperature": 1}}), Dialect.D08) == []
