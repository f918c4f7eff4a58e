"""Phantom's Bane: a one-on-one duel fought in combat turns.

Each turn both combatants secretly pick one of four options -- press, attack, defend or run
away. When both have picked, the turn is resolved: a run-away attempt first, then the four
combat dice (offence and defence for side A, then for side B), damage, penetrations and counters
with their half-dice, wear on armour and weapons, and finally weakening.

The state is a plain JSON dict. The lineup is exactly two combatants, one on side ``"A"`` and
one on side ``"B"``. Dice are drawn in the order of ruling 5: run-away rolls (runner first),
then offence A, defence A, offence B, defence B, then half-dice (penetrations before counters,
side A before side B). A computer-controlled combatant picks its option at the start of each
turn from what its own side can see, drawing one 1-100 number from ``dice.derive("computer")``
(with scripted dice that number is simply the next face, taken when the turn starts).

The first turn of the rule text's example (Jharek against the Wild Monster, both attacking):

>>> from rules.core import Viewer
>>> from rules.dice import ScriptedDice
>>> pb = PhantomsBane()
>>> presets = {p["name"]: p for p in pb.presets()}
>>> lineup = [{**presets["Jharek"], "id": "j", "side": "A"},
...           {**presets["Wild Monster"], "id": "m", "side": "B"}]
>>> state, _ = pb.setup(lineup, {}, ScriptedDice([]))
>>> state, _ = pb.apply(state, {"type": "choose", "combatant": "j", "option": "attack"},
...                     Viewer.gm(), ScriptedDice([]))
>>> state, events = pb.apply(state, {"type": "choose", "combatant": "m", "option": "attack"},
...                          Viewer.gm(), ScriptedDice([1, 3, 5, 6, 1]))
>>> j = state["combatants"]["j"]
>>> (j["health"], j["health_max"], j["weapon"]["bonus"], state["turn"])
(5, 7, 2, 2)
>>> [e["type"] for e in events if e["type"] in ("damage.dealt", "counter.scored", "weapon.worn")]
['damage.dealt', 'counter.scored', 'weapon.worn']
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from . import contract, read
from .carry_over import carried_fields, carry_over_help
from .contract import RuleSystem
from .core import (
    GM_ONLY,
    HIDDEN,
    Event,
    Field,
    State,
    Viewer,
    clone,
    event,
    owner_visibility,
    require,
)
from .dice import DiceSource, Roll
from .errors import IllegalDeclaration, InvalidDeclaration
from .physical import rolled_by

OPTIONS: tuple[str, ...] = ("press", "attack", "defend", "run_away")
OPTION_LABELS: dict[str, str] = {
    "press": "Press",
    "attack": "Attack",
    "defend": "Defend",
    "run_away": "Run Away",
}
OPTION_HELP: dict[str, str] = {
    "press": "Hit harder this turn (+half your Offence) but guard worse (-half your Defence).",
    "attack": "A plain exchange of blows with no bonus and no penalty.",
    "defend": "Guard better this turn (+half your Defence) but hit softer (-half your Offence).",
    "run_away": "Try to get out of the fight. If it fails you must attack this turn.",
}
#: what each option is called in running text ("Jharek presses")
OPTION_VERBS: dict[str, str] = {
    "press": "presses",
    "attack": "attacks",
    "defend": "defends",
    "run_away": "tries to run away",
}
TEMPERAMENTS: tuple[tuple[str, str], ...] = (
    ("cowardly", "Cowardly: defends readily and runs when the fight turns against it"),
    ("steady", "Steady: weighs the odds and runs only when clearly losing"),
    ("reckless", "Reckless: loves to press and almost never runs"),
)
STAT_NAMES: tuple[str, ...] = ("offence", "defence", "health", "skill")

#: the text sets no maximum; the forms allow at least these (ruling 8): creatures with far more Health
#: than a hero are ordinary, and a weapon or armour bonus is capped by its attribute anyway
MAX_ATTRIBUTE = 99
MAX_HEALTH = 999

#: the combatant keys every viewer may see: stat blocks are open in this system; pending choices and
#: the computer's temperament are not
_VISIBLE_KEYS: tuple[str, ...] = (
    "name",
    "side",
    "seat",
    "controller",
    "offence",
    "offence_max",
    "defence",
    "defence_max",
    "health",
    "health_max",
    "skill",
    "skill_max",
    "destroyed",
    "defeated",
    "escaped",
)


def half(value: int) -> int:
    """The Press/Defend bonus or penalty: half of a current attribute, rounded down.

    >>> half(5), half(8), half(7), half(0)
    (2, 4, 3, 0)
    """
    return max(value, 0) // 2


def capped(bonus: int, attribute: int) -> int:
    """A weapon or armour bonus limited by the current attribute it adds to (never below 0).

    >>> capped(5, 4), capped(1, 6), capped(3, 0)
    (4, 1, 0)
    """
    return max(0, min(bonus, attribute))


def _gear_bonus(item: Mapping[str, Any] | None) -> int:
    return int(item["bonus"]) if item else 0


def _gear_label(item: Mapping[str, Any] | None, attribute: int) -> str:
    """``"+4/5 (Leather Armour)"`` when capped, ``"+2 (Hand Axe)"`` otherwise, ``"none"`` when empty."""
    if not item:
        return "none"
    effective = capped(item["bonus"], attribute)
    shown = f"+{effective}" if effective == item["bonus"] else f"+{effective}/{item['bonus']}"
    return f"{shown} ({item['name']})"


def _two_dice_distribution() -> dict[int, int]:
    counts: dict[int, int] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            counts[a + b] = counts.get(a + b, 0) + 1
    return counts


_2D6 = _two_dice_distribution()


def escape_chance(disengagement: int, engagement: int) -> float:
    """Chance that 2d6 + ``disengagement`` beats 2d6 + ``engagement`` (ties fail).

    >>> escape_chance(9, 10) < 0.5 < escape_chance(12, 10)
    True
    """
    wins = 0
    for a, ca in _2D6.items():
        for b, cb in _2D6.items():
            if a + disengagement > b + engagement:
                wins += ca * cb
    return wins / 1296


def expected_hit(offence_base: int, defence_base: int) -> float:
    """Average ordinary damage of one d6 + ``offence_base`` against one d6 + ``defence_base``.

    >>> expected_hit(5, 5) > 0, expected_hit(0, 20)
    (True, 0.0)
    """
    total = 0
    for a in range(1, 7):
        for b in range(1, 7):
            total += max(0, offence_base + a - defence_base - b)
    return total / 36


class PhantomsBane(RuleSystem):
    """Phantom's Bane: secret simultaneous choices, one duel, weakening over time."""

    id: ClassVar[str] = "phantoms-bane"
    name: ClassVar[str] = "Phantom's Bane"
    summary: ClassVar[str] = (
        "A one-on-one duel. Each turn both sides secretly press, attack, defend or run away; "
        "four dice settle the exchange, and a long fight wears both down."
    )
    min_combatants: ClassVar[int] = 2
    max_combatants: ClassVar[int] = 2
    sides: ClassVar[tuple[str, ...]] = ("A", "B")

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        return [
            Field(
                "offence", "Offence", "int", 4, 0, MAX_ATTRIBUTE, help="Added to the offence die.",
                group="Attributes"
            ),
            Field(
                "defence", "Defence", "int", 4, 0, MAX_ATTRIBUTE, help="Added to the defence die.",
                group="Attributes"
            ),
            Field(
                "health",
                "Health",
                "int",
                6,
                1,
                MAX_HEALTH,
                help="Damage comes off Health; at 0 or less the combatant is defeated. "
                "Once the fight has lasted more turns than the current Health, the combatant weakens.",
                group="Attributes",
            ),
            Field(
                "skill",
                "Skill",
                "int",
                3,
                0,
                MAX_ATTRIBUTE,
                help="Counts only when someone tries to run away.",
                group="Attributes",
            ),
            Field(
                "weapon_name", "Weapon", "text", "Fists", 0, 30, help="Leave empty for none.", group="Weapon"
            ),
            Field(
                "weapon_bonus",
                "Weapon bonus",
                "int",
                0,
                0,
                MAX_ATTRIBUTE,
                help="Added to offence, but never more than the current Offence.",
                group="Weapon",
            ),
            Field(
                "weapon_natural",
                "Natural weapon",
                "bool",
                True,
                help="Claws, fists, teeth: worn down to +0 by counters they stay; a carried weapon worn down to +0 breaks.",
                group="Weapon",
            ),
            Field("armour_name", "Armour", "text", "", 0, 30, help="Leave empty for none.", group="Armour"),
            Field(
                "armour_bonus",
                "Armour bonus",
                "int",
                0,
                0,
                MAX_ATTRIBUTE,
                help="Added to defence, but never more than the current Defence.",
                group="Armour",
            ),
            Field(
                "armour_natural",
                "Natural armour",
                "bool",
                False,
                help="Hide, fur, scales: worn down to +0 by penetrations they stay; worn armour worn down to +0 falls apart.",
                group="Armour",
            ),
            Field(
                "temperament",
                "Temperament",
                "choice",
                "steady",
                choices=TEMPERAMENTS,
                help="How the computer plays this combatant.",
                group="Computer",
            ),
        ] + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return [
            Field(
                "escape_impossible",
                "Running away cannot succeed",
                "bool",
                False,
                help="Hidden from the players: every attempt to run away fails (cornered, surrounded, "
                "cliff behind). The GM can switch it during the fight.",
            )
        ]

    def validate_options(self, data: Any) -> dict[str, Any]:
        data = dict(data or {}) if isinstance(data, Mapping) else data
        if isinstance(data, dict) and "escape_impossible" not in data and "escape_possible" in data:
            possible = Field("escape_possible", "Running away can succeed", "bool", True).clean(
                data["escape_possible"], "option "
            )
            data["escape_impossible"] = not possible
        return super().validate_options(data)

    def presets(self) -> list[dict[str, Any]]:
        return [
            {
                "name": "Jharek",
                "offence": 4,
                "defence": 5,
                "health": 7,
                "skill": 5,
                "weapon_name": "Hand Axe",
                "weapon_bonus": 3,
                "weapon_natural": False,
                "armour_name": "Leather Armour",
                "armour_bonus": 5,
                "armour_natural": False,
                "temperament": "steady",
            },
            {
                "name": "Wild Monster",
                "offence": 8,
                "defence": 7,
                "health": 2,
                "skill": 2,
                "weapon_name": "Claws",
                "weapon_bonus": 1,
                "weapon_natural": True,
                "armour_name": "Matted Fur",
                "armour_bonus": 1,
                "armour_natural": True,
                "temperament": "reckless",
            },
            {
                "name": "Orrin Thistledown",
                "offence": 5,
                "defence": 6,
                "health": 8,
                "skill": 4,
                "weapon_name": "Short Sword",
                "weapon_bonus": 3,
                "weapon_natural": False,
                "armour_name": "Chain Shirt",
                "armour_bonus": 4,
                "armour_natural": False,
                "temperament": "steady",
            },
            {
                "name": "Marsh Troll",
                "offence": 9,
                "defence": 4,
                "health": 10,
                "skill": 1,
                "weapon_name": "Knuckles",
                "weapon_bonus": 2,
                "weapon_natural": True,
                "armour_name": "Warty Hide",
                "armour_bonus": 2,
                "armour_natural": True,
                "temperament": "reckless",
            },
            {
                "name": "Wren the Cutpurse",
                "offence": 3,
                "defence": 4,
                "health": 5,
                "skill": 7,
                "weapon_name": "Dagger",
                "weapon_bonus": 2,
                "weapon_natural": False,
                "armour_name": "Padded Jerkin",
                "armour_bonus": 1,
                "armour_natural": False,
                "temperament": "cowardly",
            },
            {
                "name": "Ashen Hound",
                "offence": 6,
                "defence": 5,
                "health": 4,
                "skill": 6,
                "weapon_name": "Fangs",
                "weapon_bonus": 2,
                "weapon_natural": True,
                "armour_name": "Sooty Pelt",
                "armour_bonus": 1,
                "armour_natural": True,
                "temperament": "cowardly",
            },
        ]

    def help(self) -> list[dict[str, str]]:
        return [
            {
                "title": "A turn",
                "text": "Both sides secretly pick Press, Attack, Defend or Run Away. Nobody sees the other's "
                "pick until both have picked; you may change yours until then. Then the turn is settled "
                "all at once: there is no initiative.",
            },
            {
                "title": "Offence and defence totals",
                "text": "Each side rolls an offence die and a defence die. Offence total = die + Offence + "
                "weapon bonus; defence total = die + Defence + armour bonus. A weapon or armour bonus "
                "never counts for more than the current attribute it adds to. When one side's offence "
                "total is strictly above the other's defence total, the difference comes off the other's "
                "Health. Both sides can hurt each other in the same turn.",
            },
            {
                "title": "Press and Defend",
                "text": "Press adds half your current Offence (rounded down) to your offence and takes half "
                "your current Defence off your defence, for this turn only. Defend does the opposite. "
                "The gear caps are worked out before these changes.",
            },
            {
                "title": "Penetrations and counters",
                "text": "An offence die of 6 against the foe's defence die of 1 is a penetration: the foe "
                "takes an extra 1-3 damage and its armour bonus drops by the same amount. A defence die "
                "of 6 against the foe's offence die of 1 is a counter: the foe takes an extra 1-3 damage "
                "and its weapon bonus drops by the same amount. A presser's penetration and a defender's "
                "counter roll two 1-3 dice instead of one; nothing else is doubled. Carried weapons and "
                "worn armour at +0 are destroyed; natural ones stay at +0.",
            },
            {
                "title": "Running away",
                "text": "Run Away is settled before the blows. If both run, or one runs while the other "
                "defends, the runner gets away. Against Press or Attack the runner rolls 2d6 + Defence + "
                "Skill against the foe's 2d6 + Offence + Skill (no gear, no Press/Defend changes); the "
                "runner needs a strictly higher total. A runner who fails must simply attack this turn.",
            },
            {
                "title": "When there is no way out",
                "text": "The GM may decide that running cannot succeed (a battle option the GM can switch "
                "at any time). The players are not told: every attempt to run then fails and the "
                "runner has to attack.",
            },
            {
                "title": "Weakening",
                "text": "At the end of each turn, if both are still standing, each combatant whose current "
                "Health is lower than the number of turns fought so far weakens: Defence drops by 1; "
                "at Defence 0 Offence drops instead; at both 0 Health drops, which can kill. Values are "
                "shown as current/maximum, such as 5/7.",
            },
            {
                "title": "The end",
                "text": "A combatant at Health 0 or less is defeated. If both fall in the same turn the "
                "duel is a draw. A successful escape also ends it.",
            },
            {
                "title": "Computer-controlled foes",
                "text": "A computer foe picks at the start of each turn from what its side can see (never "
                "your pick). Reckless foes like to press, cowardly ones defend and flee when the fight "
                "turns against them, steady ones weigh the odds. When the computer plays both sides, "
                "the GM moves the duel on one turn at a time with Force resolution.",
            },
            {
                "title": "Dice order (for physical dice)",
                "text": "Run-away rolls (runner first), then offence A, defence A, offence B, defence B, "
                "then the 1-3 dice: penetrations before counters, side A before side B.",
            },
        ] + carry_over_help(self.id)

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        cleaned = super().validate_lineup(lineup)
        sides = sorted(c["side"] for c in cleaned)
        if len(cleaned) != 2 or sides != ["A", "B"]:
            raise InvalidDeclaration(
                "Phantom's Bane is a duel: the lineup needs exactly one combatant on side A and one on side B"
            )
        return cleaned

    # --- setting up --------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        opts = self.validate_options(options)
        entries.sort(key=lambda c: c["side"])
        combatants: dict[str, Any] = {}
        for entry in entries:
            combatants[entry["id"]] = _new_combatant(entry)
        order = [c["id"] for c in entries]
        state: State = {
            "system": self.id,
            "status": "active",
            "turn": 1,
            "order": order,
            "options": opts,
            "escape_possible": not opts["escape_impossible"],
            "combatants": combatants,
            "choices": {cid: None for cid in order},
            "chosen_by": {cid: None for cid in order},
            "last_turn": None,
            "outcome": None,
        }
        a, b = (combatants[cid]["name"] for cid in order)
        events = [event("battle.started", f"{a} faces {b} in a duel.", combatants=order)]
        events += _start_turn(state, dice)
        return state, events

    # --- declarations ------------------------------------------------------------------------
    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        handler = self.handler(kind)
        if handler is None:
            *kinds, last = self.declarations
            raise InvalidDeclaration(f"unknown declaration type {kind!r} (expected {', '.join(kinds)} or {last})")
        new = clone(state)
        if new.get("status") != "active":
            raise IllegalDeclaration("the duel is not under way")
        result: tuple[State, list[Event]] = handler(new, declaration, dice)
        return result

    #: both sides choose in secret at once; a turn resolves only once each side's choice is in
    @contract.declaration("choose", simultaneous=True)
    def _do_choose(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        return _choose(new, declaration, dice)

    @contract.declaration("force_resolve", by="gm")
    def _do_force_resolve(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        events: list[Event] = []
        for cid in new["order"]:
            if new["choices"][cid] is None:
                events += _computer_pick(new, cid, dice, forced=True)
        return new, events + _resolve_and_continue(new, dice)

    @contract.declaration("set_escape", by="gm")
    def _do_set_escape(self, new: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
        return new, _set_escape(new, declaration)

    # --- projections -------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        own = set(viewer.own_combatants(state))
        view = _project(state, own, gm=viewer.is_gm)
        view["legal"] = self._legal(state, viewer, own)
        return view

    def _legal(self, state: State, viewer: Viewer, own: set[str]) -> list[dict[str, Any]]:
        if state.get("status") != "active":
            return []
        legal: list[dict[str, Any]] = []
        actors = list(state["order"]) if viewer.is_gm else [cid for cid in state["order"] if cid in own]
        for cid in actors:
            combatant = state["combatants"][cid]
            current = state["choices"].get(cid)
            for option in OPTIONS:
                legal.append(
                    {
                        "type": "choose",
                        "combatant": cid,
                        "option": option,
                        "label": OPTION_LABELS[option],
                        "help": OPTION_HELP[option],
                        "name": combatant["name"],
                        "controller": combatant["controller"],
                        "selected": current == option and _may_see_choice(state, cid, own, viewer.is_gm),
                    }
                )
        if viewer.is_gm:
            missing = [
                state["combatants"][cid]["name"] for cid in state["order"] if not state["choices"][cid]
            ]
            legal.append(
                {
                    "type": "force_resolve",
                    "label": "Force resolution",
                    "help": "Settle the turn now; the computer picks for "
                    + (" and ".join(missing) if missing else "nobody")
                    + ".",
                }
            )
            possible = bool(state.get("escape_possible", True))
            legal.append(
                {
                    "type": "set_escape",
                    "possible": not possible,
                    "label": "Block escape" if possible else "Allow escape",
                    "help": "Running away is currently "
                    + ("possible." if possible else "impossible (hidden from the players)."),
                }
            )
        return legal

    def assign(
        self, state: State, combatant_id: str, controller: str, seat: str | None, dice: DiceSource | None = None
    ) -> tuple[State, list[Event]]:
        """Hand a combatant over; one given to the computer mid-turn chooses at once."""
        new, events = super().assign(state, combatant_id, controller, seat, dice)
        if (
            dice is not None
            and controller == "computer"
            and new.get("status") == "active"
            and new["choices"].get(combatant_id) is None
        ):
            events += _computer_pick(new, combatant_id, dice)
            if all(new["choices"][c] is not None for c in new["order"]):
                events += _resolve_and_continue(new, dice)
        return new, events

    def is_checkpoint(self, state: State) -> bool:
        """True at the start of a turn, before any choice other than the computer's."""
        if state.get("status") != "active":
            return False
        return all(by in (None, "computer") for by in state.get("chosen_by", {}).values())


# --- building blocks (module level so they stay pure and testable) --------------------------------


def _gear(name: str, bonus: int, natural: bool) -> dict[str, Any] | None:
    if not name:
        return None
    return {"name": name, "bonus": bonus, "max_bonus": bonus, "natural": bool(natural)}


def _new_combatant(entry: Mapping[str, Any]) -> dict[str, Any]:
    combatant: dict[str, Any] = {
        "name": entry["name"],
        "side": entry["side"],
        "seat": entry["seat"],
        "controller": entry["controller"],
        "temperament": entry["temperament"],
    }
    for stat in STAT_NAMES:
        combatant[stat] = entry[stat]
        # a value carried from an earlier fight may sit below its full one (rules/carry_over.py)
        combatant[f"{stat}_max"] = max(entry[stat], entry.get(f"{stat}_max") or 0)
    combatant["weapon"] = _gear(entry["weapon_name"], entry["weapon_bonus"], entry["weapon_natural"])
    combatant["armour"] = _gear(entry["armour_name"], entry["armour_bonus"], entry["armour_natural"])
    combatant["destroyed"] = []
    combatant["defeated"] = False
    combatant["escaped"] = False
    return combatant


def _other(state: Mapping[str, Any], cid: str) -> str:
    a, b = state["order"]
    return b if cid == a else a


def _may_see_choice(state: Mapping[str, Any], cid: str, own: set[str], gm: bool) -> bool:
    """A pending choice shows only to whoever made it: its player, or the GM for a GM-played combatant.

    The GM's screen is shared with the table, so it shows that a player or the computer has chosen,
    never what, until the turn resolves.
    """
    if cid in own:
        return True
    return gm and state["combatants"][cid]["controller"] == "gm"


def _project(state: Mapping[str, Any], own: set[str], gm: bool) -> dict[str, Any]:
    """What a viewer sees: everything public, plus the pending choices of ``own`` (all for the GM).

    The view shares nested values (gear, the last turn, the outcome) with the state instead of
    copying them: a state is never changed once made (``apply`` works on a copy), and a view is only
    read and sent. It is computed for every viewer after every declaration, so copies would cost."""
    combatants: dict[str, Any] = {}
    for cid in state["order"]:
        c = state["combatants"][cid]
        entry = {key: c[key] for key in _VISIBLE_KEYS if key in c}
        entry["id"] = cid
        for slot, stat in (("weapon", "offence"), ("armour", "defence")):
            item = c.get(slot)
            entry[slot] = (
                {**item, "effective": capped(item["bonus"], c[stat])} if item else None
            )
            entry[f"{slot}_label"] = _gear_label(item, c[stat])
        entry["has_chosen"] = state["choices"].get(cid) is not None
        entry["mine"] = cid in own
        if _may_see_choice(state, cid, own, gm):
            entry["choice"] = state["choices"].get(cid)
        if gm or cid in own:
            entry["temperament"] = c.get("temperament", "steady")
        combatants[cid] = entry
    view: dict[str, Any] = {
        "system": "phantoms-bane",
        "status": state.get("status"),
        "turn": state.get("turn"),
        "order": list(state["order"]),
        "combatants": combatants,
        "mine": [cid for cid in state["order"] if cid in own],
        "waiting_for": [
            cid
            for cid in state["order"]
            if state["choices"].get(cid) is None and state.get("status") == "active"
        ],
        "last_turn": state.get("last_turn"),
        "outcome": state.get("outcome"),
        "options": {"labels": dict(OPTION_LABELS)},
    }
    if gm:
        view["escape_possible"] = bool(state.get("escape_possible", True))
        view["chosen_by"] = dict(state.get("chosen_by", {}))
    return view


def _set_escape(state: State, declaration: Mapping[str, Any]) -> list[Event]:
    possible = require(declaration, "possible", bool, "possible (true or false)")
    state["escape_possible"] = possible
    text = (
        "The GM allows running away again." if possible else "The GM rules that running away cannot succeed."
    )
    return [event("escape.ruled", text, visibility=GM_ONLY, possible=possible)]


def _choose(state: State, declaration: Mapping[str, Any], dice: DiceSource) -> tuple[State, list[Event]]:
    cid = read.combatant(declaration, "combatant", state)
    option = declaration.get("option")
    if option not in OPTIONS:
        raise InvalidDeclaration(f"option must be one of {', '.join(OPTIONS)} (got {option!r})")
    combatant = state["combatants"][cid]
    changed = state["choices"][cid] is not None
    state["choices"][cid] = option
    state["chosen_by"][cid] = "declared"
    name = combatant["name"]
    events = [
        event("choice.made", f"{name} has chosen.", combatant=cid, changed=changed),
        event(
            "choice.made",
            f"{name} will {OPTION_LABELS[option].lower()} this turn" + (" (changed)." if changed else "."),
            visibility=owner_visibility(cid) if combatant["controller"] == "seat" else GM_ONLY,
            combatant=cid,
            option=option,
            changed=changed,
        ),
    ]
    other = _other(state, cid)
    if state["choices"][other] is None and state["combatants"][other]["controller"] == "computer":
        events += _computer_pick(state, other, dice)
    if all(state["choices"][c] is not None for c in state["order"]):
        events += _resolve_and_continue(state, dice)
    return state, events


def _start_turn(state: State, dice: DiceSource) -> list[Event]:
    state["choices"] = {cid: None for cid in state["order"]}
    state["chosen_by"] = {cid: None for cid in state["order"]}
    turn = state["turn"]
    events = [event("turn.started", f"Turn {turn} begins: both sides choose in secret.", turn=turn)]
    for cid in state["order"]:
        if state["combatants"][cid]["controller"] == "computer":
            events += _computer_pick(state, cid, dice)
    return events


# --- the computer opponent -----------------------------------------------------------------------


def computer_scores(view: Mapping[str, Any], cid: str) -> dict[str, float]:
    """How much the computer likes each option, worked out from one side's projection only.

    >>> pb = PhantomsBane()
    >>> p = {x["name"]: x for x in pb.presets()}
    >>> lineup = [{**p["Jharek"], "id": "j", "side": "A"},
    ...           {**p["Marsh Troll"], "id": "t", "side": "B", "controller": "computer"}]
    >>> from rules.dice import ScriptedDice
    >>> state, _ = pb.setup(lineup, {}, ScriptedDice([50]))
    >>> scores = computer_scores(_project(state, {"t"}, gm=False), "t")
    >>> max(scores, key=scores.get)
    'press'
    """
    me = view["combatants"][cid]
    foe_id = next(x for x in view["order"] if x != cid)
    foe = view["combatants"][foe_id]

    def gear(c: Mapping[str, Any], slot: str) -> int:
        item = c.get(slot)
        return int(item["effective"]) if item else 0

    def bases(c: Mapping[str, Any], option: str) -> tuple[int, int]:
        off = c["offence"] + gear(c, "weapon")
        dfc = c["defence"] + gear(c, "armour")
        if option == "press":
            off, dfc = off + half(c["offence"]), dfc - half(c["defence"])
        elif option == "defend":
            off, dfc = off - half(c["offence"]), dfc + half(c["defence"])
        return off, dfc

    temperament = me.get("temperament", "steady")
    foe_off, foe_def = bases(foe, "attack")
    my_health = max(me["health"], 1)
    foe_health = max(foe["health"], 1)
    caution = {"cowardly": 1.6, "steady": 1.0, "reckless": 0.5}.get(temperament, 1.0)
    scores: dict[str, float] = {}
    for option in ("press", "attack", "defend"):
        off, dfc = bases(me, option)
        dealt = expected_hit(off, foe_def)
        taken = expected_hit(foe_off, dfc)
        kill = 1.0 if dealt >= foe["health"] else 0.0
        scores[option] = dealt / foe_health + 0.3 * kill - caution * taken / my_health

    plain_off, plain_def = bases(me, "attack")
    dealt_plain = expected_hit(plain_off, foe_def)
    taken_plain = expected_hit(foe_off, plain_def)
    my_turns = me["health"] / max(taken_plain, 0.05)
    foe_turns = foe["health"] / max(dealt_plain, 0.05)
    losing = my_turns < foe_turns
    chance = escape_chance(me["defence"] + me["skill"], foe["offence"] + foe["skill"])
    low = me["health"] * 2 <= me["health_max"]
    if temperament == "reckless":
        # goes all out, the more so when the fight turns against it
        scores["press"] += 0.35 + (1.5 if losing else 0.0)
    elif temperament == "cowardly":
        scores["defend"] += 0.15
    if temperament == "cowardly":
        run = chance * (1.0 + (0.6 if low else 0.0)) if low or (losing and my_turns < 2) else -0.5
    elif temperament == "reckless":
        run = -1.0  # a reckless foe never flees
    else:
        run = chance * 0.8 if losing and (low or my_turns < 1.5) else -0.5
    scores["run_away"] = run
    return {k: round(v, 4) for k, v in scores.items()}


def _computer_pick(state: State, cid: str, dice: DiceSource, forced: bool = False) -> list[Event]:
    """Let the computer choose for ``cid`` from its own side's view; one 1-100 roll breaks habits."""
    view = _project(state, {cid}, gm=False)
    scores = computer_scores(view, cid)
    ranked = sorted(OPTIONS, key=lambda o: (-scores[o], OPTIONS.index(o)))
    roll = dice.derive("computer").randint(1, 100, f"{state['combatants'][cid]['name']} computer choice")
    face = roll.total
    # mostly the best option, sometimes the second, rarely the third
    pick = ranked[0] if face <= 70 else ranked[1] if face <= 92 else ranked[2]
    if pick == "run_away" and scores["run_away"] < 0:
        pick = ranked[0] if ranked[0] != "run_away" else ranked[1]
    state["choices"][cid] = pick
    state["chosen_by"][cid] = "computer"
    name = state["combatants"][cid]["name"]
    why = "for the GM's forced resolution" if forced else "for the computer"
    return [
        event("choice.made", f"{name} has chosen.", combatant=cid, changed=False),
        event(
            "choice.made",
            f"The computer picks {OPTION_LABELS[pick]} for {name} ({why}).",
            visibility={"computer": HIDDEN, "seat": owner_visibility(cid)}.get(
                state["combatants"][cid]["controller"], GM_ONLY
            ),
            rolls=[roll],
            combatant=cid,
            option=pick,
            scores=scores,
            by="computer",
        ),
    ]


# --- resolving a turn ----------------------------------------------------------------------------


def _resolve_and_continue(state: State, dice: DiceSource) -> list[Event]:
    events = _resolve_turn(state, dice)
    if state["status"] == "active":
        state["turn"] += 1
        events += _start_turn(state, dice)
    return events


def _resolve_turn(state: State, dice: DiceSource) -> list[Event]:
    """Settle the current turn from both recorded choices (mutates ``state``)."""
    a, b = state["order"]
    cs = state["combatants"]
    names = {cid: cs[cid]["name"] for cid in (a, b)}
    chosen = {cid: state["choices"][cid] for cid in (a, b)}
    turn = state["turn"]
    events: list[Event] = []
    breakdown: dict[str, Any] = {
        "turn": turn,
        "options": dict(chosen),
        "effective": dict(chosen),
        "escape": None,
        "dice": None,
        "totals": None,
        "damage": {cid: {"hits": 0, "penetration": 0, "counter": 0, "total": 0} for cid in (a, b)},
        "penetrations": [],
        "counters": [],
        "wear": [],
        "destroyed": [],
        "weakening": [],
        "defeated": [],
        "health": {},
        "text": "",
    }

    # 1. running away
    runners = [cid for cid in (a, b) if chosen[cid] == "run_away"]
    if runners:
        escaped, escape_events, escape_info = _resolve_escape(state, runners, chosen, dice)
        events += escape_events
        breakdown["escape"] = escape_info
        if escaped:
            for cid in escaped:
                cs[cid]["escaped"] = True
            who = " and ".join(names[cid] for cid in escaped)
            breakdown["text"] = f"{who} got away."
            breakdown["health"] = {cid: cs[cid]["health"] for cid in (a, b)}
            events.append(
                event(
                    "turn.resolved",
                    f"Turn {turn}: {who} got away; no blows were struck.",
                    turn=turn,
                    options=dict(chosen),
                    escaped=escaped,
                )
            )
            state["last_turn"] = breakdown
            _end_battle(state, events, escaped=escaped)
            return events
        for cid in runners:
            breakdown["effective"][cid] = "attack"
    effective = breakdown["effective"]

    # 2. the four combat dice, offence A, defence A, offence B, defence B
    rolls: dict[str, dict[str, Roll]] = {}
    for cid in (a, b):
        rolls[cid] = {
            "offence": rolled_by(dice, cid).roll(1, 6, f"{names[cid]} offence die"),
            "defence": rolled_by(dice, cid).roll(1, 6, f"{names[cid]} defence die"),
        }
    faces = {cid: {k: r.total for k, r in rolls[cid].items()} for cid in (a, b)}
    totals: dict[str, Any] = {}
    for cid in (a, b):
        c = cs[cid]
        option = effective[cid]
        off_mod = (
            half(c["offence"]) if option == "press" else -half(c["offence"]) if option == "defend" else 0
        )
        def_mod = (
            -half(c["defence"]) if option == "press" else half(c["defence"]) if option == "defend" else 0
        )
        weapon = capped(_gear_bonus(c["weapon"]), c["offence"])
        armour = capped(_gear_bonus(c["armour"]), c["defence"])
        totals[cid] = {
            "offence": {
                "die": faces[cid]["offence"],
                "attribute": c["offence"],
                "modifier": off_mod,
                "gear": weapon,
                "total": faces[cid]["offence"] + c["offence"] + off_mod + weapon,
            },
            "defence": {
                "die": faces[cid]["defence"],
                "attribute": c["defence"],
                "modifier": def_mod,
                "gear": armour,
                "total": faces[cid]["defence"] + c["defence"] + def_mod + armour,
            },
        }
    breakdown["dice"] = faces
    breakdown["dice_order"] = [
        faces[a]["offence"],
        faces[a]["defence"],
        faces[b]["offence"],
        faces[b]["defence"],
    ]
    breakdown["totals"] = totals

    def describe(cid: str) -> str:
        t = totals[cid]
        return f"{names[cid]} ({OPTION_LABELS[effective[cid]].lower()}) offence {t['offence']['total']}, defence {t['defence']['total']}"

    events.append(
        event(
            "turn.resolved",
            f"Turn {turn}: dice {' '.join(str(f) for f in breakdown['dice_order'])}. {describe(a)}; {describe(b)}.",
            rolls=[rolls[a]["offence"], rolls[a]["defence"], rolls[b]["offence"], rolls[b]["defence"]],
            turn=turn,
            options=dict(chosen),
            effective=dict(effective),
            dice=breakdown["dice_order"],
            totals=clone(totals),
        )
    )

    # 3. ordinary damage
    for attacker in (a, b):
        target = _other(state, attacker)
        margin = totals[attacker]["offence"]["total"] - totals[target]["defence"]["total"]
        if margin > 0:
            breakdown["damage"][target]["hits"] = margin
            events.append(
                event(
                    "damage.dealt",
                    f"{names[attacker]} wounds {names[target]} for {margin}.",
                    attacker=attacker,
                    target=target,
                    amount=margin,
                )
            )

    # 4. penetrations (A then B), then counters (A then B)
    # (kind, the scorer's die, the other's die, the option that doubles it, breakdown list, event, wording)
    extra_damage = (
        ("penetration", "offence", "defence", "press", "penetrations", "penetration.scored", "gets through {}'s guard", " while pressing"),
        ("counter", "defence", "offence", "defend", "counters", "counter.scored", "counters {}", " from a defensive stance"),
    )
    for kind, own_die, other_die, doubling, listing, event_type, wording, stance in extra_damage:
        for scorer in (a, b):
            target = _other(state, scorer)
            if faces[scorer][own_die] != 6 or faces[target][other_die] != 1:
                continue
            doubled = effective[scorer] == doubling
            half_dice = [rolled_by(dice, scorer).randint(1, 3, f"{names[scorer]} {kind} half-die") for _ in range(2 if doubled else 1)]
            amount = sum(r.total for r in half_dice)
            breakdown["damage"][target][kind] += amount
            breakdown[listing].append(
                {"by": scorer, "on": target, "half_dice": [r.total for r in half_dice], "amount": amount, "doubled": doubled}
            )
            text = f"{names[scorer]} {wording.format(names[target])}{stance if doubled else ''}: {amount} extra damage."
            events.append(
                event(event_type, text, rolls=half_dice, attacker=scorer, target=target, amount=amount, doubled=doubled)
            )

    # 5. health, then wear on armour (penetrations) and weapons (counters)
    for cid in (a, b):
        dmg = breakdown["damage"][cid]
        dmg["total"] = dmg["hits"] + dmg["penetration"] + dmg["counter"]
        cs[cid]["health"] -= dmg["total"]
    for cid in (a, b):
        events += _wear(cs[cid], cid, "armour", breakdown["damage"][cid]["penetration"], turn, breakdown)
    for cid in (a, b):
        events += _wear(cs[cid], cid, "weapon", breakdown["damage"][cid]["counter"], turn, breakdown)

    # 6. defeat, or weakening when both still stand
    fallen = [cid for cid in (a, b) if cs[cid]["health"] <= 0]
    if not fallen:
        for cid in (a, b):
            events += _weaken(cs[cid], cid, turn, breakdown)
        fallen = [cid for cid in (a, b) if cs[cid]["health"] <= 0]
    for cid in fallen:
        cs[cid]["defeated"] = True
        breakdown["defeated"].append(cid)
        events.append(
            event(
                "combatant.defeated", f"{names[cid]} is defeated (Health {cs[cid]['health']}).", combatant=cid
            )
        )
    breakdown["health"] = {cid: cs[cid]["health"] for cid in (a, b)}
    breakdown["text"] = _summary(breakdown, names)
    state["last_turn"] = breakdown
    if fallen:
        _end_battle(state, events, defeated=fallen)
    return events


def _resolve_escape(
    state: State, runners: list[str], chosen: Mapping[str, str], dice: DiceSource
) -> tuple[list[str], list[Event], dict[str, Any]]:
    cs = state["combatants"]
    names = {cid: cs[cid]["name"] for cid in state["order"]}
    events: list[Event] = []
    info: dict[str, Any] = {
        "runners": list(runners),
        "automatic": False,
        "impossible": False,
        "rolls": {},
        "escaped": [],
    }
    for cid in runners:
        other = _other(state, cid)
        events.append(
            event(
                "escape.attempted",
                f"{names[cid]} tries to run away while {names[other]} {OPTION_VERBS[chosen[other]]}.",
                combatant=cid,
                other_option=chosen[other],
            )
        )
    if not state.get("escape_possible", True):
        info["impossible"] = True
        for cid in runners:
            events.append(
                event(
                    "escape.failed",
                    f"{names[cid]} finds no way out and must fight.",
                    combatant=cid,
                    impossible=True,
                )
            )
        return [], events, info
    runner = runners[0]
    other = _other(state, runner)
    if len(runners) == 2 or chosen[other] == "defend":
        info["automatic"] = True
        info["escaped"] = list(runners)
        for cid in runners:
            events.append(
                event("escape.succeeded", f"{names[cid]} gets away.", combatant=cid, automatic=True)
            )
        return list(runners), events, info
    r, o = cs[runner], cs[other]
    run_roll = rolled_by(dice, runner).roll(2, 6, f"{names[runner]} disengagement")
    hold_roll = rolled_by(dice, other).roll(2, 6, f"{names[other]} engagement")
    run_total = run_roll.total + r["defence"] + r["skill"]
    hold_total = hold_roll.total + o["offence"] + o["skill"]
    info["rolls"] = {
        runner: {
            "faces": list(run_roll.faces),
            "attribute": r["defence"],
            "skill": r["skill"],
            "total": run_total,
        },
        other: {
            "faces": list(hold_roll.faces),
            "attribute": o["offence"],
            "skill": o["skill"],
            "total": hold_total,
        },
    }
    detail = f"{names[runner]} {run_total} against {names[other]} {hold_total}"
    if run_total > hold_total:
        info["escaped"] = [runner]
        events.append(
            event(
                "escape.succeeded",
                f"{names[runner]} gets away ({detail}).",
                rolls=[run_roll, hold_roll],
                combatant=runner,
                automatic=False,
                disengagement=run_total,
                engagement=hold_total,
            )
        )
        return [runner], events, info
    events.append(
        event(
            "escape.failed",
            f"{names[runner]} cannot break away ({detail}) and must attack.",
            rolls=[run_roll, hold_roll],
            combatant=runner,
            impossible=False,
            disengagement=run_total,
            engagement=hold_total,
        )
    )
    return [], events, info


def _wear(
    c: dict[str, Any], cid: str, slot: str, amount: int, turn: int, breakdown: dict[str, Any]
) -> list[Event]:
    """Armour loses penetration damage, a weapon loses counter damage (from its real bonus, floor 0)."""
    item = c.get(slot)
    if not amount or not item or item["bonus"] <= 0:
        return []
    before = item["bonus"]
    item["bonus"] = max(0, before - amount)
    destroyed = item["bonus"] == 0 and not item["natural"]
    breakdown["wear"].append(
        {
            "combatant": cid,
            "item": slot,
            "name": item["name"],
            "before": before,
            "after": item["bonus"],
            "destroyed": destroyed,
        }
    )
    events = [
        event(
            f"{slot}.worn",
            f"{c['name']}'s {item['name']} drops from +{before} to +{item['bonus']}.",
            combatant=cid,
            item=item["name"],
            before=before,
            after=item["bonus"],
        )
    ]
    if destroyed:
        c[slot] = None
        c["destroyed"].append(
            {"item": slot, "name": item["name"], "max_bonus": item["max_bonus"], "turn": turn}
        )
        breakdown["destroyed"].append({"combatant": cid, "item": slot, "name": item["name"]})
        events.append(
            event(
                f"{slot}.destroyed",
                f"{c['name']}'s {item['name']} is destroyed.",
                combatant=cid,
                item=item["name"],
            )
        )
    return events


def _weaken(c: dict[str, Any], cid: str, turn: int, breakdown: dict[str, Any]) -> list[Event]:
    """At the end of a turn: if the turns so far outnumber current Health, lose Defence, else Offence, else Health."""
    if turn <= c["health"]:
        return []
    attribute = "defence" if c["defence"] > 0 else "offence" if c["offence"] > 0 else "health"
    before = c[attribute]
    c[attribute] = before - 1
    breakdown["weakening"].append(
        {"combatant": cid, "attribute": attribute, "before": before, "after": before - 1}
    )
    return [
        event(
            "combatant.weakened",
            f"{c['name']} tires: {attribute.capitalize()} falls from {before} to {before - 1}.",
            combatant=cid,
            attribute=attribute,
            before=before,
            after=before - 1,
        )
    ]


def _summary(breakdown: Mapping[str, Any], names: Mapping[str, str]) -> str:
    parts = []
    for cid, dmg in breakdown["damage"].items():
        if dmg["total"]:
            parts.append(f"{names[cid]} takes {dmg['total']}")
    if not parts:
        parts.append("nobody is hurt")
    for w in breakdown["weakening"]:
        parts.append(f"{names[w['combatant']]} weakens")
    return "; ".join(parts).capitalize() + "."


def _end_battle(
    state: State, events: list[Event], *, defeated: list[str] | None = None, escaped: list[str] | None = None
) -> None:
    cs = state["combatants"]
    state["status"] = "ended"
    state["choices"] = {cid: None for cid in state["order"]}
    outcome: dict[str, Any] = {
        "result": "",
        "winner": None,
        "winner_side": None,
        "defeated": list(defeated or []),
        "escaped": list(escaped or []),
        "turn": state["turn"],
        "text": "",
    }
    if escaped:
        outcome["result"] = "escape"
        who = " and ".join(cs[cid]["name"] for cid in escaped)
        outcome["text"] = f"{who} escaped; the duel is over with no winner."
    elif defeated and len(defeated) == 2:
        outcome["result"] = "draw"
        outcome["text"] = "Both combatants fell: the duel is a draw."
    elif defeated:
        winner = _other(state, defeated[0])
        outcome.update(result="victory", winner=winner, winner_side=cs[winner]["side"])
        outcome["text"] = f"{cs[winner]['name']} wins the duel."
    state["outcome"] = outcome
    events.append(event("battle.ended", outcome["text"], **{k: v for k, v in outcome.items() if k != "text"}))


__all__ = ["OPTIONS", "PhantomsBane", "capped", "computer_scores", "escape_chance", "expected_hit", "half"]
