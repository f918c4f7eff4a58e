"""Eclipse Phase on a grid with blocked squares: moves go around them, melee cannot reach past them."""

from __future__ import annotations

import math

import pytest

from rules import terrain
from rules.core import Viewer
from rules.dice import ScriptedDice
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.systems.eclipse_phase import EclipsePhase
from tests.rules.harness import Rules

EP = EclipsePhase()
RULES = Rules(EP)
GM = Viewer.gm()
JINX_SEAT = Viewer.player("seat-jinx")
WALL = [[12, y] for y in range(0, 9)]  # a wall across rows 0-8 of column 12


def base(**stats):
    return {f.name: f.default for f in EP.combatant_fields()} | stats


def jinx(**extra):
    return base(id="jinx", name="Jinx", side="A", controller="seat", seat="seat-jinx", durability=35, base_move=8,
                full_move=32, initiative=9, fray=60, melee=30, guns=70, weapon1="medium_pistol", weapon2="knife",
                weapon3="none", x=10, y=5) | extra


def exhuman(**extra):
    return base(id="exh", name="Exhuman", side="B", controller="gm", durability=40, base_move=4, full_move=20,
                initiative=8, fray=60, melee=80, weapon1="claws", weapon2="none", weapon3="none", x=20, y=5) | extra


def start(blocked, *, j=None, e=None):
    """Jinx acts first: initiative d6 6 for Jinx (15), 1 for the Exhuman (9)."""
    state, _ = RULES.start([jinx(**(j or {})), exhuman(**(e or {}))], {"blocked": blocked}, faces=[6, 1])
    assert state["active"] == "jinx"
    return state


def test_setup_keeps_the_blocked_squares_and_every_view_shows_them():
    state = start(WALL)
    assert state["blocked"] == terrain.clean_blocked(WALL)
    for viewer in (GM, JINX_SEAT, Viewer.spectator()):
        assert EP.view_for(state, viewer)["blocked"] == state["blocked"]


def test_setup_refuses_a_start_on_a_blocked_square_and_places_others_around_them():
    with pytest.raises(InvalidDeclaration, match="blocked"):
        start([[10, 5]])
    # automatic places skip blocked squares: side A goes to column 1, odd rows first
    dice = ScriptedDice([6, 1])
    state, _ = RULES.start([jinx(x=-1, y=-1), exhuman()], {"blocked": [[1, 1], [1, 3]]}, dice=dice)
    assert (state["combatants"]["jinx"]["x"], state["combatants"]["jinx"]["y"]) == (1, 5)


def test_a_move_goes_around_the_wall_and_costs_the_longer_way():
    state = start(WALL)
    new, events = RULES.play(state, {"type": "move", "combatant": "jinx", "x": 14, "y": 5}, JINX_SEAT)
    moved = next(e for e in events if e["type"] == "combatant.moved")
    # straight it would be 4 m; every way passes the wall's end at (12, 9) or below
    assert moved["data"]["metres"] >= round(math.hypot(2, 4) * 2, 2)
    assert moved["data"]["metres"] == round(terrain.path_length((10, 5), (14, 5), terrain.blocked_of(state), 24, 16), 2)
    assert new["turn"]["moved"] == moved["data"]["metres"]
    assert (new["combatants"]["jinx"]["x"], new["combatants"]["jinx"]["y"]) == (14, 5)


def test_no_token_moves_into_a_blocked_square_or_through_a_closed_wall():
    state = start(WALL)
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(state, {"type": "move", "combatant": "jinx", "x": 12, "y": 5}, JINX_SEAT)
    with pytest.raises(IllegalDeclaration, match="blocked"):  # not even the GM
        RULES.play(state, {"type": "move", "combatant": "jinx", "x": 12, "y": 5}, GM)
    closed = start([[12, y] for y in range(16)])
    with pytest.raises(IllegalDeclaration, match="no way"):
        RULES.play(closed, {"type": "move", "combatant": "jinx", "x": 14, "y": 5}, JINX_SEAT)
    # short of the wall the straight line is the way, as before
    new, events = RULES.play(closed, {"type": "move", "combatant": "jinx", "x": 11, "y": 6}, JINX_SEAT)
    assert events[0]["data"]["metres"] == round(math.sqrt(2), 2)


def test_reachable_squares_are_those_a_way_of_the_move_left_reaches():
    state = start(WALL, j={"base_move": 4, "full_move": 6})
    view = EP.view_for(state, JINX_SEAT)
    move = next(t for t in view["legal"] if t["type"] == "move")
    reach = {tuple(sq) for sq in move["reachable"]}
    blocked = terrain.blocked_of(state)
    assert not reach & blocked
    lengths = terrain.path_lengths((10, 5), blocked, 24, 16)
    expected = {sq for sq, d in lengths.items() if d <= 6 + 1e-9 and sq not in {(10, 5), (20, 5)}}
    assert reach == expected
    assert (13, 5) not in reach  # 3 m as the crow flies, but the wall is in the way
    assert (9, 5) in reach


def test_melee_cannot_reach_between_two_blocked_corners():
    state = start([[11, 5], [10, 6]], e={"x": 11, "y": 6})
    view = EP.view_for(state, JINX_SEAT)
    attack = next(t for t in view["legal"] if t["type"] == "attack")
    target = next(t for t in attack["targets"] if t["id"] == "exh")
    assert target["adjacent"] is False
    knife = next(i for i, w in enumerate(state["combatants"]["jinx"]["weapons"]) if w["skill"] == "melee")
    with pytest.raises(IllegalDeclaration, match="out of reach"):
        RULES.play(state, {"type": "attack", "combatant": "jinx", "target": "exh", "weapon": knife}, JINX_SEAT)
    # with one corner open the knife reaches
    open_corner = start([[11, 5]], e={"x": 11, "y": 6})
    target = next(t for t in next(t for t in EP.view_for(open_corner, JINX_SEAT)["legal"]
                                  if t["type"] == "attack")["targets"] if t["id"] == "exh")
    assert target["adjacent"] is True


def test_the_gm_changes_blocked_squares_mid_battle_and_only_the_gm():
    state = start([])
    with pytest.raises((NotPermitted, IllegalDeclaration)):
        RULES.play(state, {"type": "set_blocked", "blocked": WALL}, JINX_SEAT)
    with pytest.raises(InvalidDeclaration):
        RULES.play(state, {"type": "set_blocked", "blocked": [[99, 0]]}, GM)
    with pytest.raises(InvalidDeclaration):
        RULES.play(state, {"type": "set_blocked", "blocked": "everything"}, GM)
    with pytest.raises(IllegalDeclaration, match="stands on"):
        RULES.play(state, {"type": "set_blocked", "blocked": [[10, 5]]}, GM)
    new, events = RULES.play(state, {"type": "set_blocked", "blocked": WALL}, GM)
    assert events[0]["type"] == "board.blocked" and events[0]["data"]["blocked"] == terrain.clean_blocked(WALL)
    assert EP.view_for(new, Viewer.spectator())["blocked"] == terrain.clean_blocked(WALL)
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(new, {"type": "move", "combatant": "jinx", "x": 12, "y": 4}, JINX_SEAT)
    cleared, _ = RULES.play(new, {"type": "set_blocked", "blocked": []}, GM)
    after, events = RULES.play(cleared, {"type": "move", "combatant": "jinx", "x": 14, "y": 5}, JINX_SEAT)
    assert events[0]["data"]["metres"] == 4
