"""Battles&Balances odds against an enumeration written here from the rule text, and the leak contract.

The reference walks every face of every die: Agility (or Focus) plus the weapon's attack and the size
bonus against Speed plus shield and size bonus, a tie misses; damage = weapon die + damage modifier
+ margin, armour takes its protection off only if the damage reaches it; out of play when wounds
reach health. Checks: three pools summed against the target. Contests: summed or best of three.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from rules import Viewer, engine, get_system
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from tests.rules.harness import Rules

BB = get_system("battles-and-balances")
RULES = Rules(BB)
GM = Viewer.gm()


def fighter(cid: str, side: str, x: int, **stats: Any) -> dict[str, Any]:
    base = {"name": cid.upper(), "id": cid, "side": side, "x": x, "y": 0, "size": 6, "muscle": 2, "stamina": 2,
            "agility": 2, "speed": 2, "focus": 2, "weapon": "Club", "weapon_attack": 1, "weapon_die": 4}
    return {**base, **stats}


def battle(a: dict[str, Any], b: dict[str, Any], **options: Any) -> dict[str, Any]:
    state, _ = RULES.start([a, b], options)
    return state


def pool(count: int, sides: int) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for faces in itertools.product(range(1, sides + 1), repeat=count):
        out[sum(faces)] = out.get(sum(faces), Fraction(0)) + Fraction(1, sides**count)
    return out


def kept(count: int, sides: int, luck: str) -> dict[int, Fraction]:
    """A pool rolled once, or twice keeping the better (blessed) or the worse (cursed)."""
    once = pool(count, sides)
    if luck == "normal":
        return once
    out: dict[int, Fraction] = {}
    for x, p in once.items():
        for y, q in once.items():
            k = max(x, y) if luck == "blessed" else min(x, y)
            out[k] = out.get(k, Fraction(0)) + p * q
    return out


def reference_attack(state: dict[str, Any], aid: str, tid: str, kind: str = "attack",
                     a_luck: str = "normal", d_luck: str = "normal") -> dict[str, Fraction]:
    a, t = state["combatants"][aid], state["combatants"][tid]
    a_bonus = max(0, (t["size"] - a["size"]) // 2)
    d_bonus = max(0, (a["size"] - t["size"]) // 2)
    if kind == "attack":
        att_count, att_add, die, dm = a["agility"], a["weapon_attack"] + a_bonus, a["weapon_die"], a["damage_modifier"]
    else:
        att_count, att_add, die, dm = a["focus"], a["launcher_attack"] + a_bonus, a["ammo_die"], 0
    protection = t["armour_protection"] if t["armour"] else 0
    out = {"hit": Fraction(0), "wound": Fraction(0), "defeat": Fraction(0), "e_wounds": Fraction(0)}
    for at, p in kept(att_count, a["size"], a_luck).items():
        for df, q in kept(t["speed"], t["size"], d_luck).items():
            a_total, d_total = at + att_add, df + t["shield_defence"] + d_bonus
            if a_total <= d_total:
                continue
            margin = a_total - d_total
            out["hit"] += p * q
            faces = range(1, die + 1) if die else [0]
            for face in faces:
                w = p * q * (Fraction(1, die) if die else 1)
                damage = face + dm + margin
                if protection and damage >= protection:
                    damage -= protection
                wounds = max(0, damage)
                out["wound"] += w if wounds else 0
                out["defeat"] += w if t["wounds"] + wounds >= t["health"] else 0
                out["e_wounds"] += w * wounds
    return out


def got(answer: dict[str, Any]) -> dict[str, Fraction]:
    out = {o["key"]: Fraction(o["fraction"]) for o in answer["outcomes"]}
    out["e_wounds"] = Fraction(answer["expected"][0]["fraction"])
    return out


@pytest.mark.parametrize(
    "a_stats, b_stats",
    [
        ({}, {}),
        ({"agility": 3, "weapon_attack": 2, "weapon_die": 6, "muscle": 4}, {"armour": "Mail", "armour_protection": 4, "shield_defence": 1}),
        ({"size": 4, "agility": 3}, {"size": 10, "speed": 1, "stamina": 1, "health_override": 3}),
    ],
)
def test_melee_attack_exact_against_the_text(a_stats: dict[str, Any], b_stats: dict[str, Any]) -> None:
    state = battle(fighter("a", "A", 0, **a_stats), fighter("b", "B", 1, **b_stats))
    answer = engine.odds(BB, state, GM, {"type": "attack", "combatant": "a", "target": "b"})
    assert answer["method"] == "exact"
    want = reference_attack(state, "a", "b")
    assert got(answer["choices"][0]) == want
    dist = answer["choices"][0]["distributions"][0]
    assert sum(Fraction(v["fraction"]) for v in dist["values"]) == 1


def test_blessed_and_cursed_pools_against_the_text() -> None:
    state = battle(fighter("a", "A", 0, agility=3, weapon_luck="blessed"), fighter("b", "B", 1, speed=3, shield_luck="cursed"),
                   blessings=True)
    answer = engine.odds(BB, state, GM, {"type": "attack", "combatant": "a", "target": "b"})
    assert got(answer["choices"][0]) == reference_attack(state, "a", "b", a_luck="blessed", d_luck="cursed")
    state = battle(fighter("a", "A", 0, agility=2, weapon_luck="cursed"), fighter("b", "B", 1, speed=2), blessings=True)
    answer = engine.odds(BB, state, GM, {"type": "attack", "combatant": "a", "target": "b"})
    assert got(answer["choices"][0]) == reference_attack(state, "a", "b", a_luck="cursed")


def test_wounds_already_taken_count_towards_defeat() -> None:
    state = battle(fighter("a", "A", 0), fighter("b", "B", 1))
    state["combatants"]["b"]["wounds"] = state["combatants"]["b"]["health"] - 3
    answer = engine.odds(BB, state, GM, {"type": "attack", "combatant": "a", "target": "b"})
    want = reference_attack(state, "a", "b")
    assert got(answer["choices"][0]) == want and want["defeat"] > 0


def test_a_shot_exact_against_the_text() -> None:
    state = battle(fighter("a", "A", 0, launcher="Sling", launcher_attack=1, ammo=3, ammo_die=4, focus=3), fighter("b", "B", 5))
    answer = engine.odds(BB, state, GM, {"type": "shoot", "combatant": "a", "target": "b"})
    assert got(answer["choices"][0]) == reference_attack(state, "a", "b", "shoot")


def test_every_attack_the_phone_lists() -> None:
    a = fighter("a", "A", 0, controller="seat", seat="s1", launcher="Sling", ammo=3)
    state = battle(a, fighter("b", "B", 1))
    answer = engine.odds(BB, state, Viewer.player("s1"), {"combatant": "a"})
    assert [c["key"] for c in answer["choices"]] == ["attack:b", "shoot:b"]


def test_static_check_against_the_text() -> None:
    state = battle(fighter("a", "A", 0, muscle=2), fighter("b", "B", 1))
    answer = engine.odds(BB, state, GM, {"type": "check", "combatant": "a", "attribute": "muscle", "difficulty": "custom", "target": 23, "bonus": 1})
    six = pool(6, 6)  # three rolls of 2d6, summed
    want = sum((p for t, p in six.items() if t + 3 >= 23), Fraction(0))
    assert Fraction(answer["outcomes"][0]["fraction"]) == want
    # the system's own float for a check agrees
    from rules.systems.battles_balances import chance_at_least

    assert abs(answer["outcomes"][0]["p"] - chance_at_least(6, 6, 20)) < 1e-12


@pytest.mark.parametrize("mode", ["summed", "best_of_three"])
def test_contest_against_the_text(mode: str) -> None:
    state = battle(fighter("a", "A", 0, muscle=2), fighter("b", "B", 1, muscle=1, size=8))
    answer = engine.odds(BB, state, GM, {"type": "contest", "a_combatant": "a", "a_attribute": "muscle", "b_combatant": "b", "b_attribute": "muscle", "mode": mode})
    pa, pb = pool(2, 6), pool(1, 8)
    if mode == "summed":
        sa = pool(6, 6)
        sb = pool(3, 8)
        a_wins = sum((p * q for x, p in sa.items() for y, q in sb.items() if x > y), Fraction(0))
        b_wins = sum((p * q for x, p in sa.items() for y, q in sb.items() if y > x), Fraction(0))
    else:
        win = sum((p * q for x, p in pa.items() for y, q in pb.items() if x > y), Fraction(0))
        lose = sum((p * q for x, p in pa.items() for y, q in pb.items() if y > x), Fraction(0))
        tie = 1 - win - lose
        a_wins = b_wins = Fraction(0)
        for rolls in itertools.product(("w", "l", "t"), repeat=3):
            weight = Fraction(1)
            for r in rolls:
                weight *= {"w": win, "l": lose, "t": tie}[r]
            if rolls.count("w") > rolls.count("l"):
                a_wins += weight
            elif rolls.count("l") > rolls.count("w"):
                b_wins += weight
    values = {o["key"]: Fraction(o["fraction"]) for o in answer["outcomes"]}
    assert values == {"a_wins": a_wins, "b_wins": b_wins, "draw": 1 - a_wins - b_wins}


def test_roles_and_bad_questions() -> None:
    state = battle(fighter("a", "A", 0, controller="seat", seat="s1"), fighter("b", "B", 1, controller="seat", seat="s2"))
    player = Viewer.player("s1")
    with pytest.raises(NotPermitted):
        engine.odds(BB, state, player, {"type": "attack", "combatant": "b", "target": "a"})
    with pytest.raises(NotPermitted):
        engine.odds(BB, state, player, {"type": "check", "combatant": "a", "attribute": "muscle"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(BB, state, player, {"type": "attack", "combatant": "a", "target": "zz"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(BB, state, player, {"type": "move", "combatant": "a"})
    with pytest.raises(IllegalDeclaration):
        engine.odds(BB, state, player, {"type": "shoot", "combatant": "a", "target": "b"})


def test_leak_contract_gm_notes_change_nothing() -> None:
    one = battle(fighter("a", "A", 0, controller="seat", seat="s1"), fighter("b", "B", 1, notes="secretly a dragon"))
    other = battle(fighter("a", "A", 0, controller="seat", seat="s1"), fighter("b", "B", 1, notes=""))
    question = {"combatant": "a"}
    assert engine.odds(BB, one, Viewer.player("s1"), question) == engine.odds(BB, other, Viewer.player("s1"), question)
    assert "dragon" not in repr(engine.odds(BB, one, Viewer.player("s1"), question))


def test_pools_too_large_to_walk_in_time_are_refused_clearly() -> None:
    import time

    giant = fighter("a", "A", 0, size=100, agility=30, muscle=30, speed=30, stamina=30)
    state = battle(giant, fighter("b", "B", 1, size=100, speed=30, stamina=30))
    start = time.perf_counter()
    for question in ({"type": "attack", "combatant": "a", "target": "b"},
                     {"type": "check", "combatant": "a", "attribute": "muscle"}):
        with pytest.raises(IllegalDeclaration, match="too many totals"):
            engine.odds(BB, state, GM, question)
    assert time.perf_counter() - start < 2
