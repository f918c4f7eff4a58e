"""Dice sources.

Every random number in a battle comes from a :class:`DiceSource`, so a test can script the
exact faces and a seed replays a whole battle. Each roll comes back as a :class:`Roll` record
(what was rolled, why, every face, the total) for the events, so the board can show the dice.

>>> dice = ScriptedDice([6, 1, 3])
>>> dice.roll(2, 6, "Jharek disengagement").total
7
>>> dice.randint(1, 3, "half-die").faces
(3,)
>>> SeededDice("demo").roll(1, 6, "x") == SeededDice("demo").roll(1, 6, "x")
True
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .errors import DiceExhausted, ImpossibleFace, InvalidDeclaration


@dataclass(frozen=True)
class Roll:
    """One recorded roll: ``notation`` says what was rolled, ``purpose`` why."""

    notation: str
    purpose: str
    faces: tuple[int, ...]
    modifier: int = 0

    @property
    def total(self) -> int:
        return sum(self.faces) + self.modifier

    def to_dict(self) -> dict[str, Any]:
        return {
            "dice": self.notation,
            "purpose": self.purpose,
            "faces": list(self.faces),
            "modifier": self.modifier,
            "total": self.total,
        }


def notation(count: int, sides: int, modifier: int = 0) -> str:
    """``notation(2, 6, 3)`` -> ``'2d6+3'``."""
    text = f"{count}d{sides}"
    if modifier:
        text += f"{modifier:+d}"
    return text


@runtime_checkable
class DiceSource(Protocol):
    """What a rule system may ask of its dice."""

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        """Roll ``count`` dice of ``sides`` faces (1..sides)."""

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        """One uniform integer in ``low..high`` inclusive (a half-die is ``randint(1, 3)``, d100 ``randint(0, 99)``)."""

    def integers(self, low: int, high: int, size: int, purpose: str) -> Sequence[int]:
        """Many uniform integers in ``low..high`` inclusive at once (for mass battles); not recorded one by one."""

    def derive(self, label: str) -> DiceSource:
        """An independent source for a sub-step (a seeded source derives a seed, a scripted one shares its faces)."""


def _seed_int(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")


def derive_seed(seed: str, label: str | int) -> str:
    """A fresh seed for one command of a battle: ``derive_seed(battle_seed, version)``."""
    return hashlib.sha256(f"{seed}/{label}".encode()).hexdigest()[:32]


@dataclass
class SeededDice:
    """Pseudo-random dice from a string seed: the same seed gives the same faces."""

    seed: str
    log: list[Roll] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._random = random.Random(_seed_int(self.seed))
        self._numpy: Any = None

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        _check_dice(count, sides)
        faces = tuple(self._random.randint(1, sides) for _ in range(count))
        return self._record(Roll(notation(count, sides, modifier), purpose, faces, modifier))

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        _check_range(low, high)
        face = self._random.randint(low, high)
        return self._record(Roll(f"{low}-{high}", purpose, (face,)))

    def integers(self, low: int, high: int, size: int, purpose: str) -> Sequence[int]:
        _check_range(low, high)
        if size < 0:
            raise InvalidDeclaration("cannot roll a negative number of dice")
        if self._numpy is None:
            import numpy as np

            self._numpy = np.random.default_rng(_seed_int(self.seed + "/numpy"))
        return self._numpy.integers(low, high + 1, size=size)

    def derive(self, label: str) -> SeededDice:
        return SeededDice(derive_seed(self.seed, label))

    def _record(self, roll: Roll) -> Roll:
        self.log.append(roll)
        return roll


@dataclass
class ScriptedDice:
    """Exact faces, used in order: for tests, for replay, and for a GM rolling physical dice.

    Raises :class:`DiceExhausted` when it runs out and :class:`ImpossibleFace` for a face the die cannot show.
    """

    faces: list[int]
    log: list[Roll] = field(default_factory=list)

    def __init__(self, faces: Iterable[int]) -> None:
        self.faces = [int(f) for f in faces]
        self.position = 0
        self.log = []

    @property
    def remaining(self) -> int:
        return len(self.faces) - self.position

    def _next(self, low: int, high: int, purpose: str) -> int:
        if self.position >= len(self.faces):
            raise DiceExhausted(f"the scripted dice ran out (needed a {low}-{high} for {purpose!r})")
        face = self.faces[self.position]
        if not low <= face <= high:
            raise ImpossibleFace(f"scripted face {face} is impossible for a {low}-{high} roll ({purpose!r})")
        self.position += 1
        return face

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        _check_dice(count, sides)
        faces = tuple(self._next(1, sides, purpose) for _ in range(count))
        roll = Roll(notation(count, sides, modifier), purpose, faces, modifier)
        self.log.append(roll)
        return roll

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        _check_range(low, high)
        roll = Roll(f"{low}-{high}", purpose, (self._next(low, high, purpose),))
        self.log.append(roll)
        return roll

    def integers(self, low: int, high: int, size: int, purpose: str) -> Sequence[int]:
        _check_range(low, high)
        return [self._next(low, high, purpose) for _ in range(size)]

    def derive(self, label: str) -> ScriptedDice:
        return self


def _check_dice(count: int, sides: int) -> None:
    if not isinstance(count, int) or count < 0 or count > 10_000:
        raise InvalidDeclaration(f"cannot roll {count!r} dice")
    if not isinstance(sides, int) or sides < 1:
        raise InvalidDeclaration(f"a die needs at least one side, not {sides!r}")


def _check_range(low: int, high: int) -> None:
    if high < low:
        raise InvalidDeclaration(f"empty range {low}..{high}")
