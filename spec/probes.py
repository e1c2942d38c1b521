"""Actions of the environment that rules speak about, for the scripts that drive the loop.

The model only ever defines what the harness does; what its environment does to it is the
script's.  PFX-6 speaks of a contributor that keeps the objects it returned and edits them
later: :class:`HeldObjects` is that contributor.  A script that plays it hands
``held.remember`` to the loop as ``Hooks.after_composition`` and calls ``held.edit()`` after
every turn, as the harness adapter's contributors do (the state machines, the reference adapter,
the simulator and the proof scenarios all do).  Only an aliasing cache -- a broken model -- can
observe the edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from sessionspec.model.prefix import Composition

MUTATION_MARK: Final = "<mutated after composition>"


@dataclass
class HeldObjects:
    """The message objects that contributors with ``mutate_after`` returned at the latest composition."""

    held: tuple[list[object], ...] = field(default=())

    def remember(self, comp: Composition) -> None:
        """``Hooks.after_composition``: keep what the contributors still hold (``Composition.mutators_own``),
        beside what they returned before (the harness adapter's contributors keep every list they returned)."""
        self.held = self.held + comp.mutators_own

    def edit(self) -> None:
        """After a turn: each such contributor appends a text block to the content of what it returned."""
        for mine in self.held:
            for message in mine:
                if isinstance(message, dict):
                    content = message.get("content")
                    if isinstance(content, list):
                        content.append({"type": "text", "text": MUTATION_MARK})
