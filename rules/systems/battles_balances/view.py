"""What each viewer of a Battles&Balances battle sees: the combatants with their reach, ranges, luck
and pools, the clock and its timeline, and what the viewer may declare now (the acting character's
actions with their cost in AP, the GM's tools).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from rules.core import Field, State, Viewer

from .board import armed, distance, in_reach, melee_reach, move_cost, occupant, range_band, walkable_squares
from .combat import luck_state
from .data import ATTRIBUTES, LUCK_CHOICES, THRESHOLDS
from .turns import next_actor, timeline


def view(system_id: str, state: State, viewer: Viewer) -> dict[str, Any]:
    """The projection of ``state`` for ``viewer`` (only the GM's notes are kept from the others)."""
    combatants = []
    own = set(viewer.own_combatants(state))
    for cid in state["order"]:
        c = state["combatants"][cid]
        entry = {k: copy.deepcopy(v) for k, v in c.items() if k != "notes"}
        if viewer.is_gm:
            entry["notes"] = c.get("notes", "")
        entry["mine"] = cid in own
        entry["reach"] = melee_reach(c)
        entry["luck"] = luck_state(state, c)
        entry["borrowed"] = c["ap"] < 0
        entry["ranges"] = {
            oid: range_band(c, o, state) for oid, o in state["combatants"].items() if oid != cid and not o["defeated"]
        }
        entry["attack_pool"] = f"{c['agility']}d{c['size']}" + (f"+{c['weapon_attack']}" if armed(c) and c["weapon_attack"] else "")
        entry["defence_pool"] = f"{c['speed']}d{c['size']}" + (f"+{c['shield_defence']}" if c["shield_defence"] else "")
        combatants.append(entry)
    actor = state["actor"]
    return {
        "system": system_id,
        "status": state["status"],
        "turn": state["turn"],
        "actor": actor,
        "actor_name": state["combatants"][actor]["name"] if actor else None,
        "next": next_actor(state),
        "timeline": timeline(state),
        "grid": {"width": state["options"]["grid_width"], "height": state["options"]["grid_height"]},
        "blocked": copy.deepcopy(state.get("blocked", [])),
        "options": copy.deepcopy(state["options"]),
        "combatants": combatants,
        "last_result": copy.deepcopy(state.get("last_result")),
        "outcome": copy.deepcopy(state.get("outcome")),
        "thresholds": [list(t) for t in THRESHOLDS],
        "legal": legal(state, viewer),
    }


def legal(state: State, viewer: Viewer) -> list[dict[str, Any]]:
    """Declaration templates this viewer may send now, each with its cost in AP where it has one."""
    if viewer.role == "spectator":
        return []
    out: list[dict[str, Any]] = []
    actor = state["actor"]
    if state["status"] == "active" and actor and viewer.controls(state, actor):
        c = state["combatants"][actor]
        if viewer.is_gm or c["controller"] == "seat":
            out += actions_for(state, c, viewer)
        if viewer.is_gm and c["controller"] == "computer":
            out.append({"type": "computer_turn", "label": f"Let the computer play {c['name']}", "tool": True,
                        "fields": []})
    if viewer.is_gm:
        out += gm_templates(state)
    return out


def actions_for(state: Mapping[str, Any], c: Mapping[str, Any], viewer: Viewer) -> list[dict[str, Any]]:
    """What the acting character can do now, each with its AP cost and the balance it leaves."""
    out: list[dict[str, Any]] = []
    cid = c["id"]

    def entry(kind: str, label: str, cost: int, **extra: Any) -> dict[str, Any]:
        return {"type": kind, "combatant": cid, "label": label, "cost": cost, "ap_after": c["ap"] - cost,
                "borrows": c["ap"] - cost < 0, **extra}

    enemies = [state["combatants"][o] for o in state["order"]
               if state["combatants"][o]["side"] != c["side"] and not state["combatants"][o]["defeated"]]
    others = [state["combatants"][o] for o in state["order"] if o != cid and not state["combatants"][o]["defeated"]]
    # foes first, the nearest first; an attack on an ally comes after every other action, marked as one
    # (a phone drew "Attack Baerg the Fighter", the prince's own ally, as its first and largest button)
    reach = melee_reach(c)
    on_allies: list[dict[str, Any]] = []
    for t in sorted(others, key=lambda o: distance(c, o)):
        ally = t["side"] == c["side"]
        if in_reach(state, c, t, reach):
            weapon = c["weapon"] if armed(c) else "bare hands"
            (on_allies if ally else out).append(entry("attack", f"Attack {t['name']} ({weapon})", c["attack_cost"],
                                                      target=t["id"], ally=ally))
    if c["launcher"] and c["ammo"] > 0:
        for t in sorted(others, key=lambda o: distance(c, o)):
            ally = t["side"] == c["side"]
            if distance(c, t) <= c["missile_range"]:
                (on_allies if ally else out).append(entry("shoot", f"Shoot {t['name']} ({c['launcher']}, {c['ammo']} left)",
                                                          c["attack_cost"], target=t["id"], ally=ally))
    if c["weapon"] and not c["weapon_drawn"]:
        out.append(entry("draw", f"Draw the {c['weapon']}", c["weapon_weight"]))
    width, height = state["options"]["grid_width"], state["options"]["grid_height"]
    walkable = walkable_squares(state, c)
    destinations = []
    for y in range(height):
        for x in range(width):
            if (x, y) == (c["x"], c["y"]) or occupant(state, x, y) or (walkable is not None and (x, y) not in walkable):
                continue
            cost, left = move_cost(state, c, x, y)
            destinations.append({"x": x, "y": y, "cost": cost, "leaves_reach": bool(left)})
    if destinations:
        cheapest = min(d["cost"] for d in destinations)
        out.append({"type": "move", "combatant": cid, "label": "Move", "cost": cheapest, "ap_after": c["ap"] - cheapest,
                    "borrows": c["ap"] - cheapest < 0, "params": ["x", "y"], "destinations": destinations,
                    "cost_per_square": state["options"]["move_cost"], "enemies_near": len(enemies)})
    out.append(entry("pass", "Wait (end the turn, keep the points)", 0))
    out += on_allies
    if viewer.is_gm:
        out.append(entry("custom_action", "Other action (GM sets the cost)", 0, params=["cost", "label"],
                         fields=[Field("cost", "Cost in AP", "int", 1, 0, 999).to_dict(),
                                 Field("label", "What is done", "text", "", 0, 80).to_dict()]))
    return out


def gm_templates(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    names = tuple((cid, state["combatants"][cid]["name"]) for cid in state["order"])
    who = (("", "Someone else (type the dice)"), *names)
    attrs = tuple((a, a.capitalize()) for a in ATTRIBUTES)
    luck = (*LUCK_CHOICES, ("pending", "The character's own blessing or curse"))

    def roller_fields(prefix: str, title: str) -> list[dict[str, Any]]:
        return [
            Field(prefix + "combatant", f"{title}: character", "choice", "", choices=who, group=title).to_dict(),
            Field(prefix + "attribute", f"{title}: attribute", "choice", "muscle", choices=attrs, group=title).to_dict(),
            Field(prefix + "name", f"{title}: name (if not a character)", "text", "", 0, 40, group=title).to_dict(),
            Field(prefix + "dice", f"{title}: dice (if not a character)", "int", 3, 0, 50, group=title).to_dict(),
            Field(prefix + "size", f"{title}: die size (if not a character)", "int", 8, 2, 100, group=title).to_dict(),
            Field(prefix + "bonus", f"{title}: bonus per roll", "int", 0, -100, 100, group=title).to_dict(),
            Field(prefix + "luck", f"{title}: luck", "choice", "normal", choices=luck, group=title).to_dict(),
        ]

    difficulty = tuple((n, f"{n.capitalize()} ({v})") for n, v in THRESHOLDS) + (("custom", "Custom target"),)
    out: list[dict[str, Any]] = [
        {"type": "check", "label": "Static check", "tool": True, "fields": [
            Field("label", "What is tried", "text", "", 0, 80).to_dict(),
            *roller_fields("", "Who"),
            Field("difficulty", "Difficulty", "choice", "routine", choices=difficulty).to_dict(),
            Field("target", "Custom target", "int", 30, 1, 1000).to_dict(),
            Field("failure_wounds", "Wounds if it fails (a character only)", "int", 0, 0, 9999).to_dict(),
        ]},
        {"type": "contest", "label": "Contest", "tool": True, "fields": [
            Field("label", "What is contested", "text", "", 0, 80).to_dict(),
            *roller_fields("a_", "First side"),
            *roller_fields("b_", "Second side"),
            Field("mode", "Scoring", "choice", state["options"]["contest_mode"],
                  choices=(("summed", "Three rolls summed"), ("best_of_three", "Best two of three"))).to_dict(),
        ]},
    ]
    if names:
        pick = Field("combatant", "Character", "choice", names[0][0], choices=names).to_dict()
        out += [
            {"type": "heal", "label": "Heal wounds", "tool": True, "fields": [
                pick, Field("amount", "Wounds removed", "int", 5, 1, 9999).to_dict(),
                Field("means", "By", "choice", "rest", choices=(("food", "Food"), ("rest", "Rest"),
                                                               ("healer", "A healer"), ("other", "Other"))).to_dict()]},
            {"type": "cure", "label": "Cure an effect", "tool": True, "fields": [
                pick, Field("effect", "Effect (empty = all)", "text", "", 0, 30).to_dict()]},
            {"type": "bless", "label": "Bless or curse", "tool": True, "fields": [
                pick, Field("kind", "Kind", "choice", "blessing", choices=(("blessing", "Blessing"), ("curse", "Curse"),
                                                                          ("clear", "Lift all"))).to_dict(),
                Field("count", "How many", "int", 1, 1, 20).to_dict()]},
            {"type": "repair", "label": "Repair armour", "tool": True, "fields": [pick]},
            {"type": "disarm", "label": "Disarm", "tool": True, "fields": [pick]},
            {"type": "adjust", "label": "Set a number", "tool": True, "fields": [
                pick, Field("field", "Number", "choice", "ap", choices=(("ap", "Action points"), ("wounds", "Wounds"),
                                                                        ("ammo", "Ammunition"),
                                                                        ("armour_wear", "Armour wear"))).to_dict(),
                Field("value", "New value", "int", 0, -9999, 9999).to_dict()]},
            {"type": "place", "label": "Place on the grid (free)", "tool": True, "params": ["x", "y"], "fields": [
                pick, Field("x", "Column", "int", 0, 0, state["options"]["grid_width"] - 1).to_dict(),
                Field("y", "Row", "int", 0, 0, state["options"]["grid_height"] - 1).to_dict()]},
        ]
    return out
