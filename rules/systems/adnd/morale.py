"""What a failed morale check does (ruling AD&D-4): falling back keeps the declared action, a
retreat or a panic replaces it with flight, a surrender ends the combatant's part in the fight."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core import Event, State, event
from .combatants import actors, auto_declaration


def morale_fails(state: State, cid: str, band: str, margin: int, events: list[Event]) -> None:
    """What a failed morale check does (ruling AD&D-4): falling back keeps the declared action;
    a retreat or a panic replaces it with flight; a surrender ends the combatant's part in the fight."""
    c = state["combatants"][cid]
    c["morale"], c["morale_margin"] = band, margin
    if band in ("retreat", "panic"):
        replace_with_flight(state, cid, events)
    elif band == "surrender":
        c["condition"] = "surrendered"
        state["casting"].pop(cid, None)
        if state["phase"] == "declarations":
            state["declarations"].pop(cid, None)
        for a in state["queue"]:
            if a["combatant"] == cid and a["status"] in ("pending", "readied"):
                a["status"] = "cancelled"
                a["why"].append("surrendered")
        events.append(event("combatant.surrendered", f"{c['name']} surrenders and stops fighting.",
                            combatant=cid))


def replace_with_flight(state: State, cid: str, events: list[Event]) -> None:
    c = state["combatants"][cid]
    if state["phase"] == "declarations" and cid in actors(state):
        state["declarations"][cid] = flight_declaration(c)
    if state["phase"] == "resolution":
        for a in state["queue"]:
            if a["combatant"] == cid and a["status"] in ("pending", "readied"):
                a["status"] = "cancelled"
        last = state["last_key"] or [0, 0, 0]
        band = c.get("morale") or "panic"
        what = "retreat" if band == "retreat" else "flight"
        state["queue"].append({
            "id": f"{state['round']}.flee.{cid}", "combatant": cid, "side": c["side"], "letter": "A",
            "kind": "flee", "target": None, "segment": last[1], "key": [last[0], last[1], last[2] + 1],
            "n": -1, "status": "pending",
            "why": ["morale", f"morale failed by {c.get('morale_margin', 0)}: {what} replaces the declared action"],
            "hidden": False, "prepared": False, "trigger": "", "attacks": 1, "always": False, "delay": 0,
            "label": "[A] flee", "morale": band,
        })


def flight_declaration(c: Mapping[str, Any]) -> dict[str, Any]:
    band = c.get("morale") or "panic"
    return {**auto_declaration("flee"), "morale": band, "morale_margin": c.get("morale_margin", 0)}
