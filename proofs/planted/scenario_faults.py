"""The scenario contracts of :mod:`proofs.scenarios` run on broken loop variants.

One CrossHair target per planted fault: the same postcondition as the real
contract, the body runs the scenario with the fault installed
(:func:`proofs.planted.faults.installed`).  ``proofs/run --planted`` and
``tests/proofs/test_proofs.py`` require CrossHair to refute every one of them, and
replay the counterexample concretely.
"""

from __future__ import annotations

from proofs.planted.faults import LoopFault, installed
from proofs.scenario_choices import ListenerChoice, ToolsChoice  # noqa: F401 - read by the pre: lines

# discard_holds and pfx_1 are used by the contracts' post: lines.
from proofs.scenarios import Played, Scenario, Size, discard_holds, inv_1, order_holds, pfx_1, play  # noqa: F401


def cache_interrupted(s: Scenario) -> Played:
    """Discard under LoopFault.CACHE_INTERRUPTED.

    post: discard_holds(__return__) is None
    """
    with installed(LoopFault.CACHE_INTERRUPTED):
        return play(s)


def recompose_every_turn(s: Scenario) -> Played:
    """Freeze under LoopFault.RECOMPOSE_EVERY_TURN.

    post: pfx_1(__return__) is None
    """
    with installed(LoopFault.RECOMPOSE_EVERY_TURN):
        return play(s)


def no_clone(s: Scenario) -> Played:
    """Freeze under LoopFault.NO_CLONE.

    The search keeps to two turns without steering, a request listener or tools: PFX-6 shows only through a
    contributor's later edit, and those three choices (issue 43) multiply the paths the budget must cover
    without reaching the cache (the replay still checks the real ``freeze`` on the counterexample).

    pre: s.listener is ListenerChoice.NONE and s.tools is ToolsChoice.NONE
    pre: s.t1.steering is Size.NONE and s.t2.steering is Size.NONE
    post: pfx_1(__return__) is None
    """
    with installed(LoopFault.NO_CLONE):
        return play(s)


def ignore_scope(s: Scenario) -> Played:
    """Freeze (P-PFX-4) under LoopFault.IGNORE_SCOPE.

    post: pfx_1(__return__) is None
    """
    with installed(LoopFault.IGNORE_SCOPE):
        return play(s)


def prefix_after_history(s: Scenario) -> Played:
    """Reconstructability under LoopFault.PREFIX_AFTER_HISTORY.

    post: inv_1(__return__) is None
    """
    with installed(LoopFault.PREFIX_AFTER_HISTORY):
        return play(s)


def snapshot_after_request(s: Scenario) -> Played:
    """Reconstructability under LoopFault.SNAPSHOT_AFTER_REQUEST.

    post: inv_1(__return__) is None
    """
    with installed(LoopFault.SNAPSHOT_AFTER_REQUEST):
        return play(s)


def swap_system_tools(s: Scenario) -> str | None:
    """Reconstructability under LoopFault.SWAP_SYSTEM_TOOLS: the loop and the
    rebuild share the bug (the property is evaluated with the fault installed),
    so P-INV-1 holds; only the callee's own postcondition can report it, and
    stock CrossHair drops such paths silently (strict callee contracts,
    proofs/json_plugin.py, report them).

    post: __return__ is None
    """
    with installed(LoopFault.SWAP_SYSTEM_TOOLS):
        return inv_1(play(s))


def steering_lifo(s: Scenario) -> Played:
    """Orders (LOOP-13) under LoopFault.STEERING_LIFO.

    post: order_holds(__return__, s) is None
    """
    with installed(LoopFault.STEERING_LIFO):
        return play(s)


def seed_keys_win(s: Scenario) -> Played:
    """Orders (LOOP-7/8) under LoopFault.SEED_KEYS_WIN.

    post: order_holds(__return__, s) is None
    """
    with installed(LoopFault.SEED_KEYS_WIN):
        return play(s)
