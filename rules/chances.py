"""Who's winning: each side's chance to win a battle from any state, and the chance of a draw.

One function for every system, :func:`chances`. A system's package may bring a module
``chances.py`` of its own (found as :mod:`rules.odds` finds ``odds.py``) with any of:

- ``exact(system, state) -> (sides, draw, none) | None``: the chances worked out exactly (Phantom's
  Bane: a chain over both duellists' numbers and the turn); None where the state is too big for it;
- ``prepare(system, state) -> state``: the battle as a playout starts from it, after every
  combatant has been handed to the computer (a temperament, a choice nobody may see yet taken out);
- ``nudge(system, state) -> declaration | None``: what the GM declares to keep a battle going when
  the computer plays every side and has nothing to declare (a turn to settle, a phase to roll);
- ``decided(system, state) -> (side | None, draw) | None``: a battle decided though the GM has not
  ended it yet (AD&D's last side standing);
- ``playout(system, state, dice) -> result``: its own playout instead of the loop below (Olympia's
  "fight to the end");
- ``apply(system, state, declaration, dice) -> (state, events)``: the system's ``apply`` made on the
  playout's own state, without the copy ``apply`` makes for its callers (a playout's state is its own).

Otherwise the chances are estimated by playouts: the battle played to its end many times from the
state, every combatant played by the computer (the engine's one loop, :func:`rules.engine.play`), the
GM's declarations named by ``nudge``. The model assumes every side plays like the computer's steady
temperament. Playout ``i`` draws its dice from the seed given and ``i`` alone, so the same seed (the
battle's seed and version) gives the same numbers, and stopping early keeps a prefix of them.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from .contract import RuleSystem
from .core import State, Viewer, clone
from .dice import MassFaces, Roll, notation
from .errors import IllegalDeclaration, InvalidDeclaration, NotPermitted

#: at most this many playouts (a ±3-point estimate at even chances: 1.96 · √(¼ / n) ≤ 0.03 needs 1,068)
PLAYOUTS = 1100
#: at least this many, then the playouts stop as soon as every chance is known within :data:`PRECISION`
MIN_PLAYOUTS = 100
#: the playouts between two looks at the precision
BATCH = 25
#: the estimate's precision: the 95 % interval of each chance within this of it
PRECISION = 0.03
#: the GM's declarations or computer moves one playout may take before it counts as undecided
PLAYOUT_STEPS = 600
#: the help section every system's pages show (in the board's own words)
HELP = {
    "title": "Who's winning",
    "text": "The bar gives each side's chance to win from where the battle stands now, and the chance of a "
            "draw or of nobody winning. The board plays the rest of the battle out many times over (a "
            "Phantom's Bane duel it works out exactly, turn by turn), and in every one of those games the "
            "computer chooses for every combatant, on both sides, the way its steady temperament does. It "
            "cannot know what you will really do: bold, clever or lucky play beats the bar. The GM always "
            "sees it; the TV, the spectators and the phones only when the GM switches it on. The board knows "
            "everything, hidden numbers included, so the chances can give away strength the GM keeps hidden.",
}
#: the result of one playout: the winning side (None: nobody), and whether it was a draw
Result = tuple[str | None, bool]
GM = Viewer.gm()


@dataclass(frozen=True)
class Chances:
    """Each side's chance to win (``sides``), the chance of a draw (None where the system has none),
    of a battle that ends with no winner otherwise (an escape, the GM's end: ``none``), how it was
    worked out (``"exact"`` or ``"playouts"``) and from how many playouts (``n``; 0 if exact)."""

    sides: Mapping[str, float]
    draw: float | None = None
    none: float = 0.0
    method: str = "playouts"
    n: int = 0
    undecided: int = 0
    names: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``{"sides": [{"side", "name", "p"}], "draw", "none", "method", "n"}``."""
        return {
            "sides": [{"side": s, "name": self.names.get(s, f"Side {s}"), "p": round(p, 4)}
                      for s, p in self.sides.items()],
            "draw": None if self.draw is None else round(self.draw, 4),
            "none": round(self.none, 4),
            "method": self.method,
            "n": self.n,
        }


class PlayoutDice:
    """A fast seeded dice source for playouts: Python's generator for single rolls, NumPy's for mass
    rolls (nothing of a playout is recorded, so nothing needs the committed derivation)."""

    def __init__(self, seed: str) -> None:
        number = int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")
        self._random = random.Random(number)
        self._numpy: np.random.Generator | None = None
        self._number = number

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        rand = self._random.randint
        return Roll(notation(count, sides, modifier), purpose, tuple(rand(1, sides) for _ in range(count)), modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        return Roll(f"{low}-{high}", purpose, (self._random.randint(low, high),))

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        if self._numpy is None:
            self._numpy = np.random.default_rng(self._number)
        return self._numpy.integers(low, high + 1, size=size)

    def derive(self, label: str) -> PlayoutDice:
        return self


def system_chances_module(system: RuleSystem) -> ModuleType | None:
    """The system's own ``chances.py`` (see the module's docstring), or None."""
    from .registry import system_part

    return system_part(system.id, "chances")


def side_names(state: Mapping[str, Any], system: RuleSystem) -> dict[str, str]:
    """Each side's name: its combatants' names (two at most, then "and N more"), in the lineup's order."""
    members: dict[str, list[str]] = {}
    for c in state.get("combatants", {}).values():
        if c.get("hidden"):
            continue  # a hidden combatant is never named (issue 36)
        members.setdefault(str(c.get("side")), []).append(str(c.get("name", "")))
    names = {}
    for side in sides_of(state, system):
        listed = members.get(side, [])
        if not listed:
            names[side] = f"Side {side}"
        elif len(listed) <= 2:
            names[side] = " and ".join(listed)
        else:
            names[side] = f"{listed[0]}, {listed[1]} and {len(listed) - 2} more"
    return names


def sides_of(state: Mapping[str, Any], system: RuleSystem) -> list[str]:
    """The sides that have combatants in this battle, in the system's order."""
    present = {str(c.get("side")) for c in state.get("combatants", {}).values()}
    return [s for s in system.sides if s in present] or sorted(present)


def final_result(system: RuleSystem, state: Mapping[str, Any], module: ModuleType | None = None) -> Result | None:
    """How an ended (or decided) battle came out: the winning side or None, and whether a draw; None
    while it is still being fought."""
    if module is not None and hasattr(module, "decided"):
        found: Result | None = module.decided(system, state)
        if found is not None:
            return found
    if state.get("status") != "ended":
        return None
    outcome = system.outcome(dict(state)) or {}
    winner = outcome.get("winner_side") or outcome.get("winner")
    sides = sides_of(state, system)
    if winner not in sides:
        combatants = state.get("combatants", {})
        winner = combatants[winner].get("side") if isinstance(winner, str) and winner in combatants else None
    return (str(winner) if winner is not None else None,
            outcome.get("result") in ("draw", "tie") or bool(outcome.get("draw")) or bool(outcome.get("tie")))


def prepare(system: RuleSystem, state: State, module: ModuleType | None) -> State:
    """The battle as every playout starts from it: every combatant played by the computer, with no
    seat, real dice switched off; then the system's own ``prepare``."""
    start: State = clone(state)
    for c in start.get("combatants", {}).values():
        c["controller"] = "computer"
        c["seat"] = None
    start.pop("physical", None)
    options = start.get("options")
    if isinstance(options, dict) and "who_rolls" in options:
        options["who_rolls"] = "board"
    if module is not None and hasattr(module, "prepare"):
        prepared: State = module.prepare(system, start)
        return prepared
    return start


def playout(system: RuleSystem, start: State, dice: PlayoutDice, module: ModuleType | None) -> Result | None:
    """One battle played to its end from ``start`` (already prepared); None if still undecided after
    :data:`PLAYOUT_STEPS` declarations."""
    if module is not None and hasattr(module, "playout"):
        own: Result | None = module.playout(system, start, dice)
        return own
    state = clone(start)
    apply = getattr(module, "apply", None)
    nudge: Callable[[RuleSystem, State], Mapping[str, Any] | None] | None = getattr(module, "nudge", None)
    declaration: Mapping[str, Any] | None = None
    events: list[Any] = []
    for _ in range(PLAYOUT_STEPS):
        done = final_result(system, state, module)
        if done is not None:
            return done
        choice: Mapping[str, Any] | None = system.computer_choice(state, declaration, events)
        if choice is None:
            choice = nudge(system, state) if nudge is not None else None
        if choice is None:
            return None
        try:
            state, events = apply(system, state, choice, dice) if apply else system.apply(state, choice, GM, dice)
        except (IllegalDeclaration, InvalidDeclaration, NotPermitted):
            return None
        declaration = choice
    return final_result(system, state, module)


def chances(system: RuleSystem, state: State, *, seed: str, playouts: int = PLAYOUTS,
            precision: float = PRECISION, stop: Callable[[], bool] | None = None,
            exact_stop: Callable[[], bool] | None = None) -> Chances:
    """Each side's chance to win ``state`` (and of a draw, where the system has draws).

    Exact where the system's ``chances.py`` can work it out; otherwise at most ``playouts`` playouts,
    playout ``i`` seeded from ``seed`` and ``i`` (the battle's seed and version give the same numbers
    every time), stopping once every chance is known within ``precision`` (95 %; a stop that reads
    only the playouts' results, so it is the same every time too). ``stop``: a time budget, asked
    between playouts; once it answers True, the playouts so far are counted (at least one is played).
    ``exact_stop``: when the exact way gives up (the playouts take over; default ``stop``), so that a
    budget leaves the playouts time of their own."""
    module = system_chances_module(system)
    names = side_names(state, system)
    sides = sides_of(state, system)
    done = final_result(system, state, module)
    if done is not None:
        winner, draw = done
        return Chances({s: 1.0 if s == winner else 0.0 for s in sides}, draw=1.0 if draw else 0.0,
                       none=0.0 if winner or draw else 1.0, method="exact", names=names)
    if module is not None and hasattr(module, "exact"):
        found: tuple[Mapping[str, float], float, float] | None = module.exact(
            system, state, exact_stop if exact_stop is not None else stop)
        if found is not None:
            return Chances(found[0], found[1], found[2], "exact", 0, 0, names)
    start = prepare(system, state, module)
    wins = dict.fromkeys(sides, 0)
    draws = nones = undecided = played = 0
    for i in range(playouts):
        if played and stop is not None and stop():
            break
        if played >= MIN_PLAYOUTS and played % BATCH == 0 and precision > 0 and all(
                _within(count, played, precision) for count in (*wins.values(), draws, nones + undecided)):
            break
        result = playout(system, start, PlayoutDice(f"{seed}/{i}"), module)
        played += 1
        if result is None:
            undecided += 1
            continue
        winner, draw = result
        if draw:
            draws += 1
        elif winner in wins:
            wins[winner] += 1
        else:
            nones += 1
    total = max(played, 1)
    return Chances({s: wins[s] / total for s in sides}, draw=draws / total, none=(nones + undecided) / total,
                   method="playouts", n=played, undecided=undecided, names=names)


def has_exact(system: RuleSystem) -> bool:
    """Whether the system's ``chances.py`` can work chances out exactly (where a battle is small enough)."""
    module = system_chances_module(system)
    return module is not None and hasattr(module, "exact")


def exact_only(system: RuleSystem, state: State, stop: Callable[[], bool] | None = None) -> Chances | None:
    """The chances of ``state`` worked out exactly, where the system's ``chances.py`` has an exact
    way; None where it has none, or once ``stop`` answers True first (what the way worked out so far
    is its own to keep: a Phantom's Bane duel's chain goes on from there next time)."""
    module = system_chances_module(system)
    if module is None or not hasattr(module, "exact") or final_result(system, state, module) is not None:
        return None
    found: tuple[Mapping[str, float], float, float] | None = module.exact(system, state, stop)
    if found is None:
        return None
    return Chances(found[0], found[1], found[2], "exact", 0, 0, side_names(state, system))


def wilson(count: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson interval of a chance seen ``count`` times in ``n`` playouts.

    >>> [round(x, 3) for x in wilson(0, 124)]
    [0.0, 0.03]
    """
    if n <= 0:
        return 0.0, 1.0
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _within(count: int, n: int, precision: float) -> bool:
    low, high = wilson(count, n)
    p = count / n
    return p - low <= precision and high - p <= precision


def margin(n: int, p: float = 0.5) -> float:
    """The half-width of a 95 % interval of a chance estimated from ``n`` playouts (at ``p``).

    >>> round(margin(PLAYOUTS), 4)
    0.0295
    """
    return 1.96 * math.sqrt(p * (1 - p) / max(n, 1))
