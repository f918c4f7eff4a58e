"""A dice roller for anything: a roll typed in the usual notation (d20's, the reference), with a label.

The battles roll their own dice; a table rolls for much else (a perception check, a saving throw, a
random encounter). :func:`parse` reads what was typed, :func:`roll` rolls it with a dice source (the
battle's committed dice, or a table's: :mod:`rules.fair`), and :func:`roll_event` is the event of
the log: who rolled, why, every face and the total. A GM's secret roll reaches only the GM; everyone
else reads "The GM rolled in secret."

The notation, borrowed from d20: terms joined by ``+`` and ``-``; a term is a whole number or dice,
``NdS`` (``N`` defaults to 1, ``d%`` is ``d100``), optionally keeping or dropping the highest or
lowest few: ``kh3`` (keep the highest 3), ``kl1``, ``dh1``, ``dl1``. Spaces around ``+`` and ``-`` and case do not matter.

>>> from rules.dice import ScriptedDice
>>> made = roll(parse("4d6kh3 + 2"), ScriptedDice([5, 1, 6, 3]), "Ann")
>>> made.total, made.rolls[0]["kept"]
(16, [True, False, True, True])
>>> parse("2d6+3").text, parse("d%").text, parse(" 3D8 + 1d6 ").text
('2d6+3', '1d100', '3d8+1d6')
>>> parse("2d0")
Traceback (most recent call last):
...
rules.errors.InvalidDeclaration: a die needs 1 to 1000 sides, not 0 (in "2d0")

The dice of one roll are drawn term by term, left to right, each die in order: ``3d8 + 1d6`` draws
three d8 and then one d6 (``dice.roll(count, sides, purpose)`` per term).

d20 (avrae's library) was looked at: its dice draw from Python's global ``random`` module, which
cannot be the battle's committed stream, so the notation is read here (about a hundred lines).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .core import GM_ONLY, PUBLIC, Event, Viewer, event, told
from .dice import DiceSource
from .errors import InvalidDeclaration, NotPermitted

#: bounds: no roll can hold up the server
MAX_DICE = 100
MAX_SIDES = 1000
MAX_LENGTH = 60
MAX_TERMS = 12
MAX_NUMBER = 10_000
MAX_LABEL = 60
MAX_NAME = 40
#: the event of a roll, and what everyone but the GM reads of a secret one
EVENT = "dice.rolled"
SECRET_WORDS = "The GM rolled in secret."

_TERM = re.compile(r"([+-])?(?:(\d+)?d(\d+|%)(?:(kh|kl|dh|dl)(\d+))?|(\d+))")


@dataclass(frozen=True)
class Term:
    """One term: ``sign`` (1 or -1), and dice (``count``, ``sides``, ``keep``: ``("kh", 3)`` or None)
    or a whole number (``count`` 0, ``value``)."""

    sign: int
    count: int = 0
    sides: int = 0
    keep: tuple[str, int] | None = None
    value: int = 0

    @property
    def dice(self) -> bool:
        return self.count > 0

    def text(self, first: bool) -> str:
        sign = "-" if self.sign < 0 else ("" if first else "+")
        if not self.dice:
            return f"{sign}{self.value}"
        keep = f"{self.keep[0]}{self.keep[1]}" if self.keep else ""
        return f"{sign}{self.count}d{self.sides}{keep}"

    def kept(self, faces: tuple[int, ...]) -> list[bool]:
        """Which of ``faces`` count: all, or the highest/lowest few kept (ties: the earlier die first)."""
        if self.keep is None:
            return [True] * len(faces)
        how, n = self.keep
        order = sorted(range(len(faces)), key=lambda i: (-faces[i], i) if how in ("kh", "dl") else (faces[i], i))
        count = n if how in ("kh", "kl") else len(faces) - n
        chosen = set(order[:count])
        return [i in chosen for i in range(len(faces))]


@dataclass(frozen=True)
class Expression:
    """A parsed roll: its terms, and its text written the one way (``2d6+3``)."""

    terms: tuple[Term, ...]

    @property
    def text(self) -> str:
        return "".join(term.text(i == 0) for i, term in enumerate(self.terms))

    @property
    def dice_count(self) -> int:
        return sum(term.count for term in self.terms)


def parse(text: Any) -> Expression:
    """Read a roll typed in the notation above; :class:`InvalidDeclaration` says what is wrong."""
    if not isinstance(text, str):
        raise InvalidDeclaration("type a roll, such as 2d6+3")
    squeezed = re.sub(r"\s+", "", text).lower()
    if not squeezed:
        raise InvalidDeclaration("type a roll, such as 2d6+3")
    if len(text) > MAX_LENGTH:
        raise InvalidDeclaration(f"a roll is at most {MAX_LENGTH} characters")
    if re.search(r"[0-9a-z%]\s+[0-9a-z%]", text.lower()):  # "2d6 3" is not 2d63
        raise InvalidDeclaration(f"cannot read {text.strip()!r}: join the parts with + or -")
    terms: list[Term] = []
    at = 0
    while at < len(squeezed):
        found = _TERM.match(squeezed, at)
        if found is None or found.end() == at or (terms and not found.group(1)):
            raise InvalidDeclaration(f"cannot read {text.strip()!r} after {squeezed[:at] or 'the start'!r}: "
                                     "write dice as 2d6, d100 or 4d6kh3, joined by + or -")
        sign_text, count_text, sides_text, how, keep_text, number_text = found.groups()
        sign = -1 if sign_text == "-" else 1
        if number_text is not None:
            value = int(number_text)
            if value > MAX_NUMBER:
                raise InvalidDeclaration(f"a number in a roll is at most {MAX_NUMBER}")
            terms.append(Term(sign, value=value))
        else:
            count = int(count_text) if count_text is not None else 1
            sides = 100 if sides_text == "%" else int(sides_text)
            if not 1 <= sides <= MAX_SIDES:
                raise InvalidDeclaration(f"a die needs 1 to {MAX_SIDES} sides, not {sides} (in \"{text.strip()}\")")
            if not 1 <= count <= MAX_DICE:
                raise InvalidDeclaration(f"roll 1 to {MAX_DICE} dice at once, not {count}")
            keep = None
            if how is not None:
                n = int(keep_text)
                low = 1 if how in ("kh", "kl") else 0
                if not low <= n <= count - (0 if how in ("kh", "kl") else 1):
                    raise InvalidDeclaration(f"{how}{n} does not fit {count} dice")
                keep = (how, n)
            terms.append(Term(sign, count, sides, keep))
        at = found.end()
        if len(terms) > MAX_TERMS:
            raise InvalidDeclaration(f"a roll has at most {MAX_TERMS} parts")
    expression = Expression(tuple(terms))
    if not any(term.dice for term in terms):
        raise InvalidDeclaration("a roll needs dice, such as d20 or 2d6")
    if expression.dice_count > MAX_DICE:
        raise InvalidDeclaration(f"at most {MAX_DICE} dice in one roll, not {expression.dice_count}")
    return expression


@dataclass(frozen=True)
class Rolled:
    """A roll made: its expression, the rolls' records (one per dice term; the whole numbers go into
    the first one's ``modifier``) and the total."""

    expression: Expression
    rolls: tuple[dict[str, Any], ...]
    total: int
    #: the faces and numbers in words, e.g. ``"5 + [1] + 6 + 3 + 2"`` (a die left out in brackets)
    working: str


def roll(expression: Expression, dice: DiceSource, purpose: str) -> Rolled:
    """Roll ``expression`` with ``dice``: each dice term in order (``purpose`` goes with each roll)."""
    rolls: list[dict[str, Any]] = []
    words: list[str] = []
    total = 0
    numbers = sum(term.sign * term.value for term in expression.terms if not term.dice)
    for term in expression.terms:
        if not term.dice:
            words.append(f"{'-' if term.sign < 0 else '+'} {term.value}")
            continue
        made = dice.roll(term.count, term.sides, purpose)
        kept = term.kept(made.faces)
        value = term.sign * sum(face for face, keep in zip(made.faces, kept, strict=True) if keep)
        total += value
        faces = " + ".join(str(face) if keep else f"[{face}]" for face, keep in zip(made.faces, kept, strict=True))
        words.append(f"{'-' if term.sign < 0 else '+'} ({faces})" if len(made.faces) > 1 else f"{'-' if term.sign < 0 else '+'} {faces}")
        record = {**made.to_dict(), "dice": term.text(True).lstrip("-"), "total": value}
        if term.keep is not None:
            record["kept"] = kept
        rolls.append(record)
    total += numbers
    if numbers:  # the whole numbers show with the first roll, so the tray's total is the roll's
        rolls[0] = {**rolls[0], "modifier": numbers, "total": rolls[0]["total"] + numbers}
    working = " ".join(words).removeprefix("+ ").strip()
    return Rolled(expression, tuple(rolls), total, working)


def clean_label(label: Any) -> str:
    """Why the roll is made (optional): plain words, at most :data:`MAX_LABEL` characters."""
    if label is None:
        return ""
    if not isinstance(label, str):
        raise InvalidDeclaration("a roll's label must be text")
    words = " ".join(str(label).split())
    if len(words) > MAX_LABEL:
        raise InvalidDeclaration(f"a roll's label is at most {MAX_LABEL} characters")
    return words


def roll_event(payload: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> Event:
    """The event of one roll, from the command's ``payload`` (``notation``, ``label``?, ``secret``?,
    and ``by``: the roller's name, set by the server). Only the GM may roll in secret.

    >>> from rules.dice import ScriptedDice
    >>> ev = roll_event({"notation": "2d6+3", "label": "perception", "by": "Ann"}, Viewer.player("s1"), ScriptedDice([4, 2]))
    >>> ev["text"], ev["visibility"], ev["data"]["total"]
    ('Ann rolled 2d6+3 for perception: (4 + 2) + 3 = 9.', 'public', 9)
    >>> secret = roll_event({"notation": "d20", "secret": True}, Viewer.gm(), ScriptedDice([17]))
    >>> secret["text"], secret["others"]
    ('The GM rolled 1d20 in secret: 17.', {'text': 'The GM rolled in secret.', 'rolls': [], 'data': {}})
    """
    expression = parse(payload.get("notation"))
    label = clean_label(payload.get("label"))
    secret = payload.get("secret", False)
    if not isinstance(secret, bool):
        raise InvalidDeclaration("secret must be true or false")
    if secret and not viewer.is_gm:
        raise NotPermitted("only the GM may roll in secret")
    if viewer.role == "spectator":
        raise NotPermitted("spectators watch; they cannot roll")
    by = payload.get("by")
    if viewer.is_gm:
        who = "The GM"
    else:
        who = " ".join(by.split())[:MAX_NAME] if isinstance(by, str) and by.strip() else "A player"
    purpose = f"{who}: {label}" if label else f"{who}: {expression.text}"
    made = roll(expression, dice, purpose)
    why = f" for {label}" if label else ""
    hidden = " in secret" if secret else ""
    working = "" if made.working == str(made.total) else f"{made.working} = "
    text = f"{who} rolled {expression.text}{why}{hidden}: {working}{made.total}."
    data: dict[str, Any] = {"notation": expression.text, "label": label, "by": who, "total": made.total, "secret": secret}
    if secret:
        return event(EVENT, text, visibility=GM_ONLY, rolls=made.rolls, others=told(SECRET_WORDS), **data)
    return event(EVENT, text, visibility=PUBLIC, rolls=made.rolls, **data)
