"""AD&D with blocked squares: placing, declared moves, charges and their paths go around them."""

from __future__ import annotations

import math
from typing import Any

import pytest

from rules import terrain
from rules.core import Viewer
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.systems.adnd import AdndDemonIdol
from tests.rules.harness import Rules
from tests.rules.test_adnd import new_battle, put

S = AdndDemonIdol()
RULES = Rules(S)
GM = Viewer.gm()
SEAT = Viewer.player("s1")
WALL = [[4, y] for y in range(0, 5)]  # column 4, rows 0-4


def fighter(cid: str, side: str = "A", **kw: Any) -> dict[str, Any]:
    return {"id": cid, "name": cid.capitalize(), "side": side, "hp": 30, "ac": 5, "thac0": 20,
            "weapon": "long_sword", "move": 12} | kw


def battle(blocked: list[list[int]], lineup: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Encounter checks skipped (distance 1), round 1 declarations open."""
    return new_battle(lineup or [fighter("fig", controller="seat", seat="s1"), fighter("orc", "B")], blocked=blocked)


def fig_to_declare(state: dict[str, Any]) -> dict[str, Any]:
    """The DM notes the orc's declaration (none), rolls the order of declaring: the fighter's turn."""
    state, _ = RULES.play(state, {"type": "declare", "combatant": "orc", "kind": "none"})
    state, _ = RULES.play(state, {"type": "roll_order"})
    return state


def at(state: dict[str, Any], cid: str) -> tuple[int, int]:
    return state["combatants"][cid]["x"], state["combatants"][cid]["y"]


def test_parties_are_placed_off_blocked_squares_and_views_show_them():
    # side A stands on row 1 from column 9 (20 wide, two combatants: columns 9 and 10)
    lineup = [fighter("fig", controller="seat", seat="s1"), fighter("ann"), fighter("orc", "B")]
    plain = battle([], lineup)
    assert at(plain, "fig") == (9, 1) and at(plain, "ann") == (10, 1)
    state = battle([[9, 1]], lineup)
    spots = {at(state, c) for c in ("fig", "ann", "orc")}
    assert (9, 1) not in spots and len(spots) == 3
    assert S.view_for(state, Viewer.spectator())["blocked"] == [[9, 1]]
    with pytest.raises(InvalidDeclaration):
        battle([[25, 1]])


def test_a_declared_move_goes_around_the_wall_within_the_move():
    state = fig_to_declare(put(put(battle(WALL), "fig", 2, 2), "orc", 12, 12))
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(state, {"type": "declare", "combatant": "fig", "kind": "move", "x": 4, "y": 2}, SEAT)
    # (6, 2) is 4 inches straight; round the wall's end at (4, 5) it is 2 × √(2² + 3²) ≈ 7.2 inches
    ok, _ = RULES.play(state, {"type": "declare", "combatant": "fig", "kind": "move", "x": 6, "y": 2}, SEAT)
    assert ok["declarations"]["fig"]["x"] == 6
    slow = fig_to_declare(put(put(battle(WALL, [fighter("fig", controller="seat", seat="s1", move=6),
                                                fighter("orc", "B")]), "fig", 2, 2), "orc", 12, 12))
    with pytest.raises(IllegalDeclaration, match="at most 6"):
        RULES.play(slow, {"type": "declare", "combatant": "fig", "kind": "move", "x": 6, "y": 2}, SEAT)
    closed = fig_to_declare(put(put(battle([[4, y] for y in range(20)]), "fig", 2, 2), "orc", 12, 12))
    with pytest.raises(IllegalDeclaration, match="no way"):
        RULES.play(closed, {"type": "declare", "combatant": "fig", "kind": "move", "x": 6, "y": 2}, SEAT)


def test_the_dm_cannot_set_a_token_on_a_blocked_square_and_only_the_dm_blocks():
    state = battle(WALL)
    with pytest.raises(IllegalDeclaration, match="blocked"):
        put(state, "fig", 4, 1)
    with pytest.raises((NotPermitted, IllegalDeclaration)):
        S.authorize(state, {"type": "set_blocked", "blocked": []}, SEAT)
        RULES.play(state, {"type": "set_blocked", "blocked": []}, SEAT)
    fig = at(state, "fig")
    with pytest.raises(IllegalDeclaration, match="stands on"):
        RULES.play(state, {"type": "set_blocked", "blocked": [list(fig)]})
    new, events = RULES.play(state, {"type": "set_blocked", "blocked": [[0, 0]]})
    assert new["blocked"] == [[0, 0]] and events[0]["type"] == "board.blocked"


def _expected_arrival(way_inches: float) -> int | None:
    """Indoors, move 12: the charger covers 24 ft a segment and strikes within 10 + 3.5 ft of the target's
    centre (touching squares plus a long sword)."""
    for segment in range(1, 11):
        if way_inches * 10 <= 13.5 + 24 * segment:
            return segment
    return None


def test_a_charge_goes_round_the_wall_arrives_later_and_its_path_avoids_blocked_squares():
    open_field = put(put(battle([]), "fig", 2, 2), "orc", 7, 2)
    assert S.view_for(open_field, GM)["charges"]["fig"]["targets"]["orc"]["arrival_segment"] == 2
    state = put(put(battle(WALL), "fig", 2, 2), "orc", 7, 2)
    blocked = terrain.blocked_of(state)
    way = terrain.path_length((2, 2), (7, 2), blocked, 20, 20)
    assert way > 5 + 1  # well round the wall
    target = S.view_for(state, GM)["charges"]["fig"]["targets"]["orc"]
    assert target["arrival_segment"] == _expected_arrival(way) == 3
    for x, y in target["path"]:
        assert (math.floor(x + 0.5), math.floor(y + 0.5)) not in blocked or (
            abs(x - round(x)) == 0.5 or abs(y - round(y)) == 0.5)  # on an edge, never inside
    # resolved: the fighter ends beside the orc, on no blocked square
    state = fig_to_declare(state)
    state, _ = RULES.play(state, {"type": "declare", "combatant": "fig", "kind": "charge", "target": "orc"}, SEAT)
    state, _ = RULES.play(state, {"type": "roll_initiative"}, GM, [6, 1])
    charge = next(a for a in state["queue"] if a["combatant"] == "fig")
    assert charge["segment"] == 3
    state, events = RULES.play(state, {"type": "resolve_all"}, GM, [1])  # the charge misses (the orc declared nothing)
    assert any(e["type"] == "charge.arrived" for e in events)
    fig = at(state, "fig")
    assert fig not in blocked and max(abs(fig[0] - 7), abs(fig[1] - 2)) <= 1


def test_a_charge_that_no_way_leads_to_falls_short_and_stays_off_the_wall():
    wall = [[4, y] for y in range(20)]
    state = put(put(battle(wall), "fig", 2, 2), "orc", 7, 2)
    assert S.view_for(state, GM)["charges"]["fig"]["targets"]["orc"]["arrival_segment"] is None
    state = fig_to_declare(state)
    state, _ = RULES.play(state, {"type": "declare", "combatant": "fig", "kind": "charge", "target": "orc"}, SEAT)
    state, _ = RULES.play(state, {"type": "roll_initiative"}, GM, [6, 1])
    state, events = RULES.play(state, {"type": "resolve_all"})
    assert any(e["type"] == "charge.fell_short" for e in events)
    assert at(state, "fig")[0] < 4
