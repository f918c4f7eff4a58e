"""AD&D odds against an enumeration written here from the rule text, and the leak contract.

The reference: a blow hits when the d20 plus the to-hit bonus reaches THAC0 minus the target's armour
class; its damage is the weapon's dice plus the bonus, at least 1; a round's blows add up; a target at 0
hit points or fewer drops, and dies if it dies at 0 or reaches -10.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from rules import Viewer, engine, get_system
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.systems.adnd.data import WEAPONS, parse_dice
from tests.rules.harness import Rules

ADND = get_system("adnd")
RULES = Rules(ADND)
GM = Viewer.gm()
PRESETS = {p["name"]: p for p in ADND.presets()}


def encounter(**changes: dict[str, Any]) -> dict[str, Any]:
    lineup = [
        {**PRESETS["Fighter (5th level)"], "id": "f", "side": "A", "controller": "seat", "seat": "s1", **changes.get("f", {})},
        {**PRESETS["Thief (2nd level)"], "id": "t", "side": "A", "controller": "seat", "seat": "s2", **changes.get("t", {})},
        {**PRESETS["Bugbear"], "id": "b", "side": "B", **changes.get("b", {})},
    ]
    state, _ = RULES.start(lineup)
    return state


def reference(attacker: dict[str, Any], target: dict[str, Any], blows: int, damage: str, bonus: int) -> dict[str, Fraction]:
    need = attacker["thac0"] - target["ac"]
    n, sides, mod = parse_dice(damage)
    one: dict[int, Fraction] = {}
    for face in range(1, 21):
        if face + attacker["to_hit_bonus"] < need:
            one[0] = one.get(0, Fraction(0)) + Fraction(1, 20)
            continue
        for faces in itertools.product(range(1, sides + 1), repeat=n):
            amount = max(1, sum(faces) + mod + bonus)
            one[amount] = one.get(amount, Fraction(0)) + Fraction(1, 20 * sides**n)
    rounds = {0: Fraction(1)}
    for _ in range(blows):
        nxt: dict[int, Fraction] = {}
        for x, p in rounds.items():
            for y, q in one.items():
                nxt[x + y] = nxt.get(x + y, Fraction(0)) + p * q
        rounds = nxt
    hp = target["hp"]
    dead_at = 0 if target.get("dies_at_zero") else -10
    return {
        "hit": 1 - one.get(0, Fraction(0)),
        "any_hit": 1 - rounds.get(0, Fraction(0)),
        "slay": sum((p for x, p in rounds.items() if hp - x <= 0), Fraction(0)),
        "kill": sum((p for x, p in rounds.items() if hp - x <= dead_at), Fraction(0)),
        "e_blow": sum((x * p for x, p in one.items()), Fraction(0)),
        "e_round": sum((x * p for x, p in rounds.items()), Fraction(0)),
    }


def values(answer: dict[str, Any]) -> dict[str, Fraction]:
    out = {o["key"]: Fraction(o["fraction"]) for o in answer["outcomes"]}
    out["e_blow"] = Fraction(answer["expected"][0]["fraction"])
    out["e_round"] = Fraction(answer["expected"][1]["fraction"])
    return out


@pytest.mark.parametrize("hp", [15, 4, 1])
def test_gm_melee_odds_against_the_text(hp: int) -> None:
    state = encounter(b={"hp": hp}, f={"attacks": 2})
    answer = engine.odds(ADND, state, GM, {"combatant": "f", "kind": "melee", "target": "b"})
    f, b = state["combatants"]["f"], state["combatants"]["b"]
    assert answer["blows"] == 2
    assert values(answer) == reference(f, b, 2, WEAPONS[f["weapon"]]["damage"], f["damage_bonus"])


def test_a_player_character_target_who_does_not_die_at_zero() -> None:
    state = encounter(t={"hp": 6})
    answer = engine.odds(ADND, state, GM, {"combatant": "b", "kind": "melee", "target": "t"})
    b, t = state["combatants"]["b"], state["combatants"]["t"]
    want = reference(b, t, b["attacks"], WEAPONS[b["weapon"]]["damage"], b["damage_bonus"])
    assert values(answer) == want and want["slay"] > want["kill"]


def test_a_player_against_a_monster_gets_a_row_per_armour_class() -> None:
    state = encounter()
    answer = engine.odds(ADND, state, Viewer.player("s1"), {"combatant": "f", "kind": "melee", "target": "b"})
    f = state["combatants"]["f"]
    assert answer["stats_known"] is False and answer["outcomes"] == []
    rows = {row["ac"]: Fraction(row["fraction"]) for row in answer["by_armour_class"]}
    assert sorted(rows) == list(range(-10, 11))
    for ac, p in rows.items():
        need = f["thac0"] - ac
        assert p == Fraction(sum(1 for face in range(1, 21) if face + f["to_hit_bonus"] >= need), 20)


def test_charge_arrival_and_who_strikes_first() -> None:
    state = encounter(f={"weapon": "two_handed_sword"})
    answer = engine.odds(ADND, state, GM, {"combatant": "f", "kind": "charge", "target": "b"})
    charge = answer["charge"]
    view = ADND.charge_view(state, "f")
    assert charge["arrival_segment"] == view["targets"]["b"]["arrival_segment"]
    order = [group["combatants"] for group in charge["strike_order"]]
    # the two-handed sword (6 ft) outreaches the bugbear's morning star (4 ft)
    assert order[0] == ["f"] and ["b"] in order and charge["first"] == "Fighter (5th level) strikes first"
    assert answer["blows"] == 1


def test_leak_contract_monster_stats_and_the_dms_secret_declaration_change_nothing() -> None:
    player = Viewer.player("s1")
    question = {"combatant": "f", "kind": "charge", "target": "b"}
    base = engine.odds(ADND, encounter(), player, question)
    for changes in ({"ac": -3}, {"hp": 1}, {"thac0": 5, "to_hit_bonus": 3}, {"dies_at_zero": False}):
        assert engine.odds(ADND, encounter(b=changes), player, question) == base, changes
    secret = encounter()
    secret["declarations"]["b"] = {"kind": "set", "letter": "F", "target": None, "by": "gm"}
    assert engine.odds(ADND, secret, player, question) == base


def test_roles_and_bad_questions() -> None:
    state = encounter()
    with pytest.raises(NotPermitted):
        engine.odds(ADND, state, Viewer.player("s2"), {"combatant": "f", "kind": "melee", "target": "b"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(ADND, state, GM, {"combatant": "f", "kind": "dance", "target": "b"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(ADND, state, GM, {"combatant": "f", "kind": "melee"})
    with pytest.raises(IllegalDeclaration):
        engine.odds(ADND, state, GM, {"combatant": "f", "kind": "melee", "target": "t"})  # same side
    with pytest.raises(IllegalDeclaration):
        engine.odds(ADND, state, GM, {"combatant": "f", "kind": "missile", "target": "b"})  # no missile weapon


def test_damage_dice_too_many_to_walk_are_refused_clearly() -> None:
    state = encounter(b={"weapon": "natural", "damage": "40d100"})
    with pytest.raises(IllegalDeclaration, match="too many totals"):
        engine.odds(ADND, state, GM, {"combatant": "b", "kind": "melee", "target": "f"})


def test_a_spectator_may_not_ask_about_a_monsters_blows() -> None:
    state = encounter()
    with pytest.raises(NotPermitted):
        engine.odds(ADND, state, Viewer.spectator(), {"combatant": "b", "kind": "melee", "target": "f"})
    # a player character's stats are open: a spectator (where the table shows odds) may ask
    assert engine.odds(ADND, state, Viewer.spectator(), {"combatant": "f", "kind": "melee", "target": "b"})["stats_known"] is False
