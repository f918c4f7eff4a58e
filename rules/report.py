"""What a battle report reads from a battle state, per rule system (pure: state in, numbers out).

A report needs, for each system, the values of every combatant (start and end of the battle), each
side's strength at any moment (for the chart), where the battle stands (its turn or round) and
which events are worth retelling. ``public=True`` reads only what a spectator may see: the numbers
come from the system's own spectator view, so a report can never show more than the table display.

>>> from rules import SeededDice, get_system
>>> system = get_system("phantoms-bane")
>>> lineup = [dict(p, id=f"c{i}", side="AB"[i], controller="gm", seat=None)
...           for i, p in enumerate(system.presets()[:2])]
>>> state, _ = system.setup(lineup, {}, SeededDice("doc"))
>>> strength(state)["health"]
{'A': 7, 'B': 2}
>>> [row["values"]["Health"] for row in combatant_rows(state)]
['7/7', '2/2']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .core import Event, Viewer
from .registry import get_system

State = Mapping[str, Any]

#: the charts of each system: (key, title, unit); public reports of systems whose numbers are
#: hidden draw what the spectators see instead
CHARTS: dict[str, list[tuple[str, str, str]]] = {
    "phantoms-bane": [("health", "Health left per side", "Health")],
    "eclipse-phase": [("durability", "Durability left per side (Durability − damage)", "Durability")],
    "adnd": [("hp", "Hit points left per side", "hit points")],
    "battles-and-balances": [("health", "Health left per side (health − wounds)", "Health")],
    "olympia": [
        ("value", "Combat value per side, against its break line (dashed)", "combat value"),
        ("men", "Men per side", "men"),
    ],
}
PUBLIC_CHARTS: dict[str, list[tuple[str, str, str]]] = {
    "eclipse-phase": [("condition", "Condition per side (sum of each combatant's shown health, 0–100 %)", "%")],
    "adnd": [("standing", "Combatants still fighting per side", "combatants")],
}

#: where a battle stands: the state key and its name
PROGRESS: dict[str, tuple[str, str]] = {
    "phantoms-bane": ("turn", "Turn"),
    "eclipse-phase": ("round", "Action turn"),
    "adnd": ("round", "Round"),
    "battles-and-balances": ("turn", "Turn"),
    "olympia": ("round", "Round"),
}

#: event types worth retelling in every system: defeats, breaks, flights, the end
KEY_TYPES = frozenset({
    "battle.started", "battle.ended", "combatant.defeated", "combatant.killed", "combatant.incapacitated",
    "combatant.fled", "combatant.surrendered", "combatant.recovered", "escape.succeeded", "side.broke",
    "structure.destroyed", "prisoner.taken", "armour.destroyed", "weapon.destroyed", "weapon.lost",
    "encounter.resolved", "charge.arrived", "noble.killed", "noble.wounded",
})
#: more of them where a battle has few events (a duel: every wound counts)
EXTRA_KEY_TYPES: dict[str, frozenset[str]] = {
    "phantoms-bane": frozenset({"damage.dealt", "combatant.weakened", "penetration.scored", "counter.scored"}),
    "olympia": frozenset({"round.started"}),
}
#: words that make an event a key moment in any system
KEY_WORDS = ("critical", "knocked out", "knocked down", "unconscious", "dies", "slain", "killed")
#: a morale check matters when somebody broke
MORALE_FAILURES = ("falls back", "retreat", "flee", "panic", "surrender", "fails")


def charts(system_id: str, public: bool = False) -> list[tuple[str, str, str]]:
    """The charts a report of this system draws."""
    if public and system_id in PUBLIC_CHARTS:
        return PUBLIC_CHARTS[system_id]
    return CHARTS.get(system_id, [])


def progress(state: State) -> int:
    """The turn or round the battle is in (0 before the first)."""
    key = PROGRESS.get(str(state.get("system")), ("round", "Round"))[0]
    value = state.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def progress_label(system_id: str) -> str:
    return PROGRESS.get(system_id, ("round", "Round"))[1]


def sides(state: State) -> list[str]:
    """The sides of a battle, in their order."""
    found: list[str] = []
    for c in state.get("combatants", {}).values():
        if c.get("side") not in found:
            found.append(c.get("side"))
    return sorted(found)


def _public_combatants(state: State) -> dict[str, Mapping[str, Any]]:
    view = get_system(str(state["system"])).view_for(dict(state), Viewer.spectator())
    found = view.get("combatants") or {}
    if isinstance(found, list):
        return {c.get("id", str(i)): c for i, c in enumerate(found)}
    return dict(found)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def strength(state: State, public: bool = False) -> dict[str, dict[str, float]]:
    """Each chart's value per side: ``{chart key: {side: value}}``."""
    system_id = str(state.get("system"))
    combatants = state.get("combatants", {})
    out: dict[str, dict[str, float]] = {key: {side: 0 for side in sides(state)} for key, _, _ in charts(system_id, public)}
    if system_id == "olympia":
        from .olympia import _total2

        for side in sides(state):
            out["value"][side] = _total2(state, side) / 2
            out["men"][side] = sum(n for c in combatants.values() if c["side"] == side for n in c["troops"].values())
        return _whole(out)
    if public and system_id in PUBLIC_CHARTS:
        shown = _public_combatants(state)
        for cid, c in combatants.items():
            seen = shown.get(cid, {})
            if system_id == "eclipse-phase":
                health = seen.get("health")
                level = health.get("level") if isinstance(health, Mapping) else None
                if level is None and isinstance(seen.get("damage"), int):  # the GM revealed the numbers
                    level = max(0.0, 1 - seen["damage"] / max(1, seen.get("durability") or 1))
                out["condition"][c["side"]] += round(100 * _num(level))
            else:
                out["standing"][c["side"]] += 1 if seen.get("condition", c.get("condition")) == "ok" else 0
        return _whole(out)
    for c in combatants.values():
        side = c.get("side")
        if system_id == "phantoms-bane":
            out["health"][side] += max(0.0, _num(c.get("health")))
        elif system_id == "eclipse-phase":
            out["durability"][side] += max(0.0, _num(c.get("durability")) - _num(c.get("damage")))
        elif system_id == "adnd":
            out["hp"][side] += max(0.0, _num(c.get("hp")))
        elif system_id == "battles-and-balances":
            out["health"][side] += max(0.0, _num(c.get("health")) - _num(c.get("wounds")))
    return _whole(out)


def _whole(out: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {key: {side: int(v) if float(v).is_integer() else v for side, v in values.items()} for key, values in out.items()}


def break_lines(state: State) -> dict[str, dict[str, float]]:
    """Lines drawn across a chart: Olympia's break line per side (once the battle has begun)."""
    if state.get("system") != "olympia":
        return {}
    lines = {side: info.get("threshold2", 0) / 2 for side, info in state.get("sides", {}).items()}
    return {"value": lines} if any(lines.values()) else {}


def _gear(item: Any) -> str:
    if not isinstance(item, Mapping):
        return "—"
    return f"{item.get('name')} +{item.get('bonus')}"


def combatant_rows(state: State, public: bool = False) -> list[dict[str, Any]]:
    """Each combatant's values as a report prints them: ``[{id, name, side, values: {label: text}}]``."""
    system_id = str(state.get("system"))
    shown = _public_combatants(state) if public and system_id in ("eclipse-phase", "adnd") else None
    rows = []
    for cid, c in state.get("combatants", {}).items():
        values: dict[str, str] = {}
        if system_id == "phantoms-bane":
            values["Health"] = f"{c.get('health')}/{c.get('health_max')}"
            values["Offence"] = f"{c.get('offence')}/{c.get('offence_max')}"
            values["Defence"] = f"{c.get('defence')}/{c.get('defence_max')}"
            values["Weapon"] = _gear(c.get("weapon"))
            values["Armour"] = _gear(c.get("armour"))
            values["Status"] = "defeated" if c.get("defeated") else "escaped" if c.get("escaped") else "standing"
        elif system_id == "eclipse-phase":
            seen = shown.get(cid, {}) if shown is not None else c
            if "damage" in seen:
                values["Damage"] = f"{seen.get('damage')}/{seen.get('durability', c.get('durability'))}"
            else:
                health = seen.get("health")
                values["Health"] = str(health.get("label")) if isinstance(health, Mapping) else "—"
            values["Wounds"] = str(seen.get("wounds", 0))
            values["Conditions"] = ", ".join(seen.get("conditions") or []) or "—"
            if shown is None:
                pools = c.get("pools") or {}
                values["Pools"] = ", ".join(f"{k} {v}" for k, v in pools.items()) or "—"
            values["Status"] = str(seen.get("state", "ok"))
        elif system_id == "adnd":
            if shown is None:
                values["Hit points"] = f"{c.get('hp')}/{c.get('hp_max')}"
                values["Status"] = str(c.get("condition"))
            else:
                seen = shown.get(cid, {})
                values["Status"] = str(seen.get("status") or seen.get("condition") or c.get("condition"))
        elif system_id == "battles-and-balances":
            values["Wounds"] = f"{c.get('wounds')}/{c.get('health')}"
            values["Action points"] = f"{c.get('ap')}/{c.get('ap_max')}"
            if c.get("armour"):
                values["Armour wear"] = f"{c.get('armour_wear')}" + (" (broken)" if c.get("armour_broken") else "")
            effects = c.get("effects") or {}
            values["Effects"] = ", ".join(str(k) for k in effects) or "—"
            values["Status"] = "defeated" if c.get("defeated") else "in play"
        elif system_id == "olympia":
            troops = c.get("troops") or {}
            values["Men"] = f"{sum(troops.values()):,}"
            values["Units"] = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in troops.items()) or "—"
            values["Noble health"] = str(c.get("health"))
            values["Status"] = str(c.get("state"))
        rows.append({"id": cid, "name": c.get("name", cid), "side": c.get("side"), "values": values})
    return rows


def is_key_moment(system_id: str, event: Event) -> bool:
    """Whether an event is worth retelling in a report: defeats, breaks, criticals, morale failures."""
    kind = str(event.get("type", ""))
    text = str(event.get("text", "")).lower()
    if kind in KEY_TYPES or kind in EXTRA_KEY_TYPES.get(system_id, ()):
        return True
    if kind == "morale.checked":
        return any(word in text for word in MORALE_FAILURES)
    if kind.startswith("check.") and "knocked" not in text:
        return False
    return any(word in text for word in KEY_WORDS)
