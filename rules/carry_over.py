"""Survivors carry on: a finished battle's survivors written back as lineup entries (pure).

``carry_over(state, lineup)`` takes the last state of a battle and the lineup it began from, and
returns the lineup of the next battle: every survivor's entry with its state at the end of this one,
and the names of those left out. Only those still standing carry on: the defeated are left out,
whether dead (or captured) or fallen (down, unconscious, out of play). With ``fallen=True`` the
fallen who did not die carry on too, still down. Each system keeps its own things, and says so
itself: its :class:`~rules.contract.Traits` (``carries_over``, ``carried_fields``,
``carry_over_help``) and its hooks :meth:`~rules.contract.RuleSystem.carry_standing` (who still
stands) and :meth:`~rules.contract.RuleSystem.carry_entry` (what a survivor keeps).

The carried values are fields of each system's stat form (group "Carried over"), so the GM can
also type or heal them by hand.

>>> from rules.contract import RuleSystem, Traits
>>> class Tug(RuleSystem):
...     id = name = "tug"
...     traits = Traits(carries_over=True)
...     def carry_standing(self, combatant):
...         return GONE if combatant["rope"] <= 0 else None
...     def carry_entry(self, combatant, entry):
...         return {**entry, "rope": combatant["rope"]}
>>> state = {"system": "tug", "combatants": {"a": {"name": "Ann", "rope": 4}, "b": {"name": "Bo", "rope": 0}}}
>>> carry_over(state, [{"id": "a", "rope": 9}, {"id": "b", "rope": 9}], system=Tug())
([{'id': 'a', 'rope': 4}], ['Bo'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .contract import CARRIED_GROUP, FALLEN, GONE, RuleSystem, Traits
from .core import Field
from .errors import InvalidDeclaration
from .registry import get_system

#: the stat form's group of the carried values (kept here for the systems that import it from here)
CARRIED = CARRIED_GROUP

#: Eclipse Phase conditions that last past a fight (surprise does not)
LASTING_CONDITIONS = ("prone", "unconscious")


def _traits(system_id: str) -> Traits:
    try:
        return get_system(system_id).traits
    except InvalidDeclaration:
        return Traits()


def carried_fields(system_id: str) -> list[Field]:
    """The fields a system's stat form takes for values carried over from an earlier battle."""
    return list(_traits(system_id).carried_fields)


def carry_over_help(system_id: str) -> list[dict[str, str]]:
    """The help section on what carries over into the next battle."""
    text = _traits(system_id).carry_over_help
    return [{"title": "Survivors carry on", "text": text}] if text else []


def parse_conditions(text: Any) -> list[str]:
    """Eclipse Phase's carried conditions from the form's text.

    >>> parse_conditions("prone, unconscious"), parse_conditions("")
    (['prone', 'unconscious'], [])
    """
    if not isinstance(text, str):
        return []
    found = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        if word in ("knocked down", "down"):
            word = "prone"
        if word not in LASTING_CONDITIONS:
            raise InvalidDeclaration(f"conditions carried: {word[:30]!r} is not one (prone or unconscious)")
        if word not in found:
            found.append(word)
    return found


def parse_effects(text: Any) -> dict[str, int]:
    """Battles&Balances' carried effects from the form's text: ``"poison 2, fire"`` -> marks.

    >>> parse_effects("poison 2, fire"), parse_effects("")
    ({'poison': 2, 'fire': 1}, {})
    """
    if not isinstance(text, str):
        return {}
    effects: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, _, count = part.rpartition(" ")
        if not (name and count.isdigit()):
            name, count = part, "1"
        name = name.strip().lower()
        if not name or len(name) > 30 or not 1 <= int(count) <= 99:
            raise InvalidDeclaration(f"effects carried: write each as a name and its marks, e.g. 'poison 2' (not {part[:30]!r})")
        effects[name] = effects.get(name, 0) + int(count)
    return effects


def effects_text(effects: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in effects.items() if count)


def carry_over(state: Mapping[str, Any], lineup: Sequence[Mapping[str, Any]], *, fallen: bool = False,
               system: RuleSystem | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """The lineup of the next battle from the last state of this one and the lineup it began from:
    ``(entries, names left out)``. Only those still standing carry on; ``fallen``: those who fell
    but did not die too. Entries keep their lineup order; a combatant missing from the lineup cannot
    be carried (the GM changed the lineup since the battle began). ``system``: the state's, by default."""
    system_id = str(state.get("system"))
    if system is None:
        try:
            system = get_system(system_id)
        except InvalidDeclaration:
            system = None
    if system is None or not system.traits.carries_over:
        raise InvalidDeclaration(f"no carry-over for the rule system {system_id!r}")
    combatants = state.get("combatants", {})
    by_id = {entry.get("id"): entry for entry in lineup}
    missing = [c.get("name", cid) for cid, c in combatants.items() if cid not in by_id]
    if missing:
        raise InvalidDeclaration(
            f"the lineup has changed since this battle began ({', '.join(missing)} no longer in it): "
            "survivors can be written only from the lineup the battle started with")
    entries: list[dict[str, Any]] = []
    left_out: list[str] = []
    for entry in lineup:
        c = combatants.get(entry.get("id"))
        if c is None:  # added to the lineup after the battle began: not in this battle
            continue
        standing = system.carry_standing(c)
        carried = None if standing == GONE or (standing == FALLEN and not fallen) else system.carry_entry(c, dict(entry))
        if carried is None:
            left_out.append(str(c.get("name", entry.get("id"))))
        else:
            entries.append(carried)
    return entries, left_out
