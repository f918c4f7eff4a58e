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

import functools
import hashlib
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from .errors import DiceExhausted, ImpossibleFace, InvalidDeclaration

if TYPE_CHECKING:  # numpy is imported where mass dice are rolled, not with the rules
    import numpy as np
    from numpy.typing import NDArray

#: what :meth:`DiceSource.integers` gives: a list, or numpy's array of 64-bit integers
MassFaces: TypeAlias = "Sequence[int] | NDArray[np.int64]"


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

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        """Many uniform integers in ``low..high`` inclusive at once (for mass battles); not recorded one by one."""

    def derive(self, label: str) -> DiceSource:
        """An independent source for a sub-step (a seeded source derives a seed, a scripted one shares its faces)."""


def _seed_int(seed: str) -> int:
    return int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")


def derive_seed(seed: str, label: str | int) -> str:
    """A fresh seed for one command of a battle: ``derive_seed(battle_seed, version)``."""
    return hashlib.sha256(f"{seed}/{label}".encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=1024)
def commitment(seed: str) -> str:
    """What the board publishes when a battle starts: SHA-256 of the seed's UTF-8 text, in lowercase hex
    (kept for the battles in play: every viewer's update of every command shows it)."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def mix_entropy(mix: str, seat: str, client_seed: str) -> str:
    """The mix after one more client seed: ``SHA-256(mix + "|" + seat + "|" + client_seed)`` in hex
    (the mix starts as the empty string, before any client seed)."""
    return hashlib.sha256(f"{mix}|{seat}|{client_seed}".encode()).hexdigest()


def command_seed(seed: str, mix: str, version: int) -> str:
    """The derived seed of the command that makes ``version``: ``derive_seed(seed, version)`` while no
    client seed has come, else ``derive_seed(seed, mix + "/" + version)``.

    >>> command_seed("s", "", 2) == derive_seed("s", 2)
    True
    """
    return derive_seed(seed, version if not mix else f"{mix}/{version}")


#: ranges of up to this many numbers take 32-bit words, larger ones (up to 2**64) 64-bit words
_WORD = 2**32


def word_bits(low: int, high: int) -> int:
    """How many bits each mass die of ``low..high`` takes: 32, or 64 for ranges of over 2**32 numbers."""
    return 32 if high - low + 1 <= _WORD else 64


def mass_values(words: Any, low: int, high: int) -> Any:
    """Map uniform words of :func:`word_bits` bits onto ``low..high``: ``low + (word * n >> bits)``
    with ``n = high - low + 1`` (the multiply-shift method; each value is off the exact uniform
    chance by at most n / 2**bits)."""
    import numpy as np

    n, bits = high - low + 1, word_bits(low, high)
    if bits == 32:
        return (np.asarray(words, dtype=np.uint64) * np.uint64(n) >> np.uint64(32)).astype(np.int64) + low
    if n & (n - 1) == 0:  # a power of two: the product's top bits are the word's top bits
        shifted = np.asarray(words, dtype=np.uint64) >> np.uint64(64 - (n.bit_length() - 1))
        return (shifted.astype(object) + low).astype(np.int64) if low or n > 2**63 else shifted.astype(np.int64)
    return np.array([low + (int(w) * n >> 64) for w in words], dtype=np.int64)


def values_digest(values: Any) -> str:
    """SHA-256 (hex) of mass dice values as little-endian signed 64-bit integers, in order."""
    import numpy as np

    return hashlib.sha256(np.asarray(values, dtype="<i8").tobytes()).hexdigest()


@dataclass
class SeededDice:
    """Pseudo-random dice from a string seed: the same seed gives the same faces.

    Every number comes from one ``random.Random`` stream seeded with the first 8 bytes of
    SHA-256(seed) (big-endian): :meth:`roll` and :meth:`randint` take ``randint(low, high)`` per die;
    :meth:`integers` takes ``getrandbits(bits * size)`` (word ``i`` is bits ``bits*i`` on, ``bits``
    from :func:`word_bits`) and maps each word with :func:`mass_values`. :meth:`derive` starts a new stream from
    ``derive_seed(seed, label)``. With ``record``, every draw is written into :attr:`draws` (shared
    with the derived streams) so that an export can list them.
    """

    seed: str
    log: list[Roll] = field(default_factory=list)
    record: bool = False
    #: every draw in order when recording: {"stream", "path", "low", "high", "faces" | "size"+"sha256"}
    draws: list[dict[str, Any]] = field(default_factory=list)
    path: tuple[str, ...] = ()
    stream: int = 0

    def __post_init__(self) -> None:
        self._random = random.Random(_seed_int(self.seed))
        self._streams = [0]  # how many streams this command's sources started (shared with derived ones)

    def roll(self, count: int, sides: int, purpose: str, modifier: int = 0) -> Roll:
        _check_dice(count, sides)
        faces = tuple(self._random.randint(1, sides) for _ in range(count))
        if self.record:
            self._draw(1, sides, faces=list(faces))
        return self._record(Roll(notation(count, sides, modifier), purpose, faces, modifier))

    def randint(self, low: int, high: int, purpose: str) -> Roll:
        _check_range(low, high)
        face = self._random.randint(low, high)
        if self.record:
            self._draw(low, high, faces=[face])
        return self._record(Roll(f"{low}-{high}", purpose, (face,)))

    def integers(self, low: int, high: int, size: int, purpose: str) -> MassFaces:
        _check_range(low, high)
        if size < 0:
            raise InvalidDeclaration("cannot roll a negative number of dice")
        import numpy as np

        if high - low + 1 > 2**64 or low < -(2**63) or high >= 2**63:
            raise InvalidDeclaration(f"mass dice take ranges of at most 2**64 numbers, not {low}..{high}")
        if size == 0:
            values = np.zeros(0, dtype=np.int64)
        else:
            width = word_bits(low, high) // 8
            raw = self._random.getrandbits(8 * width * size).to_bytes(width * size, "little")
            values = mass_values(np.frombuffer(raw, dtype="<u4" if width == 4 else "<u8"), low, high)
        if self.record:
            self._draw(low, high, size=size, sha256=values_digest(values))
        return values

    def derive(self, label: str) -> SeededDice:
        child = SeededDice(derive_seed(self.seed, label), record=self.record, path=(*self.path, str(label)))
        child.draws = self.draws
        child._streams = self._streams
        self._streams[0] += 1
        child.stream = self._streams[0]
        return child

    def _draw(self, low: int, high: int, **what: Any) -> None:
        self.draws.append({"stream": self.stream, "path": list(self.path), "low": low, "high": high, **what})

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
