"""Charges on the grid: the way to the target round blocked squares, the arrival segment, who
strikes back, and where the tokens end up; :func:`charge_view` shows it all for one combatant."""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ... import terrain
from ...core import State
from .combatants import able, chebyshev
from .data import FEET_PER_INCH, WEAPONS, arrival_segment, charge_per_segment_feet


def arrival_of(state: State, cid: str, target: str, limit: int = 10) -> int | None:
    c, t = state["combatants"][cid], state["combatants"][target]
    way = charge_way(state, cid, target)
    if way is None:
        return None
    return arrival_segment(distance_squares=(t["x"] - c["x"], t["y"] - c["y"]), move=c["move"],
                           scale=state["scale"], length=Fraction(str(WEAPONS[c["weapon"]]["length"])),
                           limit=limit, way_squares=way[1])


def charge_way(state: State, cid: str, target: str) -> tuple[list[tuple[int, int]], float | None] | None:
    """The corners of a charger's way to its target around blocked squares and its length in squares
    (None for a straight line in plain sight, which the straight formula measures), or None: no way."""
    c, t = state["combatants"][cid], state["combatants"][target]
    a, b = (c["x"], c["y"]), (t["x"], t["y"])
    blocked = terrain.blocked_of(state) - {b}
    if terrain.line_clear(a, b, blocked):
        return [a, b], None
    corners = terrain.path(a, b, blocked, state["grid"]["width"], state["grid"]["height"])
    if corners is None:
        return None
    length = sum(math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in zip(corners, corners[1:], strict=False))
    return corners, length


def in_striking_range(state: State, cid: str, target: str) -> bool:
    """Side by side, or within the weapon's length base to base (a melee blow needs no closing)."""
    c, t = state["combatants"][cid], state["combatants"][target]
    if chebyshev(c, t) <= 1:
        return True
    per_inch = FEET_PER_INCH[state["scale"]]
    gap = math.hypot(t["x"] - c["x"], t["y"] - c["y"]) * per_inch - per_inch
    return gap <= float(WEAPONS[c["weapon"]]["length"]) + 1e-9


def retaliators_of(state: State, cid: str, target: str, spend: bool = False) -> list[str]:
    """Who strikes back at a charge: the target and foes of the charger within 1 inch of it who set a
    weapon, wait, or meant to strike the charger (that blow is spent on the charge)."""
    charger = state["combatants"][cid]
    t = state["combatants"][target]
    found = []
    for rid in state["order"]:
        r = state["combatants"][rid]
        if rid == cid or r["side"] == charger["side"] or not able(r):
            continue
        if rid != target and not touching(state, r, t):
            continue
        decl = state["declarations"].get(rid)
        if state["phase"] not in ("resolution",) or decl is None:
            found.append(rid)
            continue
        acts = [a for a in state["queue"] if a["combatant"] == rid and a["status"] != "cancelled"]
        if decl["kind"] in ("set", "await"):
            found.append(rid)
        elif decl["kind"] == "melee" and decl.get("target") == cid:
            pending = [a for a in acts if a["kind"] == "melee" and a["status"] == "pending"]
            if pending:
                found.append(rid)
                if spend:
                    p = pending[-1]
                    if p["attacks"] > 1:
                        p["attacks"] -= 1
                    else:
                        p["status"] = "resolved"
                        p["why"].append("spent against the charge")
    return found


def touching(state: State, a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Within an inch (touching squares), not parted by two blocked squares corner to corner."""
    if chebyshev(a, b) > 1:
        return False
    if not state.get("blocked"):
        return True
    return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                 state["grid"]["width"], state["grid"]["height"]) == 1


def move_beside(state: State, cid: str, target: str) -> None:
    c, t = state["combatants"][cid], state["combatants"][target]
    if touching(state, c, t):
        return
    blocked = terrain.blocked_of(state)
    taken = {(o["x"], o["y"]) for k, o in state["combatants"].items() if k != cid and o["condition"] != "fled"}
    cells = [(t["x"] + dx, t["y"] + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
    cells = [p for p in cells if 0 <= p[0] < state["grid"]["width"] and 0 <= p[1] < state["grid"]["height"]
             and p not in taken and p not in blocked and touching(state, {"x": p[0], "y": p[1]}, t)]
    if blocked:  # the square beside the target at the end of the shortest way round
        lengths = terrain.path_lengths((c["x"], c["y"]), blocked, state["grid"]["width"], state["grid"]["height"])
        cells = [p for p in cells if p in lengths]
        if not cells:
            return
        x, y = min(cells, key=lambda p: (lengths[p], p))
    else:
        x, y = min(cells or [(t["x"], t["y"])], key=lambda p: ((p[0] - c["x"]) ** 2 + (p[1] - c["y"]) ** 2, p))
    c["x"], c["y"] = x, y


def move_toward(state: State, cid: str, target: str, inches: Fraction) -> None:
    c, t = state["combatants"][cid], state["combatants"][target]
    way = charge_way(state, cid, target)
    if way is None:  # blocked squares leave no way: the charger stays where it is
        return
    if way[1] is not None:  # along the way round the blocked squares
        walk_along(state, cid, way[0], float(inches))
        return
    dx, dy = t["x"] - c["x"], t["y"] - c["y"]
    dist = math.hypot(dx, dy)
    if dist == 0:
        return
    f = min(1.0, float(inches) / dist)
    c["x"], c["y"] = c["x"] + int(dx * f), c["y"] + int(dy * f)


def walk_along(state: State, cid: str, corners: list[tuple[int, int]], inches: float) -> None:
    """Set a token down at the farthest free square it passes within ``inches`` along a way."""
    c = state["combatants"][cid]
    blocked = terrain.blocked_of(state)
    taken = {(o["x"], o["y"]) for k, o in state["combatants"].items() if k != cid and o["condition"] != "fled"}
    best = (c["x"], c["y"])
    travelled = 0.0
    while travelled <= inches + 1e-9:
        px, py = terrain.point_along(corners, travelled)
        sq = (math.floor(px + 0.5), math.floor(py + 0.5))
        if sq not in blocked and sq not in taken and sq != corners[-1]:
            best = sq
        travelled += 0.25
    c["x"], c["y"] = best


def charge_view(state: State, cid: str, positional: bool = True) -> dict[str, Any]:
    """Charge reach of one combatant this round, and its arrival and retaliation against each foe."""
    c = state["combatants"][cid]
    per_inch = FEET_PER_INCH[state["scale"]]
    step = charge_per_segment_feet(c["move"], state["scale"])
    length = Fraction(str(WEAPONS[c["weapon"]]["length"]))
    targets: dict[str, Any] = {}
    for tid in state["order"]:
        t = state["combatants"][tid]
        if tid == cid or t["side"] == c["side"] or t["condition"] in ("dead", "fled"):
            continue
        centre = math.hypot(t["x"] - c["x"], t["y"] - c["y"]) * per_inch
        way = charge_way(state, cid, tid)
        corners = None
        if way is not None and way[1] is not None:  # round blocked squares: the way's length and bends
            corners, centre = way[0], way[1] * per_inch
        phase = state["phase"]
        if positional:
            state = {**state, "phase": "preview"}
        retaliators = retaliators_of(state, cid, tid)
        state = {**state, "phase": phase}
        arrival = arrival_of(state, cid, tid)
        stop = max(0.0, centre - per_inch - float(length))
        path = []
        for seg in range(1, (arrival or 10) + 1):
            travelled = min(seg * step, stop)
            if corners is not None:
                px, py = terrain.point_along(corners, travelled / per_inch)
                path.append([round(px, 3), round(py, 3)])
                continue
            f = travelled / centre if centre else 0.0
            path.append([round(c["x"] + (t["x"] - c["x"]) * f, 3), round(c["y"] + (t["y"] - c["y"]) * f, 3)])
        targets[tid] = {
            "distance_feet": round(max(0.0, centre - per_inch), 2),
            "arrival_segment": arrival,
            "retaliators": retaliators,
            "path": path,
        }
    return {
        "move": c["move"],
        "per_segment_feet": step,
        "per_segment_inches": round(step / per_inch, 3),
        "reach_feet": step * 10,
        "reach_inches": round(step * 10 / per_inch, 3),
        "weapon_length_feet": float(length),
        "strike_radius_inches": [round(float((per_inch + length + s * step) / per_inch), 3)
                                 for s in range(1, 11)],
        "targets": targets,
    }
