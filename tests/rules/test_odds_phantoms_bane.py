"""Phantom's Bane odds against an enumeration written here from the rule text, and the leak contract.

The reference below walks every face of the four combat dice, of the escape rolls and of the 1-3
dice, and applies the text's rules directly (totals with capped gear, Press/Defend halves, damage
on a strictly higher offence, 6-against-1 penetrations and counters with the doubling, wear is not
needed for one turn, weakening at the end of the turn when both stand). It shares no code with
``rules/odds``.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from typing import Any

import pytest

from rules import Viewer, engine, get_system
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from tests.rules.harness import Rules

PB = get_system("phantoms-bane")
RULES = Rules(PB)
OPTIONS = ("press", "attack", "defend", "run_away")


def fighter(cid: str, side: str, **stats: Any) -> dict[str, Any]:
    base = {
        "name": cid.upper(),
        "id": cid,
        "side": side,
        "offence": 4,
        "defence": 4,
        "health": 6,
        "skill": 3,
        "weapon_name": "Sword",
        "weapon_bonus": 2,
        "weapon_natural": False,
        "armour_name": "Mail",
        "armour_bonus": 2,
        "armour_natural": False,
    }
    return {**base, **stats}


def duel(a: dict[str, Any], b: dict[str, Any], **options: Any) -> dict[str, Any]:
    """The duel set up: a computer's first choice rolls a d100 (50) at the start, nothing else does."""
    computers = sum(c.get("controller") == "computer" for c in (a, b))
    state, _ = RULES.start([a, b], options, faces=[50] * computers)
    return state


# --- the reference, from the rule text ----------------------------------------------------------------


def half(x: int) -> int:
    return max(x, 0) // 2


def totals(c: dict[str, Any], option: str) -> tuple[int, int]:
    weapon = max(0, min(c["weapon"]["bonus"] if c["weapon"] else 0, c["offence"]))
    armour = max(0, min(c["armour"]["bonus"] if c["armour"] else 0, c["defence"]))
    off = c["offence"] + weapon
    dfc = c["defence"] + armour
    if option == "press":
        off, dfc = off + half(c["offence"]), dfc - half(c["defence"])
    elif option == "defend":
        off, dfc = off - half(c["offence"]), dfc + half(c["defence"])
    return off, dfc


def half_dice(n: int) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for faces in itertools.product((1, 2, 3), repeat=n):
        out[sum(faces)] = out.get(sum(faces), Fraction(0)) + Fraction(1, 3**n)
    return out


def weaken_health(c: dict[str, Any], health: int, turn: int) -> int:
    """Health after the end-of-turn weakening (only Health matters for defeat)."""
    if turn > health and c["defence"] <= 0 and c["offence"] <= 0:
        return health - 1
    return health


def reference(state: dict[str, Any], me: str, mine: str, theirs: str, escape_possible: bool = True) -> dict[str, Fraction]:
    """P of each outcome key, and the expected damages, straight from the text."""
    foe = next(c for c in state["order"] if c != me)
    cs = state["combatants"]
    turn = state["turn"]
    result: dict[str, Fraction] = {k: Fraction(0) for k in ("deal_damage", "take_damage", "defeat_foe", "defeated", "draw", "escape", "foe_escapes", "e_dealt", "e_taken")}
    p_escape = Fraction(0)
    runner = None
    if "run_away" in (mine, theirs):
        if not escape_possible:
            p_escape = Fraction(0)
        elif mine == theirs == "run_away":
            p_escape = Fraction(1)
        else:
            runner, holder = (me, foe) if mine == "run_away" else (foe, me)
            hold_option = theirs if runner == me else mine
            if hold_option == "defend":
                p_escape = Fraction(1)
            else:
                wins = 0
                for run in itertools.product(range(1, 7), repeat=2):
                    for hold in itertools.product(range(1, 7), repeat=2):
                        if sum(run) + cs[runner]["defence"] + cs[runner]["skill"] > sum(hold) + cs[holder]["offence"] + cs[holder]["skill"]:
                            wins += 1
                p_escape = Fraction(wins, 1296)
        if p_escape:
            if mine == theirs == "run_away" or runner is None:
                result["escape"] += p_escape if mine == "run_away" else 0
                result["foe_escapes"] += p_escape if theirs == "run_away" else 0
            elif runner == me:
                result["escape"] += p_escape
            else:
                result["foe_escapes"] += p_escape
    fight = 1 - p_escape
    if not fight:
        return result
    my_opt = "attack" if mine == "run_away" else mine
    foe_opt = "attack" if theirs == "run_away" else theirs
    my_off, my_def = totals(cs[me], my_opt)
    foe_off, foe_def = totals(cs[foe], foe_opt)
    for mo, md, fo, fd in itertools.product(range(1, 7), repeat=4):
        base = fight * Fraction(1, 1296)
        to_foe = max(0, mo + my_off - (fd + foe_def))
        to_me = max(0, fo + foe_off - (md + my_def))
        extras_foe: list[dict[int, Fraction]] = []
        extras_me: list[dict[int, Fraction]] = []
        if mo == 6 and fd == 1:  # my penetration
            extras_foe.append(half_dice(2 if my_opt == "press" else 1))
        if fo == 6 and md == 1:  # the foe's penetration
            extras_me.append(half_dice(2 if foe_opt == "press" else 1))
        if md == 6 and fo == 1:  # my counter
            extras_foe.append(half_dice(2 if my_opt == "defend" else 1))
        if fd == 6 and mo == 1:  # the foe's counter
            extras_me.append(half_dice(2 if foe_opt == "defend" else 1))
        for combo_foe in itertools.product(*[d.items() for d in extras_foe]):
            for combo_me in itertools.product(*[d.items() for d in extras_me]):
                w = base
                dealt, taken = to_foe, to_me
                for v, p in combo_foe:
                    dealt += v
                    w *= p
                for v, p in combo_me:
                    taken += v
                    w *= p
                my_health = cs[me]["health"] - taken
                foe_health = cs[foe]["health"] - dealt
                if my_health > 0 and foe_health > 0:
                    my_health = weaken_health(cs[me], my_health, turn)
                    foe_health = weaken_health(cs[foe], foe_health, turn)
                i_fall, foe_falls = my_health <= 0, foe_health <= 0
                result["deal_damage"] += w if dealt else 0
                result["take_damage"] += w if taken else 0
                result["defeat_foe"] += w if foe_falls and not i_fall else 0
                result["defeated"] += w if i_fall and not foe_falls else 0
                result["draw"] += w if i_fall and foe_falls else 0
                result["e_dealt"] += w * dealt
                result["e_taken"] += w * taken
    return result


def cases_of(answer: dict[str, Any]) -> dict[str, dict[str, Fraction]]:
    out = {}
    for case in answer["choices"][0]["cases"]:
        values = {o["key"]: Fraction(o["fraction"]) for o in case["outcomes"]}
        values["e_dealt"] = Fraction(case["expected"][0]["fraction"])
        values["e_taken"] = Fraction(case["expected"][1]["fraction"])
        out[case["foe_option"]] = values
    return out


def check(state: dict[str, Any], me: str, viewer: Viewer, escape_possible: bool = True) -> None:
    for mine in OPTIONS:
        answer = engine.odds(PB, state, viewer, {"type": "choose", "combatant": me, "option": mine})
        got = cases_of(answer)
        for theirs in OPTIONS:
            want = reference(state, me, mine, theirs, escape_possible)
            for key, value in got[theirs].items():
                assert value == want[key], (mine, theirs, key, value, want[key])
            for key in ("deal_damage", "take_damage", "defeat_foe", "defeated", "draw"):
                assert key in got[theirs]


# --- tests ------------------------------------------------------------------------------------------------


def test_exact_against_the_text_even_duel() -> None:
    state = duel(fighter("a", "A", controller="seat", seat="s1"), fighter("b", "B"))
    check(state, "a", Viewer.player("s1"))


def test_exact_against_the_text_uneven_duel_with_kills_and_capped_gear() -> None:
    state = duel(
        fighter("a", "A", offence=2, defence=3, health=3, skill=5, weapon_bonus=5),
        fighter("b", "B", offence=7, defence=2, health=2, skill=1, armour_bonus=0, armour_name=""),
    )
    check(state, "a", Viewer.gm())
    check(state, "b", Viewer.gm())


def test_exact_against_the_text_with_weakening_that_kills() -> None:
    state = duel(fighter("a", "A"), fighter("b", "B"))
    state["turn"] = 6
    b = state["combatants"]["b"]
    b["offence"], b["defence"], b["health"] = 0, 0, 1
    check(state, "a", Viewer.gm())


def test_the_gm_sees_a_blocked_escape_a_player_does_not() -> None:
    state = duel(fighter("a", "A", controller="seat", seat="s1"), fighter("b", "B"), escape_impossible=True)
    check(state, "a", Viewer.gm(), escape_possible=False)
    check(state, "a", Viewer.player("s1"), escape_possible=True)


def test_issue_example_fraction_and_shape() -> None:
    state = duel(fighter("a", "A"), fighter("b", "B"))
    answer = engine.odds(PB, state, Viewer.gm(), {"type": "choose", "combatant": "a", "option": "attack"})
    choice = answer["choices"][0]
    assert answer["method"] == "exact"
    assert [c["key"] for c in choice["cases"]] == ["foe_press", "foe_attack", "foe_defend", "foe_run_away"]
    for item in choice["outcomes"] + choice["cases"][0]["outcomes"]:
        assert set(item) == {"key", "label", "p", "exact", "fraction"}
        assert item["exact"] is True and abs(item["p"] - float(Fraction(item["fraction"]))) < 1e-12
    dist = choice["cases"][1]["distributions"][0]
    assert dist["key"] == "damage_dealt"
    assert sum(Fraction(v["fraction"]) for v in dist["values"]) == 1
    # the four options at once when no option is named
    everything = engine.odds(PB, state, Viewer.gm(), {"combatant": "a"})
    assert [c["option"] for c in everything["choices"]] == list(OPTIONS)


def test_bad_questions_and_wrong_seats() -> None:
    state = duel(fighter("a", "A", controller="seat", seat="s1"), fighter("b", "B", controller="seat", seat="s2"))
    with pytest.raises(NotPermitted):
        engine.odds(PB, state, Viewer.player("s1"), {"combatant": "b", "option": "attack"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(PB, state, Viewer.player("s1"), {"combatant": "a", "option": "dance"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(PB, state, Viewer.gm(), {"combatant": "zz"})
    with pytest.raises(InvalidDeclaration):
        engine.odds(PB, state, Viewer.gm(), ["a"])  # type: ignore[arg-type]
    state["status"] = "ended"
    with pytest.raises(IllegalDeclaration):
        engine.odds(PB, state, Viewer.gm(), {"combatant": "a"})


def test_leak_contract_the_foes_pending_choice_and_hidden_values_change_nothing() -> None:
    """Odds for a player are the same whatever the foe has chosen, its temperament, the escape ruling."""
    base = duel(fighter("a", "A", controller="seat", seat="s1"), fighter("b", "B", controller="computer"))
    player = Viewer.player("s1")
    reference_answer = engine.odds(PB, base, player, {"combatant": "a"})
    temperaments = ("cowardly", "steady", "reckless")
    for i, choice in enumerate((None, *OPTIONS)):
        blocked = i % 2 == 1
        state = RULES.play(base, {"type": "set_escape", "possible": not blocked}, Viewer.gm())[0]
        state["choices"]["b"] = choice
        state["chosen_by"]["b"] = "computer" if choice else None
        state["combatants"]["b"]["temperament"] = temperaments[i % 3]
        viewer = player if i % 2 == 0 else Viewer.spectator()  # a spectator (where the table allows) sees the same
        assert engine.odds(PB, state, viewer, {"combatant": "a"}) == reference_answer
