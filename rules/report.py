"""What a battle report reads from a battle state (pure: state in, numbers out).

A report needs, for each system, the values of every combatant (start and end of the battle), each
side's strength at any moment (for the chart), where the battle stands (its turn or round) and
which events are worth retelling. Each system says so itself: its :class:`~rules.contract.Traits`
(charts, round word, key events) and its ``report_*`` hooks. ``public=True`` reads only what a
spectator may see: for a system whose numbers are hidden the numbers come from the system's own
spectator view, so a report can never show more than the table display.

>>> from rules.contract import Chart, RuleSystem, Traits
>>> class Tug(RuleSystem):
...     id = name = "tug"
...     traits = Traits(round_key="turn", round_word="Pull", charts=(Chart("rope", "Rope left per side", "metres"),))
...     def report_strength(self, state, shown):
...         return {"rope": {c["side"]: c["rope"] for c in state["combatants"].values()}}
...     def report_values(self, combatant, seen):
...         return {"Rope": str(combatant["rope"])}
>>> state = {"system": "tug", "turn": 3, "combatants": {"a": {"name": "Ann", "side": "A", "rope": 4.0},
...                                                     "b": {"name": "Bo", "side": "B", "rope": 6}}}
>>> strength(state, system=Tug())
{'rope': {'A': 4, 'B': 6}}
>>> progress(state, system=Tug()), progress_label(Tug())
(3, 'Pull')
>>> [row["values"] for row in combatant_rows(state, system=Tug())]
[{'Rope': '4.0'}, {'Rope': '6'}]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .contract import RuleSystem
from .core import Event, Viewer
from .hiding import hidden_names, scrub, visible_names, without_hidden
from .registry import get_system

State = Mapping[str, Any]
#: a system, or its id
SystemRef = str | RuleSystem

#: event types worth retelling in every system: defeats, breaks, flights, the end (a system adds its
#: own: :attr:`Traits.key_events`)
KEY_TYPES = frozenset({
    "battle.started", "battle.ended", "combatant.defeated", "combatant.killed", "combatant.incapacitated",
    "combatant.fled", "combatant.surrendered", "combatant.recovered", "escape.succeeded", "side.broke",
    "structure.destroyed", "prisoner.taken", "armour.destroyed", "weapon.destroyed", "weapon.lost",
    "encounter.resolved", "charge.arrived", "noble.killed", "noble.wounded",
})
#: words that make an event a key moment in any system
KEY_WORDS = ("critical", "knocked out", "knocked down", "unconscious", "dies", "slain", "killed")
#: a morale check matters when somebody broke
MORALE_FAILURES = ("falls back", "retreat", "flee", "panic", "surrender", "fails")


def _system(system: SystemRef | None, state: State | None = None) -> RuleSystem:
    if isinstance(system, RuleSystem):
        return system
    return get_system(str(system if system is not None else (state or {}).get("system")))


def charts(system: SystemRef, public: bool = False) -> list[tuple[str, str, str]]:
    """The charts a report of this system draws: ``[(key, title, unit)]``."""
    return [(c.key, c.title, c.unit) for c in _system(system).traits.report_charts(public)]


def progress(state: State, *, system: RuleSystem | None = None) -> int:
    """The turn or round the battle is in (0 before the first)."""
    value = state.get(_system(system, state).traits.round_key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def progress_label(system: SystemRef) -> str:
    """The name of a turn or round in this system ("Turn", "Round", "Action turn")."""
    return _system(system).traits.round_word


def sides(state: State) -> list[str]:
    """The sides of a battle, in their order."""
    found: list[str] = []
    for c in state.get("combatants", {}).values():
        if c.get("side") not in found:
            found.append(c.get("side"))
    return sorted(found)


def _public_combatants(system: RuleSystem, state: State) -> dict[str, Mapping[str, Any]]:
    view = scrub(system.view_for(dict(state), Viewer.spectator()), hidden_names(state), visible_names(state))
    found = view.get("combatants") or {}
    if isinstance(found, list):
        return {c.get("id", str(i)): c for i, c in enumerate(found)}
    return dict(found)


def _hidden(system: RuleSystem, public: bool) -> bool:
    """Whether a report reads the spectators' view: a public one, of a system whose numbers are hidden."""
    return public and system.traits.public_charts is not None


def strength(state: State, public: bool = False, *, system: RuleSystem | None = None) -> dict[str, dict[str, float]]:
    """Each chart's value per side: ``{chart key: {side: value}}``."""
    found = _system(system, state)
    keys = [chart.key for chart in found.traits.report_charts(public)]
    out: dict[str, dict[str, float]] = {key: {side: 0 for side in sides(state)} for key in keys}
    shown = _public_combatants(found, state) if _hidden(found, public) else None
    # a public report counts a combatant still hidden for nothing (rules/hiding.py)
    counted = without_hidden(state) if public and hidden_names(state) else state
    for key, values in found.report_strength(counted, shown).items():
        if key in out:
            out[key].update(values)
    return _whole(out)


def _whole(out: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {key: {side: int(v) if float(v).is_integer() else v for side, v in values.items()} for key, values in out.items()}


def break_lines(state: State, *, system: RuleSystem | None = None) -> dict[str, dict[str, float]]:
    """Lines drawn across a chart (a side's break line, say): ``{chart key: {side: value}}``."""
    return {key: dict(values) for key, values in _system(system, state).report_lines(state).items()}


def combatant_rows(state: State, public: bool = False, *, system: RuleSystem | None = None) -> list[dict[str, Any]]:
    """Each combatant's values as a report prints them: ``[{id, name, side, values: {label: text}}]``."""
    found = _system(system, state)
    shown = _public_combatants(found, state) if _hidden(found, public) else None
    left_out = hidden_names(state) if public else {}  # one still hidden: it never stepped out
    rows = []
    for cid, c in state.get("combatants", {}).items():
        if cid in left_out:
            continue
        values = found.report_values(c, shown.get(cid, {}) if shown is not None else None)
        rows.append({"id": cid, "name": c.get("name", cid), "side": c.get("side"), "values": values})
    return rows


def is_key_moment(system: SystemRef, event: Event) -> bool:
    """Whether an event is worth retelling in a report: defeats, breaks, criticals, morale failures."""
    kind = str(event.get("type", ""))
    text = str(event.get("text", "")).lower()
    if kind in KEY_TYPES or kind in _system(system).traits.key_events:
        return True
    if kind == "morale.checked":
        return any(word in text for word in MORALE_FAILURES)
    if kind.startswith("check.") and "knocked" not in text:
        return False
    return any(word in text for word in KEY_WORDS)
