"""What each viewer sees of a one-die duel: the hits, and a roll of the round only to its roller
(and the GM) until both are in. The duel's own part lives under one key, ``duel``; the common keys
(rules/contract.py's VIEW_KEYS) are read off it by the hooks of system.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.core import State, Viewer


def project(state: State, viewer: Viewer) -> dict[str, Any]:
    combatants = []
    for cid in state["order"]:
        c = state["combatants"][cid]
        face = state["rolled"].get(cid)
        sees = viewer.is_gm or viewer.controls(state, cid)
        combatants.append({
            "id": cid, "name": c["name"], "side": c["side"], "controller": c["controller"],
            **({"seat": c["seat"]} if viewer.is_gm else {}),
            "hits": c["hits"], "out": c["out"],
            "has_rolled": face is not None,
            "roll": face if sees else None,
        })
    waiting = [cid for cid in state["order"] if state["rolled"].get(cid) is None] if state["status"] == "active" else []
    return {
        "system": state["system"],
        "status": state["status"],
        "duel": {
            "round": state["round"],
            "hits_to_win": state["options"]["hits_to_win"],
            "combatants": combatants,
            "waiting_for": waiting,
            "last_round": state["last_round"],
            "outcome": state["outcome"],
        },
        "legal": legal(state, viewer),
    }


def legal(state: Mapping[str, Any], viewer: Viewer) -> list[dict[str, Any]]:
    if state["status"] != "active" or viewer.role == "spectator":
        return []
    out: list[dict[str, Any]] = []
    for cid in state["order"]:
        if state["rolled"].get(cid) is None and (viewer.is_gm or viewer.controls(state, cid)):
            name = state["combatants"][cid]["name"]
            out.append({"type": "roll", "combatant": cid, "label": f"Roll for {name}" if viewer.is_gm else "Roll the die"})
    if viewer.is_gm:
        out.append({"type": "force", "label": "Roll for the rest", "help": "Roll now for every duellist who has not yet."})
    return out
