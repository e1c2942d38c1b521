"""Building the model's frozen, slotted dataclasses through their slots (issue 26).

A frozen dataclass's ``__init__`` is interpreted code, called with keywords, that sets each field
with ``object.__setattr__``: about 14 000 instructions for a four-field class.  The fast layer
builds the objects it makes at nearly every event (an event, an append's surface plan) by
setting the slots through their descriptors, as ``__init__`` does, without the call.  A user
checks once, at import, that the class is such a dataclass (:func:`plain_fields`), and its tests
compare the objects with the definition's (dataclass equality reads every field).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from types import MemberDescriptorType
from typing import Any, Final

new_instance: Final = object.__new__


def plain_fields(cls: type, names: tuple[str, ...]) -> bool:
    """Whether ``cls`` is a slotted dataclass whose fields are ``names``, in order, with nothing run
    at construction but the field assignments (no ``__post_init__``)."""
    slotted = all(isinstance(getattr(cls, name, None), MemberDescriptorType) for name in names)
    return slotted and tuple(f.name for f in fields(cls)) == names and not hasattr(cls, "__post_init__")


def slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """What sets the slot ``name`` of an instance of ``cls`` (the descriptor's ``__set__``)."""
    setter: Callable[[Any, Any], None] = getattr(cls, name).__set__
    return setter
