"""Battles&Balances with blocked squares: moves cost the steps around them, reach does not pass them."""

from __future__ import annotations

import pytest

from rules import terrain
from rules.core import Viewer
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.systems.battles_balances import BattlesAndBalances
from tests.rules.harness import Rules

BB = BattlesAndBalances()
RULES = Rules(BB)
GM = Viewer.gm()
SEAT = Viewer.player("s1")
WALL = [[4, y] for y in range(0, 6)]  # column 4, rows 0-5 of the 12 × 8 grid


def fighter(cid, side, x, y, **stats):
    base = {"name": cid.capitalize(), "size": 8, "muscle": 3, "stamina": 3, "agility": 3, "speed": 4, "focus": 3}
    return {**base, **stats, "id": cid, "side": side, "x": x, "y": y}


def start(blocked, *, hero=None, foe=None):
    hero_entry = {**fighter("hero", "A", 2, 2, controller="seat", seat="s1"), **(hero or {})}
    foe_entry = {**fighter("foe", "B", 10, 7), **(foe or {})}
    state, _ = RULES.start([hero_entry, foe_entry], {"blocked": blocked})
    assert state["actor"] == "hero"
    return state


def test_setup_keeps_blocked_squares_refuses_a_start_on_one_and_views_show_them():
    state = start(WALL)
    assert state["blocked"] == terrain.clean_blocked(WALL)
    assert BB.view_for(state, Viewer.spectator())["blocked"] == state["blocked"]
    with pytest.raises(InvalidDeclaration, match="blocked"):
        start([[2, 2]])


def test_a_move_pays_for_every_step_around_the_wall():
    state = start(WALL)
    ap = state["combatants"]["hero"]["ap"]
    new, events = RULES.play(state, {"type": "move", "combatant": "hero", "x": 6, "y": 2}, SEAT)
    # straight: 4 steps; around the end of the wall at (4, 6): 4 steps down and 4 back up
    assert state["options"]["move_cost"] == 1
    spent = next(e for e in events if e["type"] == "ap.spent")
    assert spent["data"]["cost"] == 8
    assert new["combatants"]["hero"]["ap"] == ap - 8
    assert (new["combatants"]["hero"]["x"], new["combatants"]["hero"]["y"]) == (6, 2)


def test_the_move_template_lists_only_squares_a_walk_reaches_at_their_walking_cost():
    state = start(WALL + [[4, 6], [4, 7]])  # the whole column: the right side is shut off
    move = next(t for t in BB.view_for(state, SEAT)["legal"] if t["type"] == "move")
    squares = {(d["x"], d["y"]): d["cost"] for d in move["destinations"]}
    assert all(x < 4 for x, _ in squares)
    assert squares[(0, 0)] == 2 and squares[(3, 7)] == 5
    with pytest.raises(IllegalDeclaration, match="no way"):
        RULES.play(state, {"type": "move", "combatant": "hero", "x": 6, "y": 2}, SEAT)
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(state, {"type": "move", "combatant": "hero", "x": 4, "y": 2}, SEAT)
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(state, {"type": "place", "combatant": "hero", "x": 4, "y": 2}, GM)


def test_a_long_weapon_does_not_reach_around_a_wall():
    spear = {"weapon": "spear", "weapon_die": 6, "weapon_reach": 2, "weapon_drawn": True}
    open_field = start([], hero=spear, foe={"x": 4, "y": 2})
    assert any(t["type"] == "attack" and t["target"] == "foe" for t in BB.view_for(open_field, SEAT)["legal"])
    walled = start([[3, 1], [3, 2], [3, 3]], hero=spear, foe={"x": 4, "y": 2})
    legal = BB.view_for(walled, SEAT)["legal"]
    assert not any(t["type"] == "attack" and t["target"] == "foe" for t in legal)
    with pytest.raises(IllegalDeclaration, match="melee reach"):
        RULES.play(walled, {"type": "attack", "combatant": "hero", "target": "foe"}, SEAT)
    hero = next(c for c in BB.view_for(walled, SEAT)["combatants"] if c["id"] == "hero")
    assert hero["ranges"]["foe"] == "out"


def test_leaving_an_opponents_reach_is_judged_around_blocked_squares():
    # the foe at (4, 2) reaches 1 square; a wall between them means the hero is not in its reach
    state = start([[3, 1], [3, 3], [3, 2]], foe={"x": 4, "y": 2})
    move = next(t for t in BB.view_for(state, SEAT)["legal"] if t["type"] == "move")
    assert not any(d["leaves_reach"] for d in move["destinations"])
    near = start([], foe={"x": 3, "y": 2})
    move = next(t for t in BB.view_for(near, SEAT)["legal"] if t["type"] == "move")
    assert any(d["leaves_reach"] for d in move["destinations"])


def test_only_the_gm_sets_blocked_squares_and_not_under_a_token():
    state = start([])
    with pytest.raises((NotPermitted, IllegalDeclaration)):
        RULES.play(state, {"type": "set_blocked", "blocked": WALL}, SEAT)
    with pytest.raises(InvalidDeclaration):
        RULES.play(state, {"type": "set_blocked", "blocked": [[12, 0]]}, GM)
    with pytest.raises(IllegalDeclaration, match="stands on"):
        RULES.play(state, {"type": "set_blocked", "blocked": [[2, 2]]}, GM)
    new, events = RULES.play(state, {"type": "set_blocked", "blocked": WALL}, GM)
    assert events[0]["type"] == "board.blocked" and new["blocked"] == terrain.clean_blocked(WALL)
    assert new["actor"] == "hero"  # a GM tool, not a turn
    with pytest.raises(IllegalDeclaration, match="blocked"):
        RULES.play(new, {"type": "move", "combatant": "hero", "x": 4, "y": 3}, SEAT)


def test_a_computer_player_walks_around_the_wall():
    state = start(WALL, foe={"x": 6, "y": 2, "controller": "computer"})
    new, _ = RULES.play(state, {"type": "pass", "combatant": "hero"}, SEAT)
    foe = new["combatants"]["foe"]
    assert [foe["x"], foe["y"]] not in new["blocked"]
    assert (foe["x"], foe["y"]) != (6, 2)  # it came round towards the hero
    assert max(abs(foe["x"] - 2), abs(foe["y"] - 2)) <= 1
