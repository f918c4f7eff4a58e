"""Battleboard's rules library: pure combat rules, no Flask, no database, no I/O.

A system is state + declarations + a dice source in, new state + events out.
"""

from .contract import RuleSystem
from .core import Event, Field, State, Viewer, event, event_for, told, visible_events
from .dice import DiceSource, Roll, ScriptedDice, SeededDice, derive_seed
from .errors import (
    DiceExhausted,
    IllegalDeclaration,
    ImpossibleFace,
    InvalidDeclaration,
    NotPermitted,
    RulesError,
)
from .odds import has_odds
from .registry import available_systems, get_system

__all__ = [
    "DiceExhausted",
    "DiceSource",
    "Event",
    "Field",
    "IllegalDeclaration",
    "ImpossibleFace",
    "InvalidDeclaration",
    "NotPermitted",
    "Roll",
    "RuleSystem",
    "RulesError",
    "ScriptedDice",
    "SeededDice",
    "State",
    "Viewer",
    "available_systems",
    "derive_seed",
    "event",
    "get_system",
    "has_odds",
    "visible_events",
    "event_for",
    "told",
]
