"""rules/read.py: one reader for every field, so the same malformed value gets the same refusal in
every system.

The systems come from the registry: each has a probe below (a declaration that reads a whole
number and a combatant id before anything else can refuse it), and a system without one fails
:func:`test_every_registered_system_has_a_probe`, so a sixth system is covered as soon as it is
registered. Each system's battle starts from its own first two presets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from rules import engine, read
from rules.contract import RuleSystem
from rules.core import State, Viewer
from rules.dice import SeededDice
from rules.engine import Command
from rules.errors import InvalidDeclaration, RulesError
from rules.registry import SYSTEM_PACKAGES, get_system
from tests.rules.harness import Rules

GM = Viewer.gm()
SEED = "0123456789abcdef0123456789abcdef"
NOW = 1700000000.25


@dataclass(frozen=True)
class Probe:
    """A declaration with good values: ``whole`` names its whole-number field (None when the system's
    declarations carry none), ``combatant`` its combatant field."""

    kind: str
    payload: Mapping[str, Any]
    whole: str | None
    combatant: str


PROBES: dict[str, Probe] = {
    # a duel's declarations carry no number: choose an option, rule on running away
    "phantoms-bane": Probe("choose", {"combatant": "c1", "option": "press"}, None, "combatant"),
    "eclipse-phase": Probe("move", {"combatant": "c1", "x": 5, "y": 5}, "x", "combatant"),
    "olympia": Probe("set_behind", {"combatant": "c1", "behind": 1}, "behind", "combatant"),
    "adnd": Probe("set_hp", {"combatant": "c1", "hp": 5}, "hp", "combatant"),
    "battles-and-balances": Probe("adjust", {"combatant": "c1", "field": "wounds", "value": 1}, "value", "combatant"),
}

SYSTEMS = sorted(SYSTEM_PACKAGES)
NOT_WHOLE = ["3", " 3", "", True, False, math.nan, math.inf, -math.inf, 2.5, [3], {"n": 3}]
NOT_AN_ID = [3, 3.0, True, ["c1"], {"id": "c1"}]


def started(system: RuleSystem) -> State:
    """A battle of the system's first two presets, c1 on side A and c2 on side B."""
    rules = Rules(system)
    return rules.start(rules.lineup(), dice=SeededDice("read"))[0]


def sent(system_id: str, changes: Mapping[str, Any], *, without: str | None = None) -> engine.Step:
    """The probe's declaration with ``changes`` (and ``without`` left out), through the engine as the GM."""
    system = get_system(system_id)
    probe = PROBES[system_id]
    payload = {**probe.payload, **changes}
    payload.pop(without or "", None)
    return engine.step(system, started(system), Command(probe.kind, payload, GM, NOW), SeededDice("read-cmd"), seed=SEED)


def refusal(system_id: str, changes: Mapping[str, Any], *, without: str | None = None) -> tuple[type, str]:
    with pytest.raises(RulesError) as caught:
        sent(system_id, changes, without=without)
    return type(caught.value), str(caught.value)


def outcome(system_id: str, changes: Mapping[str, Any]) -> Any:
    """What the declaration does: its new state and events, or its refusal."""
    try:
        made = sent(system_id, changes)
    except RulesError as refused:
        return type(refused), str(refused)
    return made.state, made.events


def test_every_registered_system_has_a_probe() -> None:
    assert set(PROBES) == set(SYSTEM_PACKAGES)
    for system_id in SYSTEMS:
        probe = PROBES[system_id]
        assert get_system(system_id).handler(probe.kind) is not None, f"{system_id} has no {probe.kind!r}"


# --- the same refusal in every system -------------------------------------------------------------
@pytest.mark.parametrize("bad", NOT_WHOLE, ids=repr)
@pytest.mark.parametrize("system_id", SYSTEMS)
def test_a_value_that_is_not_a_whole_number_gets_one_refusal(system_id: str, bad: Any) -> None:
    key = PROBES[system_id].whole
    if key is None:
        pytest.skip(f"{system_id}'s declarations carry no whole number")
    assert refusal(system_id, {key: bad}) == (InvalidDeclaration, f"{key} must be a whole number")


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_a_missing_or_null_whole_number_is_needed(system_id: str) -> None:
    key = PROBES[system_id].whole
    if key is None:
        pytest.skip(f"{system_id}'s declarations carry no whole number")
    expected = (InvalidDeclaration, f"the declaration needs {key}")
    assert refusal(system_id, {}, without=key) == expected
    assert refusal(system_id, {key: None}) == expected


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_an_integral_float_counts_as_the_whole_number(system_id: str) -> None:
    """JSON from a browser may send 3.0: the declaration does exactly what 3 does."""
    probe = PROBES[system_id]
    if probe.whole is None:
        pytest.skip(f"{system_id}'s declarations carry no whole number")
    good = probe.payload[probe.whole]
    assert outcome(system_id, {probe.whole: float(good)}) == outcome(system_id, {probe.whole: good})
    assert not isinstance(outcome(system_id, {probe.whole: good})[0], type), f"{system_id}'s probe should succeed"


@pytest.mark.parametrize("bad", NOT_AN_ID, ids=repr)
@pytest.mark.parametrize("system_id", SYSTEMS)
def test_a_combatant_field_that_is_not_an_id_gets_one_refusal(system_id: str, bad: Any) -> None:
    key = PROBES[system_id].combatant
    assert refusal(system_id, {key: bad}) == (InvalidDeclaration, f"{key} must be a combatant id")


@pytest.mark.parametrize("system_id", SYSTEMS)
def test_an_unknown_or_missing_combatant_gets_one_refusal(system_id: str) -> None:
    key = PROBES[system_id].combatant
    assert refusal(system_id, {key: "nobody"}) == (InvalidDeclaration, f"{key}: no combatant 'nobody'")
    needs = (InvalidDeclaration, f"the declaration needs {key} (a combatant id)")
    assert refusal(system_id, {}, without=key) == needs
    assert refusal(system_id, {key: None}) == needs


# --- the readers themselves -----------------------------------------------------------------------
@pytest.mark.parametrize(("value", "expected"), [(0, 0), (-7, -7), (3.0, 3), (-2.0, -2), (10**12, 10**12)])
def test_whole_numbers_accepted(value: Any, expected: int) -> None:
    got = read.whole({"n": value}, "n")
    assert got == expected and type(got) is int


@pytest.mark.parametrize("bad", NOT_WHOLE + [b"3", 1 + 0j], ids=repr)
def test_whole_numbers_refused(bad: Any) -> None:
    with pytest.raises(InvalidDeclaration, match="^n must be a whole number$"):
        read.whole({"n": bad}, "n")


def test_whole_number_bounds_and_defaults() -> None:
    assert read.whole({"n": -5}, "n", -5, 5) == -5 and read.whole({"n": 5.0}, "n", -5, 5) == 5
    with pytest.raises(InvalidDeclaration, match=r"^n must be between -5 and 5 \(got 6\)$"):
        read.whole({"n": 6}, "n", -5, 5)
    with pytest.raises(InvalidDeclaration, match=r"^n must be at least 1 \(got 0\)$"):
        read.whole({"n": 0}, "n", low=1)
    with pytest.raises(InvalidDeclaration, match=r"^n must be at most 9 \(got 10\)$"):
        read.whole({"n": 10}, "n", high=9)
    assert read.whole({}, "n", 1, 10, default=1) == 1
    assert read.whole({"n": None}, "n", 1, 10, default=1) == 1
    assert read.whole({"n": 4}, "n", 1, 10, default=1) == 4
    with pytest.raises(InvalidDeclaration, match="^n must be a whole number$"):
        read.whole({"n": "4"}, "n", 1, 10, default=1)  # a default never excuses a malformed value
    with pytest.raises(InvalidDeclaration, match="^the declaration needs n$"):
        read.whole({}, "n", 1, 10)


@pytest.mark.parametrize("reader", [
    lambda d: read.whole(d, "n"),
    lambda d: read.text(d, "note", 10),
    lambda d: read.combatant(d, "combatant", {"combatants": {}}),
    lambda d: read.square(d, 5, 5),
])
@pytest.mark.parametrize("declaration", [None, ["n", 3], "n=3", 3])
def test_a_declaration_must_be_an_object(reader: Any, declaration: Any) -> None:
    with pytest.raises(InvalidDeclaration, match="^a declaration must be an object$"):
        reader(declaration)


def test_text() -> None:
    assert read.text({"note": "  by the door "}, "note", 12) == "by the door"
    assert read.text({}, "note", 12) == "" and read.text({"note": None}, "note", 12, "nothing") == "nothing"
    assert read.text({"note": "   "}, "note", 12, "nothing") == "nothing"
    assert read.text({"note": " " * 20 + "ok"}, "note", 2) == "ok"  # the limit counts what is kept
    with pytest.raises(InvalidDeclaration, match=r"^note is too long \(at most 2 characters\)$"):
        read.text({"note": "abc"}, "note", 2)
    for bad in (0, 3, False, ["a"], {"a": 1}):
        with pytest.raises(InvalidDeclaration, match="^note must be text$"):
            read.text({"note": bad}, "note", 12)


def test_combatant() -> None:
    state = {"combatants": {"c1": {}, "3": {}}}
    assert read.combatant({"target": "c1"}, "target", state) == "c1"
    assert read.combatant({"target": "3"}, "target", state) == "3"  # ids are text; "3" may be one
    with pytest.raises(InvalidDeclaration, match="^target must be a combatant id$"):
        read.combatant({"target": 3}, "target", state)
    with pytest.raises(InvalidDeclaration, match="^target: no combatant 'C1'$"):
        read.combatant({"target": "C1"}, "target", state)
    with pytest.raises(InvalidDeclaration, match=r"^the declaration needs target \(a combatant id\)$"):
        read.combatant({"combatant": "c1"}, "target", state)


def test_square() -> None:
    assert read.square({"x": 0, "y": 4.0}, 5, 5) == (0, 4)
    assert read.square({"x": 4, "y": 0, "other": "ignored"}, 5, 5) == (4, 0)
    for x, y in ((5, 0), (0, 5), (-1, 0), (0, -1)):
        with pytest.raises(InvalidDeclaration, match=rf"^square \({x}, {y}\) is off the 5×5 grid$"):
            read.square({"x": x, "y": y}, 5, 5)
    with pytest.raises(InvalidDeclaration, match="^y must be a whole number$"):
        read.square({"x": 1, "y": "2"}, 5, 5)
    with pytest.raises(InvalidDeclaration, match="^the declaration needs x$"):
        read.square({"y": 2}, 5, 5)
