"""What each viewer sees of an Olympia battle, and what it may declare."""

from __future__ import annotations

from typing import Any

from rules.core import Field, State, Viewer, clone

from . import army
from .data import KINDS, SPECIAL_LIBRARY, STRUCTURE_CHOICES, STRUCTURE_DESTROYED_AT, STRUCTURES, SYSTEM_ID


def view(state: State, viewer: Viewer) -> dict[str, Any]:
    totals = army.totals(state)
    sides = {}
    for side, info in state["sides"].items():
        rows: dict[int, list[dict[str, Any]]] = {}
        for cid, c in army.units(state, side):
            # (each label reads with its count: "1 paladin", "2 paladins")
            troops = [
                {"kind": k.key, "label": k.called(n), "count": n, "start": c["start_troops"][k.key]}
                for k in KINDS if c["start_troops"].get(k.key, 0) > 0
                for n in [c["troops"].get(k.key, 0)]
            ]
            rows.setdefault(c["behind"], []).append({
                "id": cid,
                "name": c["name"],
                "leader": c["leader"],
                "behind": c["behind"],
                "state": c["state"],
                "health": c["health"],
                "wound": c["wound"],
                "controller": c["controller"],
                "mine": viewer.controls(state, cid) and not viewer.is_gm,
                "troops": troops,
                "men": sum(c["troops"].values()),
            })
        structure = info["structure"]
        sides[side] = {
            "name": army.side_name(state, side),
            "leader": info["leader"],
            "break_point": info["break_point"],
            "broken": info["broken"],
            "total": totals[side]["total"] if state["status"] != "setup" else army.num(army.total2(state, side)),
            "start_total": totals[side]["start"] if state["status"] != "setup" else army.num(army.total2(state, side)),
            "threshold": totals[side]["threshold"] if state["status"] != "setup" else army.num(2 * (army.total2(state, side) * info["break_point"] // 200)),
            "structure": None if not structure else {
                **structure,
                "label": STRUCTURES[structure["kind"]].label,
                "defence": STRUCTURES[structure["kind"]].defence,
                "shelters": STRUCTURES[structure["kind"]].shelters,
                "destroyed_at": STRUCTURE_DESTROYED_AT,
            },
            "rows": [
                {"behind": b, "label": army.row_name(b), "units": units} for b, units in sorted(rows.items())
            ],
        }
    return {
        "system": SYSTEM_ID,
        "status": state["status"],
        "round": state["round"],
        "next_phase": army.upcoming_phase(state),
        "options": {k: state["options"][k] for k in ("terrain", "defender", "terrain_defence", "weather", "opening_volley", "prisoners")},
        "sides": sides,
        "combatants": {
            cid: {"name": c["name"], "side": c["side"], "controller": c["controller"], "state": c["state"],
                  **({"seat": c["seat"]} if viewer.is_gm else {})}
            for cid, c in state["combatants"].items()
        },
        "specials": [dict(s) for s in state["specials"]],
        "special_library": [{"key": k, **v} for k, v in SPECIAL_LIBRARY.items()],
        "report": clone(state["report"]),
        "outcome": clone(state.get("outcome")),
        "kinds": [{"kind": k.key, "label": k.many, "attack": k.attack, "defence": k.defence, "missile": k.missile} for k in KINDS],
        "legal": legal(state, viewer),
    }


def legal(state: State, viewer: Viewer) -> list[dict[str, Any]]:
    legal: list[dict[str, Any]] = []
    if viewer.role == "spectator" or state["status"] == "ended":
        return legal
    behind_field = Field("behind", "Row (0 = front)", "int", 0, 0, 9).to_dict()
    bp_field = Field("break_point", "Break point (%)", "int", 50, 0, 100).to_dict()
    if state["status"] == "setup":
        for cid, c in state["combatants"].items():
            if viewer.controls(state, cid):
                legal.append({"type": "set_behind", "combatant": cid, "label": f"Move {army.poss(c['name'])} unit", "behind": c["behind"], "fields": [behind_field]})
        for side, info in state["sides"].items():
            leader = info["leader"]
            if viewer.is_gm:
                legal.append({"type": "set_break_point", "side": side, "label": f"Break point of {army.side_name(state, side)}", "break_point": info["break_point"], "fields": [bp_field]})
            elif viewer.controls(state, leader):
                legal.append({"type": "set_break_point", "combatant": leader, "side": side, "label": f"Break point of {army.side_name(state, side)}", "break_point": info["break_point"], "fields": [bp_field]})
        if viewer.is_gm:
            for side in state["sides"]:
                legal.append({"type": "set_structure", "side": side, "label": f"Structure of {army.side_name(state, side)}", "fields": [
                    Field("structure", "Structure", "choice", "none", choices=STRUCTURE_CHOICES).to_dict(),
                    Field("damage", "Damage", "int", 0, 0, 99).to_dict(),
                ]})
            legal.append({"type": "begin", "label": "Begin the battle"})
    if viewer.is_gm:
        legal.append({"type": "add_special", "label": "Add a special attack", "fields": [
            Field("preset", "From the library", "choice", "", choices=(("", "(own)"),) + tuple((k, v["name"]) for k, v in SPECIAL_LIBRARY.items())).to_dict(),
            Field("side", "Fights for", "choice", "A", choices=(("A", "side A"), ("B", "side B"))).to_dict(),
            Field("name", "Name", "text", "", 0, 40).to_dict(),
            Field("attacks", "Attacks", "int", None, 1, 100_000).to_dict(),
            Field("rating", "Attack rating", "int", None, 1, 10_000).to_dict(),
            Field("reach", "Reach", "choice", None, choices=(("any", "any man"), ("front", "front row only"))).to_dict(),
            Field("rounds", "Rounds (0 = every round)", "int", None, 0, 1000).to_dict(),
        ]})
        for sp in state["specials"]:
            legal.append({"type": "remove_special", "special": sp["id"], "label": f"Remove {sp['name']}"})
        if state["status"] == "active":
            legal.append({"type": "step", "by": "phase", "label": "Next phase"})
            legal.append({"type": "step", "by": "round", "label": "Next round"})
            legal.append({"type": "step", "by": "battle", "label": "Fight to the end"})
    return legal

