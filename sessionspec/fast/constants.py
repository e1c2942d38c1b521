"""The model's dialects and its 'no key here' value, as constants of the compiled layer.

The checker compares an event's dialect, and a value with ``ABSENT``, at nearly every event.
Compiled (mypyc, docs/performance.md "Compiled"), a ``Final`` constant of a compiled module is
read directly; an imported name is looked up in the module's dictionary at every read, and an
enum member (``Dialect.D08``) besides goes through the enum metaclass's ``__getattr__`` hook,
about 900 instructions a read (docs/performance.md, step 10).  These are the model's own
objects, so ``is`` compares the same: interpreted, nothing changes.
"""

from __future__ import annotations

from typing import Final, Literal

from sessionspec.model.jsonval import Absent
from sessionspec.model.log import Dialect

A55: Final = Dialect.A55
D08: Final = Dialect.D08
ABSENT: Final[Literal[Absent.ABSENT]] = Absent.ABSENT
