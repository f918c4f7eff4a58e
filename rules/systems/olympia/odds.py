"""Olympia odds: each side's chance to win and the expected casualties, by simulating the battle.

A mass battle has far too many dice to enumerate, so the battle is fought to its end many times
(1,000 by default) with the system's own ``apply`` ("fight to the end", repeated until it ends),
from the current state, or from the deployment as it stands if the battle has not begun. The dice
are seeded from the state itself, so the same question gets the same answer (and replays); the
answer states the number of battles and a 95 % interval for every figure.

Everything a battle's resolution reads is public in Olympia (rows, men, ratings, break points,
structures, options); the seats and controllers, the only things a viewer may not see, are
replaced before simulating.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from rules import read
from rules.contract import RuleSystem
from rules.core import State, Viewer, clone
from rules.dice import MassFaces, Roll, notation
from rules.errors import IllegalDeclaration
from rules.odds.common import estimate, mean_estimate, simulation_share

from .army import side_name
from .system import Olympia

GM = Viewer.gm()
DEFAULT_BATTLES = 1000
MAX_BATTLES = 5000
#: "fight to the end" commands per simulated battle before it counts as unfinished
MAX_STEPS = 20
STEP = {"type": "step", "by": "battle"}
#: men fought in one answer, all simulated battles together (1,000 battles of 1,000 men a side): a larger
#: army gets fewer battles (at least one), so one question never holds the server for long
WORK_BUDGET = 2_000_000


class SimulationDice:
    """One seeded stream for a whole simulation: Python's generator for single rolls, NumPy's for mass rolls."""

    def __init__(self, seed: str) -> None:
        number = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
        self._random = random.Random(number)
        self._numpy = np.random.default_rng(number)

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        faces = tuple(self._random.randint(1, sides) for _ in range(count))
        return Roll(notation(count, sides, modifier), purpose, faces, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        return Roll(f"{low}-{high}", purpose, (self._random.randint(low, high),))

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        return self._numpy.integers(low, high + 1, size=size)

    def derive(self, label: str) -> SimulationDice:
        return self


def public_state(state: State) -> State:
    """The battle as any viewer may know it: no seats, everyone played by the GM."""
    new: State = clone(state)
    for c in new["combatants"].values():
        c["seat"] = None
        c["controller"] = "gm"
    return new


def _men(state: Mapping[str, Any], side: str) -> int:
    return sum(sum(c["troops"].values()) for c in state["combatants"].values() if c["side"] == side)


def _nobles_fallen(state: Mapping[str, Any], side: str) -> int:
    return sum(1 for c in state["combatants"].values() if c["side"] == side and c["state"] != "fighting")


def simulate(system: Olympia, state: State, battles: int, seed: str) -> dict[str, Any]:
    """Fight ``battles`` battles from ``state``; the raw tallies."""
    dice = SimulationDice(seed)
    start = state
    if start["status"] == "setup":
        start, _ = system.apply(start, {"type": "begin"}, GM, dice)
    sides = sorted(start["sides"])
    men_before = {s: _men(start, s) for s in sides}
    fallen_before = {s: _nobles_fallen(start, s) for s in sides}
    wins = {s: 0 for s in sides}
    ties = unfinished = 0
    casualties: dict[str, list[int]] = {s: [] for s in sides}
    nobles: dict[str, list[int]] = {s: [] for s in sides}
    rounds: list[int] = []
    for _ in range(battles):
        # what ``apply`` does for "fight to the end", on one copy per battle (``clone`` is quicker than
        # the deep copy ``apply`` makes, and the battle's steps need no copy of their own)
        current = clone(start)
        for _step in range(MAX_STEPS):
            system.step_battle(current, STEP, GM, dice)
            if current["status"] != "active":
                break
        outcome = current.get("outcome") or {}
        if current["status"] == "active":
            unfinished += 1
        elif outcome.get("winner") in wins:
            wins[outcome["winner"]] += 1
        else:
            ties += 1
        for s in sides:
            casualties[s].append(men_before[s] - _men(current, s))
            nobles[s].append(_nobles_fallen(current, s) - fallen_before[s])
        rounds.append(current["round"] - start["round"])
    return {
        "sides": sides,
        "wins": wins,
        "ties": ties,
        "unfinished": unfinished,
        "casualties": casualties,
        "nobles": nobles,
        "rounds": rounds,
    }


def odds(system: RuleSystem, state: State, viewer: Viewer, declaration: Mapping[str, Any]) -> dict[str, Any]:
    if state.get("status") == "ended":
        raise IllegalDeclaration("the battle is over")
    battles = read.whole(declaration, "battles", 10, MAX_BATTLES, default=DEFAULT_BATTLES)
    known = public_state(state)
    men = sum(sum(c["troops"].values()) + 1 for c in known["combatants"].values())
    requested = battles
    battles = max(1, int(min(battles, WORK_BUDGET // max(men, 1)) * simulation_share()))
    text = json.dumps(known, sort_keys=True, separators=(",", ":"))
    seed = hashlib.sha256(f"olympia-odds/{battles}/{text}".encode()).hexdigest()
    assert isinstance(system, Olympia)  # the registry asks this module for Olympia's odds only
    tallies = simulate(system, known, battles, seed)
    names = {s: side_name(known, s) for s in tallies["sides"]}
    outcomes = [estimate(f"win_{s}", f"{names[s]} wins", tallies["wins"][s], battles) for s in tallies["sides"]]
    outcomes.append(estimate("tie", "A tie (both break in the same phase, or neither can harm the other)", tallies["ties"], battles))
    outcomes.append(estimate("unfinished", f"Still undecided after {MAX_STEPS} times “fight to the end”", tallies["unfinished"], battles))
    expected = []
    for s in tallies["sides"]:
        expected.append(mean_estimate(f"casualties_{s}", f"Men {names[s]} loses (average)", tallies["casualties"][s]))
        expected.append(mean_estimate(f"nobles_fallen_{s}", f"Nobles of {names[s]} who fall (average)", tallies["nobles"][s]))
    expected.append(mean_estimate("rounds", "Rounds until it is decided (average)", tallies["rounds"]))
    return {
        "system": system.id,
        "method": "simulation",
        "battles": battles,
        "requested": requested,
        **({"note": f"{men:,} men on the field: {battles:,} simulated battles instead of {requested:,}, so the "
                    "intervals are wider."} if battles < requested else {}),
        "seed_from": "the battle's state (the same question gets the same answer)",
        "outcomes": outcomes,
        "expected": expected,
    }
