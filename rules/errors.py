"""Errors raised by the rules library.

Each says exactly what is wrong, in words a GM or player can read.
"""

from __future__ import annotations


class RulesError(ValueError):
    """Base of every error the rules library raises on purpose."""

    code = "rules_error"


class InvalidDeclaration(RulesError):
    """A declaration or stat block that is malformed: wrong type, missing field, value out of range."""

    code = "invalid"


class IllegalDeclaration(RulesError):
    """A well-formed declaration that the rules do not allow at this moment."""

    code = "illegal"


class NotPermitted(RulesError):
    """The sender's role or seat may not make this declaration."""

    code = "forbidden"


class DiceError(RulesError):
    """A dice source was asked for something it cannot give."""

    code = "dice"


class DiceExhausted(DiceError):
    """A scripted dice source ran out of faces."""


class ImpossibleFace(DiceError):
    """A scripted face does not fit the die it was used for."""
