"""The dice roller for anything (rules/roller.py): notation, bounds, scripted dice, enumerated chances,
and the roll as a command of every system's battle (rules/engine.py's ``dice_roll``)."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import pytest

from rules import engine, roller
from rules.core import Viewer, event_for
from rules.dice import ScriptedDice, SeededDice
from rules.errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from rules.registry import available_systems
from tests.rules.harness import Rules

GM, ANN, SPECTATOR = Viewer.gm(), Viewer.player("s1"), Viewer.spectator()


@pytest.mark.parametrize(("typed", "written", "dice"), [
    ("2d6+3", "2d6+3", 2), ("d100", "1d100", 1), ("4d6kh3", "4d6kh3", 4), ("3d8 + 1d6", "3d8+1d6", 4),
    ("D20", "1d20", 1), ("d%", "1d100", 1), ("1d20-2", "1d20-2", 1), ("-1d4+10", "-1d4+10", 1),
    ("2d20kl1", "2d20kl1", 2), ("4d6dl1", "4d6dl1", 4), ("100d1000", "100d1000", 100), ("3 + 1d6", "3+1d6", 1),
])
def test_notation_is_read_and_written_one_way(typed: str, written: str, dice: int) -> None:
    expression = roller.parse(typed)
    assert expression.text == written and expression.dice_count == dice


@pytest.mark.parametrize(("typed", "words"), [
    ("", "type a roll"), ("   ", "type a roll"), ("hello", "cannot read"), ("2d", "cannot read"), ("d", "cannot read"),
    ("2d6+", "cannot read"), ("2d6 3", "cannot read"), ("2d6*3", "cannot read"), ("5", "needs dice"),
    ("101d6", "1 to 100 dice"), ("60d6+60d6", "at most 100 dice"), ("1d1001", "1 to 1000 sides"), ("2d0", "1 to 1000 sides"),
    ("0d6", "1 to 100 dice"), ("4d6kh5", "does not fit"), ("4d6kh0", "does not fit"), ("4d6dl4", "does not fit"),
    ("1d6+100000", "at most 10000"), ("1d6+" * 20 + "1", "at most"), ("d6" + "+1" * 40, "at most"), (None, "type a roll"), (12, "type a roll"),
    ("2d6+3; drop table", "cannot read"), ("1e5", "cannot read"), ("+-1d6", "cannot read"),
])
def test_bad_notation_is_refused_with_what_is_wrong(typed: object, words: str) -> None:
    with pytest.raises(InvalidDeclaration, match=words):
        roller.parse(typed)


def test_scripted_dice_give_the_exact_total_and_words() -> None:
    made = roller.roll(roller.parse("3d8 + 1d6 - 2"), ScriptedDice([8, 1, 4, 6]), "x")
    assert made.total == 8 + 1 + 4 + 6 - 2
    assert [r["faces"] for r in made.rolls] == [[8, 1, 4], [6]]
    assert made.rolls[0]["modifier"] == -2 and made.rolls[0]["total"] == 11 and made.rolls[1]["total"] == 6
    assert made.working == "(8 + 1 + 4) + 6 - 2"
    kept = roller.roll(roller.parse("4d6kh3"), ScriptedDice([2, 6, 2, 5]), "x")
    assert kept.total == 13 and kept.rolls[0]["kept"] == [True, True, False, True]  # the earlier of two 2s stays
    assert kept.working == "(2 + 6 + [2] + 5)"
    low = roller.roll(roller.parse("2d20kl1"), ScriptedDice([15, 3]), "x")
    assert low.total == 3
    negative = roller.roll(roller.parse("-1d4+10"), ScriptedDice([3]), "x")
    assert negative.total == 7


def test_the_script_must_hold_a_possible_face() -> None:
    with pytest.raises(Exception, match="impossible"):
        roller.roll(roller.parse("1d6"), ScriptedDice([7]), "x")


def _distribution(typed: str, sides: int, count: int) -> Counter[int]:
    """Every face combination through the roller with scripted dice."""
    totals: Counter[int] = Counter()
    for faces in itertools.product(range(1, sides + 1), repeat=count):
        totals[roller.roll(roller.parse(typed), ScriptedDice(faces), "x").total] += 1
    return totals


def test_4d6_keep_highest_3_matches_an_independent_enumeration() -> None:
    # independently: the sum of all four dice less the lowest one
    expected: Counter[int] = Counter(sum(f) - min(f) for f in itertools.product(range(1, 7), repeat=4))
    assert _distribution("4d6kh3", 6, 4) == expected
    assert expected[18] == 21 and expected[3] == 1  # four sixes, or three and another; four ones
    mean = Fraction(sum(total * n for total, n in expected.items()), 6**4)
    assert mean == Fraction(15869, 1296)
    # dropping the lowest is keeping the highest three
    assert _distribution("4d6dl1", 6, 4) == expected


def test_advantage_and_disadvantage_match_the_formulas() -> None:
    high = _distribution("2d20kh1", 20, 2)
    low = _distribution("2d20kl1", 20, 2)
    for k in range(1, 21):
        assert high[k] == 2 * k - 1  # P(max = k) = (k² - (k-1)²) / 400
        assert low[k] == 2 * (21 - k) - 1


def test_seeded_dice_draw_die_by_die_in_order() -> None:
    made = roller.roll(roller.parse("3d8+1d6"), SeededDice("a-seed"), "x")
    again = SeededDice("a-seed")
    assert [r["faces"] for r in made.rolls] == [list(again.roll(3, 8, "x").faces), list(again.roll(1, 6, "x").faces)]


def test_the_event_names_who_and_why_and_a_secret_reaches_only_the_gm() -> None:
    ev = roller.roll_event({"notation": "d20+5", "label": "perception check", "by": "Ann"}, ANN, ScriptedDice([12]))
    assert ev["text"] == "Ann rolled 1d20+5 for perception check: 12 + 5 = 17."
    assert ev["visibility"] == "public" and ev["rolls"][0]["purpose"] == "Ann: perception check"
    secret = roller.roll_event({"notation": "1d100", "label": "wandering monsters", "secret": True}, GM, ScriptedDice([42]))
    for viewer in (ANN, SPECTATOR):
        seen = event_for(secret, viewer, {})
        assert seen is not None and seen["text"] == "The GM rolled in secret."
        assert seen["rolls"] == [] and seen["data"] == {} and "42" not in repr(seen) and "wandering" not in repr(seen)
    assert event_for(secret, GM, {})["data"]["total"] == 42  # type: ignore[index]
    with pytest.raises(NotPermitted):
        roller.roll_event({"notation": "d20", "secret": True}, ANN, ScriptedDice([1]))
    with pytest.raises(NotPermitted):
        roller.roll_event({"notation": "d20"}, SPECTATOR, ScriptedDice([1]))
    with pytest.raises(InvalidDeclaration, match="label"):
        roller.roll_event({"notation": "d20", "label": "x" * 61}, GM, ScriptedDice([1]))
    with pytest.raises(InvalidDeclaration, match="secret"):
        roller.roll_event({"notation": "d20", "secret": "yes"}, GM, ScriptedDice([1]))


@pytest.mark.parametrize("system", available_systems(), ids=lambda s: s.id)
def test_a_roll_is_a_command_of_every_systems_battle_and_leaves_the_board_as_it_was(system: object) -> None:
    rules = Rules(system)  # type: ignore[arg-type]
    state, _ = rules.start(dice=SeededDice("start"))
    made = engine.step(rules.system, state, engine.Command(engine.DICE_ROLL, {"notation": "2d6+1", "label": "luck", "by": "Ann"}, ANN),
                       ScriptedDice([3, 5]), seed="s")
    assert made.state == state
    assert [e["type"] for e in made.events] == ["dice.rolled"] and made.events[0]["data"]["total"] == 9
    assert made.record == {"type": "dice_roll", "notation": "2d6+1", "label": "luck", "by": "Ann"}
    with pytest.raises(InvalidDeclaration):
        engine.step(rules.system, state, engine.Command(engine.DICE_ROLL, {"notation": "2d"}, GM), ScriptedDice([]), seed="s")
    ended = {**state, "status": "ended"}
    with pytest.raises(IllegalDeclaration, match="ended"):
        engine.step(rules.system, ended, engine.Command(engine.DICE_ROLL, {"notation": "d6"}, GM), ScriptedDice([1]), seed="s")
