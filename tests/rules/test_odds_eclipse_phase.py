"""Eclipse Phase odds against an enumeration written here from the rule text and the rulings, and the leak contract.

The reference walks both d100 (00-99): 00 is a critical success, 99 a critical failure, other doubles
are criticals; a success is rolled at or under the target, superior from 33 and twice from 66; in an
opposed test a failed attack misses, a failed defence lets a successful attack hit, a critical beats a
plain success, otherwise the higher roll wins. Damage: the weapon's dice, +1d6 per superior success, all
doubled on a critical; armour (halved, rounding up, by armour-piercing) comes off; every whole Wound
Threshold through is a wound; Durability reached incapacitates, the death rating kills.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from rules import Viewer, engine, get_system
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from tests.rules.harness import Rules

EP = get_system("eclipse-phase")
RULES = Rules(EP)
GM = Viewer.gm()
PRESETS = {p["name"]: p for p in EP.presets()}


def battle(**changes: Any) -> dict[str, Any]:
    jinx = {**PRESETS["Jinx"], "id": "j", "side": "A", "controller": "seat", "seat": "s1", "x": 0, "y": 0, "initiative": 40}
    stalker = {**PRESETS["Exhuman stalker"], "id": "x", "side": "B", "x": 3, "y": 0, "controller": "seat", "seat": "s2"}
    jinx.update(changes.get("jinx", {}))
    stalker.update(changes.get("stalker", {}))
    state, _ = RULES.start([jinx, stalker], faces=[6, 1])
    assert state["active"] == "j"
    return state


def judged(roll: int, target: int) -> tuple[bool, bool, int]:
    if roll == 0:
        return True, True, 0
    if roll == 99:
        return False, True, 0
    success = roll <= target
    critical = roll % 11 == 0
    superior = 0 if not success or critical else (2 if roll >= 66 else 1 if roll >= 33 else 0)
    return success, critical, superior




def dice_sums(count: int, sides: int) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for faces in itertools.product(range(1, sides + 1), repeat=count):
        out[sum(faces)] = out.get(sum(faces), Fraction(0)) + Fraction(1, sides**count)
    return out


def reference(attack: int, defence: int | None, dv: tuple[int, int, int], armour: int, threshold: int,
              durability: int, death: int, damage_before: int = 0, extra_dice: tuple[int, int] = (0, 6),
              blind: bool = False, called: str | None = None) -> dict[str, Fraction]:
    """``called``: a called shot's aim; it comes off on a hit with a superior success or a critical (ruling
    EP-11): bypassing armour then ignores the armour, disarming deals no damage."""
    out = {k: Fraction(0) for k in ("hit", "wound", "incapacitated", "dead", "e_wounds")}
    if called:
        out["called"] = Fraction(0)
    defence_rolls = range(100) if defence is not None else [None]
    share = Fraction(1, 100 * len(defence_rolls))
    hits: dict[tuple[bool, int], Fraction] = {}  # P(hit) by what the damage reads of the attack roll
    for a in range(100):
        a_ok, a_crit, superior = judged(a, attack)
        if not a_ok:
            continue
        for d in defence_rolls:
            if d is not None:
                d_ok, d_crit, _ = judged(d, defence)
                if d_ok and (d_crit and not a_crit or d_crit == a_crit and a <= d):
                    continue
            share_hit = share / 2 if blind else share  # a blind attack misses on 00-49 anyway
            hits[(a_crit, superior)] = hits.get((a_crit, superior), Fraction(0)) + share_hit
    for (a_crit, superior), share_hit in hits.items():
        out["hit"] += share_hit
        came_off = bool(called) and (a_crit or superior >= 1)
        if came_off:
            out["called"] += share_hit
            if called == "disarm":
                continue
        base = dice_sums(dv[0], dv[1])
        if extra_dice[0]:
            base = _add(base, dice_sums(*extra_dice))
        extra = dice_sums(superior, 6) if superior and not a_crit else {0: Fraction(1)}
        for x, p in base.items():
            for y, q in extra.items():
                total = (x + dv[2] + y) * (2 if a_crit else 1)
                through = max(0, total - (0 if came_off and called == "armour" else armour))
                wounds = through // threshold
                w = share_hit * p * q
                out["wound"] += w if wounds else 0
                out["e_wounds"] += w * wounds
                if damage_before + through >= death:
                    out["dead"] += w
                elif damage_before + through >= durability:
                    out["incapacitated"] += w
    return out


def _add(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for x, p in a.items():
        for y, q in b.items():
            out[x + y] = out.get(x + y, Fraction(0)) + p * q
    return out


def values(case: dict[str, Any]) -> dict[str, Fraction]:
    out = {o["key"]: Fraction(o["fraction"]) for o in case["outcomes"]}
    out["e_wounds"] = Fraction(case["expected"][0]["fraction"])
    return out


def test_pistol_shot_against_the_text() -> None:
    state = battle()
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 0, "mode": "single"})
    assert answer["attack_target"] == 70  # Guns 70, close range, nothing else
    (case,) = answer["cases"]
    assert case["key"] == "defence_fray" and case["defence_target"] == 30  # half of Fray 60
    # kinetic armour 10 (natural), Wound Threshold 8, Durability 40, death rating 60
    assert values(case) == reference(70, 30, (2, 10, 0), 10, 8, 40, 60)
    assert answer["most_likely"] == "defence_fray"
    assert Fraction(answer["attack"][0]["fraction"]) == Fraction(71, 100)


def test_burst_fire_blind_against_the_text() -> None:
    state = battle(jinx={"weapon1": "smg"})
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 0, "mode": "burst",
                                 "visibility": "blind_chance"})
    assert answer["attack_target"] == 70
    (case,) = answer["cases"]
    assert values(case) == reference(70, 30, (2, 10, 0), 10, 8, 40, 60, extra_dice=(1, 10), blind=True)


def test_melee_against_each_defence_and_damage_already_taken() -> None:
    state = battle(stalker={"x": 1, "y": 0})
    state["combatants"]["x"]["damage"] = 30
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 1})
    assert answer["attack_target"] == 30  # Melee 30
    cases = {c["key"]: c for c in answer["cases"]}
    assert set(cases) == {"defence_melee", "defence_fray"}
    assert cases["defence_melee"]["defence_target"] == 80 and cases["defence_fray"]["defence_target"] == 60
    for key, target in (("defence_melee", 80), ("defence_fray", 60)):
        assert values(cases[key]) == reference(30, target, (1, 10, 0), 10, 8, 40, 60, damage_before=30)
    assert answer["most_likely"] == "defence_melee"


def test_armour_piercing_claws_on_a_target_that_cannot_defend() -> None:
    state = battle(stalker={"x": 1, "y": 0})
    state["combatants"]["j"]["conditions"].append("surprised")
    state["active"] = "x"  # the stalker's turn
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "x", "target": "j", "weapon": 0})
    (case,) = answer["cases"]
    assert case["key"] == "no_defence"
    # claws 1d10+2, armour-piercing: smart clothes kinetic 3 halved (rounding up) to 2; Jinx: Durability 35,
    # Wound Threshold 7, synth death rating 70
    assert values(case) == reference(80, None, (1, 10, 2), 2, 7, 35, 70)


def test_a_player_sees_only_what_does_not_depend_on_hidden_numbers() -> None:
    state = battle()
    answer = engine.odds(EP, state, Viewer.player("s1"), {"type": "attack", "combatant": "j", "target": "x", "weapon": 0})
    assert answer["numbers_known"] is False and answer["cases"] == []
    assert [o["key"] for o in answer["outcomes"]] == ["attack_succeeds", "critical", "superior", "two_superior"]
    rows = {row["defence_target"]: Fraction(row["fraction"]) for row in answer["by_defence_target"]}
    assert sorted(rows) == [10, 20, 30, 40, 50, 60, 70, 80, 90]
    for target, p in rows.items():  # P(hit) by the text, armour and health left out
        assert p == reference(70, target, (1, 2, 0), 0, 1, 10**6, 10**6)["hit"]


def test_leak_contract_hidden_numbers_change_nothing() -> None:
    question = {"type": "attack", "combatant": "j", "target": "x", "weapon": 0}
    player = Viewer.player("s1")
    reference_answer = engine.odds(EP, battle(), player, question)
    for stalker in ({"fray": 10}, {"durability": 80, "som": 5}, {"kinetic_natural": 0, "armour": "combat_shell"}, {"melee": 5, "vigor": 0}):
        assert engine.odds(EP, battle(stalker=stalker), player, question) == reference_answer, stalker
    # damage already taken stays hidden too, unless the GM reveals Durability
    hurt = battle()
    hurt["combatants"]["x"]["damage"] = 25
    assert engine.odds(EP, hurt, player, question) == reference_answer
    # with a target that cannot defend, the player learns P(hit) and the damage dice only
    down = battle()
    down["combatants"]["x"]["conditions"].append("surprised")
    down_answer = engine.odds(EP, down, player, question)
    assert [c["key"] for c in down_answer["cases"]] == ["no_defence"]
    assert {o["key"] for o in down_answer["cases"][0]["outcomes"]} == {"hit"}
    down2 = battle(stalker={"fray": 5, "durability": 20})
    down2["combatants"]["x"]["conditions"].append("surprised")
    assert engine.odds(EP, down2, player, question) == down_answer


def test_roles_and_bad_questions() -> None:
    state = battle()
    with pytest.raises(NotPermitted):
        engine.odds(EP, state, Viewer.player("s2"), {"type": "attack", "combatant": "j", "target": "x", "weapon": 0})
    with pytest.raises(InvalidDeclaration):
        engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "nobody", "weapon": 0})
    with pytest.raises(InvalidDeclaration):
        engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 9})
    with pytest.raises(InvalidDeclaration):
        engine.odds(EP, state, GM, {"type": "move", "combatant": "j"})
    with pytest.raises(IllegalDeclaration):
        engine.odds(EP, state, GM, {"type": "attack", "combatant": "x", "target": "j", "weapon": 0})  # not x's turn
    with pytest.raises(IllegalDeclaration):
        engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 1})  # knife out of reach


def test_damage_dice_too_many_to_walk_are_refused_clearly() -> None:
    state = battle(jinx={"weapon1": "none", "weapon2": "none", "custom_weapon": "Mass driver", "custom_dv": "60d99"})
    weapons = [w["name"] for w in state["combatants"]["j"]["weapons"]]
    with pytest.raises(IllegalDeclaration, match="too many totals"):
        engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": weapons.index("Mass driver")})


def test_a_spectator_may_not_ask_about_an_attacker_whose_numbers_are_hidden() -> None:
    state = battle(jinx={"controller": "gm", "seat": None})
    with pytest.raises(NotPermitted):
        engine.odds(EP, state, Viewer.spectator(), {"type": "attack", "combatant": "j", "target": "x", "weapon": 0})


@pytest.mark.parametrize("aim", ["armour", "disarm", "spot"])
def test_a_called_shot_and_its_chance_of_coming_off_against_the_text(aim: str) -> None:
    state = battle(stalker={"weapon2": "knife"})  # claws cannot be knocked away; the knife can
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 0,
                                 "called_shot": aim, "called_spot": "eyes"})
    assert answer["attack_target"] == 60  # Guns 70, −10 for the called shot
    (case,) = answer["cases"]
    expected = reference(60, 30, (2, 10, 0), 10, 8, 40, 60, called=aim)
    assert values(case) == expected
    assert case["outcomes"][-1]["label"] == "The called shot comes off"


def test_a_blind_called_shot_comes_off_only_when_the_blind_roll_finds_the_mark() -> None:
    state = battle()
    answer = engine.odds(EP, state, GM, {"type": "attack", "combatant": "j", "target": "x", "weapon": 0,
                                 "called_shot": "armour", "visibility": "blind_chance"})
    (case,) = answer["cases"]
    assert values(case) == reference(60, 30, (2, 10, 0), 10, 8, 40, 60, blind=True, called="armour")


def test_a_player_who_may_not_see_the_defence_gets_the_most_a_called_shot_can_come_off() -> None:
    state = battle()
    answer = engine.odds(EP, state, Viewer.player("s1"), {"type": "attack", "combatant": "j", "target": "x", "weapon": 0,
                                                   "called_shot": "armour"})
    assert answer["cases"] == []
    at_most = next(o for o in answer["outcomes"] if o["key"] == "called_at_most")
    good_enough = sum(1 for a in range(100) if judged(a, 60)[0] and (judged(a, 60)[1] or judged(a, 60)[2] >= 1))
    assert Fraction(at_most["fraction"]) == Fraction(good_enough, 100)
    # with no called shot, nothing about one
    plain = engine.odds(EP, state, Viewer.player("s1"), {"type": "attack", "combatant": "j", "target": "x", "weapon": 0})
    assert "called_at_most" not in {o["key"] for o in plain["outcomes"]}
