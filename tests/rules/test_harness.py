"""The rules tests' harness (tests/rules/harness.py): exact scripts, the engine's path, the reveal set apart."""

from __future__ import annotations

import pytest

from rules.dice import SeededDice
from rules.errors import DiceExhausted, NotPermitted
from rules.registry import SYSTEM_PACKAGES
from tests.rules.harness import REVEAL, SPECTATOR, Rules, UnusedFaces, scripted, types

PB = Rules("phantoms-bane")
CHOSE_A = {"type": "choose", "combatant": "c1", "option": "attack"}
CHOSE_B = {"type": "choose", "combatant": "c2", "option": "attack"}


@pytest.mark.parametrize("system_id", sorted(SYSTEM_PACKAGES))
def test_every_system_starts_from_its_presets(system_id: str) -> None:
    rules = Rules(system_id)
    state, _ = rules.start(rules.lineup(), dice=SeededDice("presets"))
    assert set(state["combatants"]) == {"c1", "c2"}
    state, _ = rules.start(rules.lineup(), dice=SeededDice("presets"), validate=True)
    assert set(state["combatants"]) == {"c1", "c2"}


def test_unused_faces_fail_and_are_named() -> None:
    state, _ = PB.start(PB.lineup("Jharek", "Wild Monster"))
    state, _ = PB.play(state, CHOSE_A)
    with pytest.raises(UnusedFaces, match=r"choose left scripted faces unused: \[6, 6\]"):
        PB.play(state, CHOSE_B, faces=[3, 4, 1, 5, 6, 6])
    with pytest.raises(UnusedFaces, match=r"the setup left scripted faces unused: \[1\]"):
        PB.start(PB.lineup("Jharek", "Wild Monster"), faces=[1])
    with pytest.raises(DiceExhausted):
        PB.play(state, CHOSE_B, faces=[3, 4, 1])


def test_a_refused_declaration_leaves_its_script_unchecked_and_goes_through_authorize() -> None:
    state, _ = PB.start(PB.lineup("Jharek", "Wild Monster"))
    with pytest.raises(NotPermitted):
        PB.play(state, CHOSE_A, SPECTATOR, faces=[1, 2, 3])


def test_several_declarations_share_one_script() -> None:
    state, _ = PB.start(PB.lineup("Jharek", "Wild Monster"))
    together, events = PB.plays(state, [CHOSE_A, CHOSE_B], faces=[3, 4, 1, 5])
    one, _ = PB.play(state, CHOSE_A)
    apart, more = PB.play(one, CHOSE_B, faces=[3, 4, 1, 5])
    assert together == apart and types(events)[-3:] == types(more)[-3:]
    with pytest.raises(UnusedFaces, match="choose then choose"):
        PB.plays(state, [CHOSE_A, CHOSE_B], faces=[3, 4, 1, 5, 2])
    with scripted([3, 4, 1, 5]) as dice:
        PB.plays(state, [CHOSE_A, CHOSE_B], dice=dice)


def test_the_reveal_of_an_ending_declaration_is_set_apart() -> None:
    state, _ = PB.start(PB.lineup("Jharek", "Wild Monster"))
    ended = False
    for n in range(60):
        state, events = PB.plays(state, [CHOSE_A, CHOSE_B], dice=SeededDice(f"end-{n}"))
        if state["status"] == "ended":
            ended = True
            break
        assert PB.revealed == []
    assert ended and REVEAL not in types(events)
    assert types(PB.revealed) == [REVEAL]
