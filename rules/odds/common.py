"""Shared pieces of the odds modules: exact enumeration of a system's own resolution, and the answer's shape.

The odds never re-implement a rule: they run the system's own ``apply`` with dice that walk every
combination of faces (:func:`enumerate_dice`), each path weighted by its exact probability, and
count what came out. Where the outcomes are not finite (a whole mass battle), they simulate with a
seeded dice source and give a 95 % interval instead (:func:`estimate`).

>>> from rules.dice import DiceSource
>>> def two_dice(dice: DiceSource) -> int:
...     return dice.roll(1, 6, "a").total + dice.roll(1, 6, "b").total
>>> paths = enumerate_dice(two_dice)
>>> sum(w for w, total in paths if total == 7)
Fraction(1, 6)
>>> probability("seven", "Seven", Fraction(1, 6))["fraction"]
'1/6'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any, TypeVar

from ..core import State, Viewer
from ..dice import Roll, notation
from ..errors import DiceError, IllegalDeclaration, InvalidDeclaration, NotPermitted

T = TypeVar("T")

#: the share of its full work a simulation does for an answer (1: all of it). A board on a small
#: machine may lower it (``BATTLEBOARD_ODDS_WORK``): fewer simulated battles, wider intervals, and
#: the answer says how many were fought. Exact enumerations never change.
_simulation_share = 1.0


def simulation_share() -> float:
    """The share of its full work a simulation does (see :func:`set_simulation_share`)."""
    return _simulation_share


def set_simulation_share(share: float) -> None:
    """Set the share of their full work the simulations do, above 0 and at most 1.

    >>> set_simulation_share(0.25); simulation_share()
    0.25
    >>> set_simulation_share(0)
    Traceback (most recent call last):
    ...
    ValueError: the share of a simulation's work must be above 0 and at most 1, not 0
    >>> set_simulation_share(1.0)
    """
    global _simulation_share
    if not (isinstance(share, (int, float)) and 0 < share <= 1):
        raise ValueError(f"the share of a simulation's work must be above 0 and at most 1, not {share!r}")
    _simulation_share = float(share)

#: the most dice paths one odds question may walk (a guard against a question that would take too long)
MAX_PATHS = 200_000


#: ``regroup(low, high, purpose)``: the classes of one single-number roll, or None for every face
Regroup = Callable[[int, int, str], "list[tuple[tuple[int, ...], Fraction]] | None"]


class NotEnumerable(DiceError):
    """The resolution asked for dice that cannot be enumerated (a mass roll)."""


#: the most totals one roll may have for the odds to walk them (30d12 has 331, 20d20 381)
MAX_SPAN = 400


def asking_combatant(state: State, viewer: Viewer, declaration: Any, *, doing: str, over: str, key: str = "combatant") -> str:
    """The combatant a question is about, once the asker may ask about it: it exists, a player asks
    only about the combatants of their own seat, and the battle is running (``over`` says otherwise)."""
    cid = declaration.get(key)
    if not isinstance(cid, str) or cid not in state.get("combatants", {}):
        raise InvalidDeclaration(f"the odds need the combatant who would {doing}")
    if viewer.role == "player" and not viewer.controls(state, cid):
        raise NotPermitted("you can see the odds only for the combatants of your own seat")
    if state.get("status") != "active":
        raise IllegalDeclaration(over)
    return cid


def check_span(count: int, sides: int) -> None:
    """Refuse a roll with too many possible totals to enumerate in time (a clear error, not a stalled server)."""
    if count * (sides - 1) + 1 > MAX_SPAN:
        raise NotEnumerable(f"{count}d{sides} has too many totals to work out the odds exactly in time")


@lru_cache(maxsize=512)
def _sum_choices(count: int, sides: int) -> list[tuple[tuple[int, ...], Fraction]]:
    """Each possible total of ``count`` dice of ``sides`` with its probability and one set of faces showing it."""
    check_span(count, sides)
    ways: dict[int, int] = {0: 1}
    for _ in range(count):
        nxt: dict[int, int] = {}
        for total, n in ways.items():
            for face in range(1, sides + 1):
                nxt[total + face] = nxt.get(total + face, 0) + n
        ways = nxt
    denominator = sides**count
    choices = []
    for total, n in sorted(ways.items()):
        faces = []
        rest = total
        for i in range(count):
            left = count - i - 1
            face = min(sides, rest - left)
            faces.append(face)
            rest -= face
        choices.append((tuple(faces), Fraction(n, denominator)))
    return choices


class PathDice:
    """A dice source that follows the faces of one path and, past its end, takes each request's first
    choice and notes the others (for :func:`enumerate_dice`).

    ``group_sums``: a roll of several dice branches on its total (with the right weight) instead of on
    every combination of faces; use it only where the system reads nothing but the roll's total.
    """

    def __init__(self, faces: Sequence[tuple[int, ...]], group_sums: bool = False, regroup: Regroup | None = None) -> None:
        self.regroup = regroup
        self.faces = tuple(faces)
        self.position = 0
        self.group_sums = group_sums
        self.log: list[Roll] = []
        #: the requests past the given path: (position, every choice with its weight)
        self.extensions: list[tuple[int, list[tuple[tuple[int, ...], Fraction]]]] = []

    def _take(self, choices: Callable[[], list[tuple[tuple[int, ...], Fraction]]]) -> tuple[int, ...]:
        if self.position >= len(self.faces):
            # past the path: take the first choice and note the others for the enumerator
            options = choices()
            self.extensions.append((self.position, options))
            self.faces = (*self.faces, options[0][0])
        faces = self.faces[self.position]
        self.position += 1
        return faces

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        if count == 0:
            return Roll(notation(count, sides, modifier), purpose, (), modifier)

        def choices() -> list[tuple[tuple[int, ...], Fraction]]:
            if self.group_sums and count > 1:
                return _sum_choices(count, sides)
            if sides**count > 1296:
                return _sum_choices(count, sides)
            combos: list[tuple[int, ...]] = [()]
            for _ in range(count):
                combos = [c + (f,) for c in combos for f in range(1, sides + 1)]
            weight = Fraction(1, sides**count)
            return [(c, weight) for c in combos]

        faces = self._take(choices)
        return Roll(notation(count, sides, modifier), purpose, faces, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        weight = Fraction(1, high - low + 1)

        def choices() -> list[tuple[tuple[int, ...], Fraction]]:
            grouped = self.regroup(low, high, purpose) if self.regroup else None
            return grouped if grouped is not None else [((f,), weight) for f in range(low, high + 1)]

        faces = self._take(choices)
        return Roll(f"{low}-{high}", purpose, faces)

    def integers(self, low: int, high: int, size: int, purpose: str) -> Sequence[int]:
        raise NotEnumerable("a mass roll cannot be enumerated")

    def derive(self, label: str) -> PathDice:
        return self


def enumerate_dice(
    run: Callable[[PathDice], T],
    *,
    prefix: Sequence[tuple[int, ...]] = (),
    group_sums: bool = False,
    regroup: Regroup | None = None,
    limit: int = MAX_PATHS,
) -> list[tuple[Fraction, T]]:
    """Every way the dice of ``run`` can fall, as ``(probability, result)``: the probabilities sum to 1.

    ``run`` is called once per leaf of the tree of dice requests (it must be pure: the same faces,
    the same requests). ``prefix``: faces already fixed for the first requests (weight 1).
    ``regroup(low, high, purpose)``: for a single number the caller knows is read only coarsely,
    its classes as ``[((face,), probability), ...]`` (or None to walk every face).
    """
    results: list[tuple[Fraction, T]] = []
    stack: list[tuple[tuple[tuple[int, ...], ...], Fraction]] = [(tuple(prefix), Fraction(1))]
    calls = 0
    while stack:
        faces, weight = stack.pop()
        calls += 1
        if calls > limit:
            raise NotEnumerable("too many dice combinations to enumerate")
        dice = PathDice(faces, group_sums, regroup)
        result = run(dice)
        # the run took the first choice of every request past its path: one leaf; the other
        # choices of those requests become paths of their own (one run per leaf, none wasted)
        w = weight
        for position, options in dice.extensions:
            for choice, cw in options[1:]:
                stack.append((dice.faces[:position] + (choice,), w * cw))
            w *= options[0][1]
        results.append((w, result))
    return results


# --- the answer's shape ------------------------------------------------------------------------------


def fraction_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def probability(key: str, label: str, p: Fraction) -> dict[str, Any]:
    """An exact outcome: ``{"key", "label", "p", "exact": True, "fraction"}``."""
    return {"key": key, "label": label, "p": float(p), "exact": True, "fraction": fraction_text(p)}


def expectation(key: str, label: str, value: Fraction) -> dict[str, Any]:
    """An exact expected value: ``{"key", "label", "value", "exact": True, "fraction"}``."""
    return {"key": key, "label": label, "value": float(value), "exact": True, "fraction": fraction_text(value)}


def distribution(key: str, label: str, weights: dict[int, Fraction]) -> dict[str, Any]:
    """An exact distribution of a whole number: ``{"key", "label", "exact", "values": [{"value", "p", "fraction"}]}``."""
    return {
        "key": key,
        "label": label,
        "exact": True,
        "values": [
            {"value": v, "p": float(w), "fraction": fraction_text(w)} for v, w in sorted(weights.items()) if w
        ],
    }


def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The 95 % Wilson interval of a proportion.

    >>> low, high = wilson(500, 1000)
    >>> round(low, 3), round(high, 3)
    (0.469, 0.531)
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, round(centre - spread, 9)), min(1.0, round(centre + spread, 9))


def estimate(key: str, label: str, successes: int, n: int) -> dict[str, Any]:
    """A simulated probability: ``{"key", "label", "p", "exact": False, "interval": [low, high], "n"}``."""
    low, high = wilson(successes, n)
    return {"key": key, "label": label, "p": successes / n if n else 0.0, "exact": False, "interval": [low, high], "n": n}


def mean_estimate(key: str, label: str, values: Iterable[float]) -> dict[str, Any]:
    """A simulated expected value with its 95 % interval (normal approximation)."""
    data = list(values)
    n = len(data)
    mean = sum(data) / n if n else 0.0
    var = sum((x - mean) ** 2 for x in data) / (n - 1) if n > 1 else 0.0
    half = 1.959964 * math.sqrt(var / n) if n else 0.0
    return {"key": key, "label": label, "value": mean, "exact": False, "interval": [mean - half, mean + half], "n": n}


def total(paths: Iterable[tuple[Fraction, Any]], test: Callable[[Any], bool]) -> Fraction:
    return sum((w for w, r in paths if test(r)), Fraction(0))


def tally(paths: Iterable[tuple[Fraction, Any]], value: Callable[[Any], int]) -> dict[int, Fraction]:
    counts: dict[int, Fraction] = {}
    for w, r in paths:
        v = value(r)
        counts[v] = counts.get(v, Fraction(0)) + w
    return counts


def mean(weights: dict[int, Fraction]) -> Fraction:
    return sum((v * w for v, w in weights.items()), Fraction(0))


# --- rolls read only through their sum ----------------------------------------------------------------


class _Planned:
    """Serves ``roll`` requests from a plan of faces (or records them, showing the lowest faces, when there
    is no plan), and single numbers from ``pick(low, high, purpose)``."""

    def __init__(self, plan: list[tuple[int, ...]] | None, pick: Callable[[int, int, str], int]) -> None:
        self.plan = plan
        self.pick = pick
        self.requests: list[tuple[int, int]] = []
        self.log: list[Roll] = []

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        if self.plan is None:
            self.requests.append((count, sides))
            if sum(c * (s - 1) for c, s in self.requests) + 1 > MAX_SPAN:
                raise NotEnumerable("these damage dice have too many totals to work out the odds exactly in time")
            faces: tuple[int, ...] = (1,) * count
        else:
            faces = self.plan[len(self.requests)]
            self.requests.append((count, sides))
            if len(faces) != count:
                raise NotEnumerable("the rolls changed between two runs of the same question")
        return Roll(notation(count, sides, modifier), purpose, faces, modifier)

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        return Roll(f"{low}-{high}", purpose, (self.pick(low, high, purpose),))

    def integers(self, low: int, high: int, size: int, purpose: str) -> Sequence[int]:
        raise NotEnumerable("a mass roll cannot be enumerated")

    def derive(self, label: str) -> _Planned:
        return self


def by_roll_total(run: Callable[[Any], T], pick: Callable[[int, int, str], int]) -> list[tuple[Fraction, T]]:
    """Every outcome of ``run`` whose dice rolls (``roll`` requests) are read only through the sum of all
    their faces, and come in an order that does not depend on their faces: one run per possible sum,
    with its exact probability. Single numbers (``randint``) show ``pick``'s face.

    >>> def damage(dice):
    ...     return sum(dice.roll(2, 10, "weapon").faces) + dice.roll(1, 6, "extra").total
    >>> paths = by_roll_total(damage, lambda low, high, purpose: low)
    >>> len(paths), sum(w for w, _ in paths), sum(w for w, total in paths if total == 26)
    (24, Fraction(1, 1), Fraction(1, 600))
    """
    probe = _Planned(None, pick)
    run(probe)
    requests = probe.requests
    ways: dict[int, int] = {0: 1}
    denominator = 1
    for count, sides in requests:
        for _ in range(count):
            nxt: dict[int, int] = {}
            for sum_so_far, n in ways.items():
                for face in range(1, sides + 1):
                    nxt[sum_so_far + face] = nxt.get(sum_so_far + face, 0) + n
            ways = nxt
            denominator *= sides
    paths: list[tuple[Fraction, T]] = []
    dice_count = sum(count for count, _ in requests)
    for sum_of_faces, n in sorted(ways.items()):
        extra = sum_of_faces - dice_count
        plan = []
        for count, sides in requests:
            faces = []
            for _ in range(count):
                add = min(sides - 1, extra)
                faces.append(1 + add)
                extra -= add
            plan.append(tuple(faces))
        paths.append((Fraction(n, denominator), run(_Planned(plan, pick))))
    return paths


def collapse(paths: Iterable[tuple[Fraction, T]]) -> list[tuple[Fraction, T]]:
    """The same outcomes merged (their probabilities added), so counting them afterwards is quick.

    >>> collapse([(Fraction(1, 4), "a"), (Fraction(1, 2), "b"), (Fraction(1, 4), "a")])
    [(Fraction(1, 2), 'a'), (Fraction(1, 2), 'b')]
    """
    merged: dict[Any, list[Any]] = {}
    for w, result in paths:
        entry = merged.get(result)
        if entry is None:
            merged[result] = [w.numerator, w.denominator]
        elif entry[1] == w.denominator:  # in whole numbers over a common denominator, reduced once at the end
            entry[0] += w.numerator
        else:
            common = math.lcm(entry[1], w.denominator)
            entry[0] = entry[0] * (common // entry[1]) + w.numerator * (common // w.denominator)
            entry[1] = common
    return [(Fraction(n, d), result) for result, (n, d) in merged.items()]
