"""Who each AD&D combatant is: names, weapons, who may act now, how it stands, whose numbers whom
may see, and a declared action in words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core import GM_ONLY, PUBLIC, State, Viewer
from .data import ACTION_KINDS, MISSILES, MORALE_BANDS, SIDES, WEAPONS


def chebyshev(a: Mapping[str, Any], b: Mapping[str, Any]) -> int:
    dx: int = a["x"] - b["x"]
    dy: int = a["y"] - b["y"]
    return max(abs(dx), abs(dy))


def name_of(cid: str, state: Mapping[str, Any]) -> str:
    name: str = state["combatants"].get(cid, {}).get("name", cid)
    return name


def weapon_of(c: Mapping[str, Any]) -> dict[str, Any]:
    w = dict(WEAPONS.get(c.get("weapon", "natural"), WEAPONS["natural"]))
    if c.get("weapon") == "natural" or not w["damage"]:
        w["damage"] = c.get("damage") or "1d4"
    return w


def missile_of(c: Mapping[str, Any]) -> dict[str, Any]:
    return dict(MISSILES.get(c.get("missile", "none"), MISSILES["none"]))


def able(c: Mapping[str, Any]) -> bool:
    condition: object = c.get("condition", "ok")
    return condition == "ok"


def surprising_side(state: State) -> str | None:
    side = state["surprise"].get("side")
    if not side or not state["surprise"].get("segment"):
        return None
    return "B" if side == "A" else "A"


def actors(state: State) -> list[str]:
    """Who declares now: every able combatant, or only the surprising side during surprise."""
    side = surprising_side(state)
    return [cid for cid in state["order"] if able(state["combatants"][cid])
            and (side is None or state["combatants"][cid]["side"] == side)]


def stats_visibility(state: State, *cids: str) -> str:
    """Who may see words with the numbers of these combatants: everyone when all are the players'
    (their sheets are on the table), else the DM alone (an NPC's numbers are the DM's)."""
    return PUBLIC if all(state["combatants"][cid]["controller"] == "seat" for cid in cids) else GM_ONLY


def decl_visibility(state: State, cid: str) -> str:
    return PUBLIC if state["combatants"][cid]["controller"] == "seat" else GM_ONLY


def describe(state: State, a: Mapping[str, Any], *, note: bool = True) -> str:
    """A declared action in words; ``note``: with the note written on it (the DM's notes on an
    NPC's action are the DM's alone: they never leave the DM's screen)."""
    kind = a["kind"]
    target = name_of(a["target"], state) if a.get("target") else ""
    words = {
        "psionic": "psionic combat", "flee": "flee", "parley": "parley", "await": "wait and watch",
        "missile": f"shoot at {target}", "device": "use a device", "turn": f"turn {target}",
        "move": "move", "charge": f"charge {target}", "custom": "a task", "set": "set weapon against a charge",
        "melee": f"attack {target}", "none": "nothing",
    }.get(kind, kind)
    if kind == "spell":
        words = f"cast {a.get('spell', 'a spell')} ({a.get('casting_time', 1)} seg.)"
        if target:
            words += f" at {target}"
    if note and a.get("note"):
        words += f" ({a['note']})"
    if a.get("prepared"):
        words = f"prepare to {words}, {a.get('trigger')}"
    return f"[{a['letter']}] {words}"


def actors_all(state: State) -> list[str]:
    return [cid for cid in state["order"] if state["combatants"][cid]["condition"] in ("ok", "down")]


def condition_after(state: State, cid: str) -> str:
    t = state["combatants"][cid]
    if t["hp"] > 0:
        return ""
    if t["dies_at_zero"] or t["hp"] <= -10:
        t["condition"] = "dead"
        return " and dies"
    t["condition"] = "down"
    return " and falls unconscious" + (", bleeding" if t["hp"] < 0 else "")


def standing_by_side(state: State) -> dict[str, int]:
    return {side: sum(1 for c in state["combatants"].values() if c["side"] == side and able(c))
            for side in SIDES}


def condition_word(c: Mapping[str, Any]) -> str:
    band = c.get("morale")
    if c["condition"] == "ok":
        status = next((st for _top, key, _words, st in MORALE_BANDS if key == band), None)
        if status:
            return f"wounded, {status}" if c["hp"] < c["hp_max"] else status
        return "fighting" if c["hp"] >= c["hp_max"] else "wounded"
    if c["condition"] == "fled" and band in ("retreat", "panic"):
        return "retreated" if band == "retreat" else "fled in panic"
    return {"down": "down" + (" (stable)" if c["stable"] else ""), "dead": "dead", "fled": "fled",
            "surrendered": "surrendered"}[c["condition"]]


def sees_stats(state: State, viewer: Viewer, cid: str) -> bool:
    c = state["combatants"][cid]
    return viewer.is_gm or c["controller"] == "seat"


def auto_declaration(kind: str, target: str | None = None, by: str = "auto") -> dict[str, Any]:
    return {"kind": kind, "letter": ACTION_KINDS[kind][0], "target": target, "prepared": False, "trigger": "",
            "note": "", "delay": 0, "seconds": 0, "by": by}
