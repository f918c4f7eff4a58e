"""What each viewer sees of a duel: the open stat blocks, and a pending choice only to whoever made it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.core import State, Viewer
from rules.physical import pending

from .data import OPTION_HELP, OPTION_LABELS, OPTIONS, VISIBLE_KEYS
from .ratings import capped, gear_label


def may_see_choice(state: Mapping[str, Any], cid: str, own: set[str], gm: bool) -> bool:
    """A pending choice shows only to whoever made it: its player, or the GM for a GM-played combatant.

    The GM's screen is shared with the table, so it shows that a player or the computer has chosen,
    never what, until the turn resolves.
    """
    if cid in own:
        return True
    return gm and state["combatants"][cid]["controller"] == "gm"


def held_choice(state: Mapping[str, Any]) -> str | None:
    """The combatant whose choice is declared but held while the battle waits for real dice (the
    choice that ends a turn needs the turn's rolls: :mod:`rules.physical` keeps it until they come).
    Its card says it has chosen, as any other chosen card does; what it chose stays unsaid.

    >>> held_choice({"physical": {"pending": {"declaration": {"type": "choose", "combatant": "c2", "option": "attack"}}}})
    'c2'
    >>> held_choice({}), held_choice({"physical": {"pending": {"declaration": {"type": "resolve"}}}})
    (None, None)
    """
    waiting = pending(state)
    declaration = waiting.get("declaration") if isinstance(waiting, Mapping) else None
    if isinstance(declaration, Mapping) and declaration.get("type") == "choose" and isinstance(declaration.get("combatant"), str):
        return str(declaration["combatant"])
    return None


def project(state: Mapping[str, Any], own: set[str], gm: bool) -> dict[str, Any]:
    """What a viewer sees: everything public, plus the pending choices of ``own`` (all for the GM).

    The view shares nested values (gear, the last turn, the outcome) with the state instead of
    copying them: a state is never changed once made (``apply`` works on a copy), and a view is only
    read and sent. It is computed for every viewer after every declaration, so copies would cost."""
    combatants: dict[str, Any] = {}
    held = held_choice(state) if state.get("status") == "active" else None
    for cid in state["order"]:
        c = state["combatants"][cid]
        entry = {key: c[key] for key in VISIBLE_KEYS if key in c}
        entry["id"] = cid
        for slot, stat in (("weapon", "offence"), ("armour", "defence")):
            item = c.get(slot)
            entry[slot] = (
                {**item, "effective": capped(item["bonus"], c[stat])} if item else None
            )
            entry[f"{slot}_label"] = gear_label(item, c[stat])
        entry["has_chosen"] = state["choices"].get(cid) is not None or cid == held
        entry["mine"] = cid in own
        if may_see_choice(state, cid, own, gm):
            entry["choice"] = state["choices"].get(cid)
        if gm or cid in own:
            entry["temperament"] = c.get("temperament", "steady")
        combatants[cid] = entry
    view: dict[str, Any] = {
        "system": "phantoms-bane",
        "status": state.get("status"),
        "turn": state.get("turn"),
        "order": list(state["order"]),
        "combatants": combatants,
        "mine": [cid for cid in state["order"] if cid in own],
        "waiting_for": [
            cid
            for cid in state["order"]
            if state["choices"].get(cid) is None and cid != held and state.get("status") == "active"
        ],
        "last_turn": state.get("last_turn"),
        "outcome": state.get("outcome"),
        "options": {"labels": dict(OPTION_LABELS)},
    }
    if gm:
        view["escape_possible"] = bool(state.get("escape_possible", True))
        view["chosen_by"] = dict(state.get("chosen_by", {}))
    return view


def legal(state: State, viewer: Viewer, own: set[str]) -> list[dict[str, Any]]:
    """What ``viewer`` may declare now: the four options of each combatant of theirs (every one for
    the GM), and the GM's forced resolution and escape ruling."""
    if state.get("status") != "active":
        return []
    legal: list[dict[str, Any]] = []
    actors = list(state["order"]) if viewer.is_gm else [cid for cid in state["order"] if cid in own]
    for cid in actors:
        combatant = state["combatants"][cid]
        current = state["choices"].get(cid)
        for option in OPTIONS:
            legal.append(
                {
                    "type": "choose",
                    "combatant": cid,
                    "option": option,
                    "label": OPTION_LABELS[option],
                    "help": OPTION_HELP[option],
                    "name": combatant["name"],
                    "controller": combatant["controller"],
                    "selected": current == option and may_see_choice(state, cid, own, viewer.is_gm),
                }
            )
    if viewer.is_gm:
        missing = [
            state["combatants"][cid]["name"] for cid in state["order"] if not state["choices"][cid]
        ]
        legal.append(
            {
                "type": "force_resolve",
                "label": "Force resolution",
                "help": "Settle the turn now; the computer picks for "
                + (" and ".join(missing) if missing else "nobody")
                + ".",
            }
        )
        possible = bool(state.get("escape_possible", True))
        legal.append(
            {
                "type": "set_escape",
                "possible": not possible,
                "label": "Block escape" if possible else "Allow escape",
                "help": "Running away is currently "
                + ("possible." if possible else "impossible (hidden from the players)."),
            }
        )
    return legal
