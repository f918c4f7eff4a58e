"""Survivors carry on: a finished battle's survivors written back as lineup entries (pure).

``carry_over(state, lineup)`` takes the last state of a battle and the lineup it began from, and
returns the lineup of the next battle: every survivor's entry with its state at the end of this one,
and the names of those left out. Only those still standing carry on: the defeated are left out,
whether dead (or captured) or fallen (down, unconscious, out of play). With ``fallen=True`` the
fallen who did not die carry on too, still down. Each system keeps its own things:

- Phantom's Bane: Health, the weakened attributes (the full values kept as ``*_max``), worn gear at
  its worn bonus, destroyed gear gone; the defeated are left out (a duellist at no Health has no
  fight left in him).
- Eclipse Phase: damage, wounds and the lasting conditions (knocked down, unconscious); pools
  refill; the dead are left out, the incapacitated and unconscious unless ``fallen``.
- AD&D: hit points (the full ones kept as ``hp_max``); the dead are left out, and those down at 0 or
  below unless ``fallen`` (they then start down); the fled and the surrendered live and carry on.
- Battles&Balances: wounds, armour wear, ammunition, persistent effects (poison, fire...) and pending
  blessings and curses; action points reset. The defeated are left out unless ``fallen`` (they then
  carry their wounds and start out of play).
- Olympia: the men left of every kind and the noble's health; dead and captured nobles are left out.

The carried values are fields of each system's stat form (group "Carried over"), so the GM can
also type or heal them by hand.

>>> from rules import SeededDice, get_system
>>> system = get_system("adnd")
>>> lineup = [dict(p, id=f"c{i}", side="AB"[i], controller="gm", seat=None)
...           for i, p in enumerate(system.presets()[:2])]
>>> state, _ = system.setup(system.validate_lineup(lineup), {}, SeededDice("doc"))
>>> state["combatants"]["c0"]["hp"] = 4
>>> entries, left_out = carry_over(state, lineup)
>>> entries[0]["hp"], entries[0]["hp_max"], left_out
(4, 9, [])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core import Field
from .errors import InvalidDeclaration

CARRIED = "Carried over"

#: Eclipse Phase conditions that last past a fight (surprise does not)
LASTING_CONDITIONS = ("prone", "unconscious")


def carried_fields(system_id: str) -> list[Field]:
    """The fields a system's stat form takes for values carried over from an earlier battle."""
    if system_id == "phantoms-bane":
        return [
            Field("health_max", "Full Health", "int", 0, 0, 999, group=CARRIED,
                  help="0: the same as Health. Higher than Health: the rest is a wound from an earlier fight."),
            Field("offence_max", "Full Offence", "int", 0, 0, 99, group=CARRIED,
                  help="0: the same as Offence. Higher: Offence was weakened in an earlier fight."),
            Field("defence_max", "Full Defence", "int", 0, 0, 99, group=CARRIED,
                  help="0: the same as Defence. Higher: Defence was weakened in an earlier fight."),
        ]
    if system_id == "eclipse-phase":
        return [
            Field("damage", "Damage carried", "int", 0, 0, 999, group=CARRIED,
                  help="Damage from an earlier fight, counted against Durability."),
            Field("wounds", "Wounds carried", "int", 0, 0, 99, group=CARRIED, help="Each gives -10 to tests."),
            Field("conditions", "Conditions carried", "text", "", 0, 40, group=CARRIED,
                  help="Empty, or prone and/or unconscious, separated by commas."),
        ]
    if system_id == "adnd":
        return [
            Field("hp_max", "Full hit points", "int", 0, 0, 300, group=CARRIED,
                  help="0: the same as Hit points. Higher: the character starts wounded."),
        ]
    if system_id == "battles-and-balances":
        return [
            Field("wounds", "Wounds carried", "int", 0, 0, 9999, group=CARRIED,
                  help="Wounds from an earlier fight; at Health or more the character starts out of play."),
            Field("effects", "Effects carried", "text", "", 0, 120, group=CARRIED,
                  help="Persistent effects and their marks, e.g. 'poison 2, fire 1'."),
            Field("blessings", "Blessings pending", "int", 0, 0, 99, group=CARRIED),
            Field("curses", "Curses pending", "int", 0, 0, 99, group=CARRIED),
        ]
    return []


#: what carries over, per system, in the help every screen shows ("How this system works")
HELP = {
    "phantoms-bane": "When a duel is over, the GM can write the survivors back into a saved roster (Battle tab, "
    "\"Survivors carry on\"). A survivor keeps its Health, its weakened Offence and Defence (the full values are "
    "kept beside them, as in 5/7), and its gear at the bonus it was worn down to; gear that broke is gone. "
    "The defeated are left out. The stat form shows the full values under \"Carried over\": heal by raising "
    "Health there.",
    "eclipse-phase": "When a fight is over, the GM can write the survivors back into a saved roster (Battle tab, "
    "\"Survivors carry on\"). Each survivor keeps its damage, its wounds and whether it is knocked down or "
    "unconscious; Flex and Vigor refill. Only those still standing carry on: the dead are left out, and so "
    "are the incapacitated and the unconscious unless the GM ticks \"Also carry on those who fell but live\". The stat "
    "form shows what was carried under \"Carried over\": lower the damage or wounds there when a character heals.",
    "adnd": "When the encounter is over, the DM can write the survivors back into a saved roster (Battle tab, "
    "\"Survivors carry on\"). Each survivor keeps its current hit points (its full ones under \"Carried over\"). "
    "Only those still standing carry on (the fled and the surrendered too): the dead are left out, and so are "
    "those down at 0 or below unless the DM ticks \"Also carry on those who fell but live\"; they then start the next "
    "fight down, their bleeding stopped in the recovery turn.",
    "battles-and-balances": "When a battle is over, the GM can write the survivors back into a saved roster (Battle "
    "tab, \"Survivors carry on\"). Each character keeps its wounds, its armour wear, the ammunition it has left, "
    "its persistent effects (poison, fire...) with their marks, and any blessing or curse still pending; "
    "action points start full again. The defeated are left out unless the GM ticks \"Also those who fell but "
    "live\": a defeated character then keeps its wounds and starts out of play until healed (the GM's healing "
    "tool, or lower \"Wounds carried\" in the stat form).",
    "olympia": "When a battle is over, the GM can write the armies back into a saved roster (Battle tab, "
    "\"Survivors carry on\"). Each noble keeps the men he has left of every kind and his health after his "
    "wounds; nobles who were killed or taken prisoner are left out.",
}


def carry_over_help(system_id: str) -> list[dict[str, str]]:
    """The help section on what carries over into the next battle."""
    text = HELP.get(system_id)
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


# --- per system: (state combatant, lineup entry) -> entry, or None when left out --------------------------


# whether a combatant still stands at the end: None; FALLEN (out of the fight, alive: carried only when
# asked); GONE (dead, captured, or a duellist with no Health: never carried)
FALLEN, GONE = "fallen", "gone"


def _phantoms_bane_standing(c: Mapping[str, Any]) -> str | None:
    return GONE if c.get("defeated") or c.get("health", 0) <= 0 else None


def _eclipse_phase_standing(c: Mapping[str, Any]) -> str | None:
    if c.get("state") == "dead":
        return GONE
    return FALLEN if c.get("state") == "incapacitated" or "unconscious" in (c.get("conditions") or []) else None


def _adnd_standing(c: Mapping[str, Any]) -> str | None:
    if c.get("condition") == "dead" or c.get("hp", 0) <= -10 or (c.get("dies_at_zero") and c.get("hp", 0) <= 0):
        return GONE
    return FALLEN if c.get("condition") == "down" or c.get("hp", 0) <= 0 else None


def _battles_balances_standing(c: Mapping[str, Any]) -> str | None:
    return FALLEN if c.get("defeated") else None


def _olympia_standing(c: Mapping[str, Any]) -> str | None:
    return GONE if c.get("state") in ("dead", "prisoner") else None


STANDING = {
    "phantoms-bane": _phantoms_bane_standing,
    "eclipse-phase": _eclipse_phase_standing,
    "adnd": _adnd_standing,
    "battles-and-balances": _battles_balances_standing,
    "olympia": _olympia_standing,
}


def _phantoms_bane(c: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    for stat in ("health", "offence", "defence", "skill"):
        entry[stat] = c[stat]
    for stat in ("health", "offence", "defence"):
        entry[f"{stat}_max"] = c[f"{stat}_max"] if c[f"{stat}_max"] > c[stat] else 0
    for slot in ("weapon", "armour"):
        item = c.get(slot)
        if item is None:  # destroyed (or never had one)
            entry[f"{slot}_name"], entry[f"{slot}_bonus"] = "", 0
        else:
            entry[f"{slot}_name"], entry[f"{slot}_bonus"] = item["name"], item["bonus"]
    return entry


def _eclipse_phase(c: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    entry["damage"] = c.get("damage", 0)
    entry["wounds"] = c.get("wounds", 0)
    entry["conditions"] = ", ".join(k for k in c.get("conditions", []) if k in LASTING_CONDITIONS)
    return entry  # pools: the form's Flex and Vigor are the full pools, refilled


def _adnd(c: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    entry["hp"] = c["hp"]
    entry["hp_max"] = c["hp_max"] if c["hp_max"] > c["hp"] else 0
    return entry


def _battles_balances(c: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    entry["wounds"] = c.get("wounds", 0)
    entry["armour_wear"] = c.get("armour_wear", entry.get("armour_wear", 0))
    if isinstance(c.get("ammo"), int):
        entry["ammo"] = c["ammo"]
    entry["effects"] = effects_text(c.get("effects") or {})
    entry["blessings"] = c.get("blessings", 0)
    entry["curses"] = c.get("curses", 0)
    return entry  # action points: the next battle starts them full


def _olympia(c: Mapping[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    for key in list(entry):
        if key in (c.get("start_troops") or {}) or key in (c.get("troops") or {}):
            entry[key] = 0
    for key, count in (c.get("troops") or {}).items():
        entry[key] = count
    entry["health"] = max(1, c.get("health", entry.get("health", 1)))
    return entry


CARRY = {
    "phantoms-bane": _phantoms_bane,
    "eclipse-phase": _eclipse_phase,
    "adnd": _adnd,
    "battles-and-balances": _battles_balances,
    "olympia": _olympia,
}

def carry_over(state: Mapping[str, Any], lineup: list[Mapping[str, Any]], *,
               fallen: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """The lineup of the next battle from the last state of this one and the lineup it began from:
    ``(entries, names left out)``. Only those still standing carry on; ``fallen``: those who fell
    but did not die too. Entries keep their lineup order; a combatant missing from the lineup cannot
    be carried (the GM changed the lineup since the battle began)."""
    system_id = str(state.get("system"))
    if system_id not in CARRY:
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
        standing = STANDING[system_id](c)
        carried = None if standing == GONE or (standing == FALLEN and not fallen) else CARRY[system_id](c, dict(entry))
        if carried is None:
            left_out.append(str(c.get("name", entry.get("id"))))
        else:
            entries.append(carried)
    return entries, left_out
