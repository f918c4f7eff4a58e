"""The GM's socket events for hidden combatants (rules/hiding.py): ``hide_combatant`` and
``reveal_combatant``, ``{battle_id, combatant, expected_v?}``, the GM only.

Each is a board command of the engine, logged like every other (replay, undo and the verifier keep
it). After any command that hid or revealed one (these, or an undo of one), the table's board
remembers which combatants of its battle are hidden (``board["hidden"] = {"battle", "ids"}``:
``Authority._note_hidden``), so that the table payload gives their token looks to the GM alone
(:func:`webapp.projection.hidden_tokens`), and every room gets the table again.
"""

from __future__ import annotations

from typing import Any

from .sockets import Connection, Hub, _battle_id, handler


def _set(hub: Hub, conn: Connection, payload: dict[str, Any], hidden: bool) -> dict[str, Any]:
    battle_id = _battle_id(hub, conn, payload)
    result = hub.service.set_hidden(battle_id, conn.viewer, payload.get("combatant"), hidden,
                                    expected_v=payload.get("expected_v"))
    return {"v": result.version}


@handler("hide_combatant", gm_only=True)
def on_hide_combatant(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, combatant}``: the GM hides a combatant from the table (its token, name, square
    and deeds leave every other screen)."""
    return _set(hub, conn, payload, True)


@handler("reveal_combatant", gm_only=True)
def on_reveal_combatant(hub: Hub, conn: Connection, payload: dict[str, Any]) -> dict[str, Any]:
    """``{battle_id, combatant}``: the GM reveals a hidden combatant (every screen shows it arrive)."""
    return _set(hub, conn, payload, False)


#: the GM's events for hidden combatants
HIDING_EVENTS = ("hide_combatant", "reveal_combatant")
