"""Olympia mass battles: two armies of nobles and their men, fought phase by phase until one side breaks.

Each lineup entry is a *noble* with his men (troop counts per kind). The noble's ``behind`` value puts
him and all his men in the front row (0) or in a back row (1-9). A battle starts in a deployment
stage (``status == "setup"``) where the GM or a noble's player moves units between rows and each
side's leader sets its break point; the GM then declares ``begin`` and steps the fight with
``{"type": "step", "by": "phase" | "round" | "battle"}``.

Men are kept as counts per group (one group per kind and noble), and each phase draws all of its
random numbers in a few vectorised calls of ``dice.integers``. Nothing is approximated: every
attacker picks his own target uniformly among the valid target slots, hits are never redirected,
and the fallen leave only when the phase is over.

Order in which a phase uses the dice (what a test must script, side A's attacks before side B's;
in the special phase, first one key per special attack when there are several, the smallest
key going first, then each special attack's picks and rolls in that order). Units are taken
by row, then in lineup order; within a unit the noble comes first, then his troops in table order.

1. if the attacks of a side are capped: one key per eligible attacker (``0 .. 2**62-1``); the
   attackers with the smallest keys strike;
2. one target pick per attack (``0 .. T-1`` over the enemy's target slots: its men and nobles in
   unit order, a group split by the shelter with the sheltered men first, the structure last);
3. one hit roll per attack: a roll of ``1 .. d`` hits on ``a`` or less, where ``a : d`` is
   attack : (attack + defence) in lowest terms. The rolls come in batches of equal odds, the
   batches in the order of their first attack, each batch in attack order (attackers in unit
   order, each unit's noble first, then his troops in table order). A certain hit (defence 0) is
   not rolled;
4. after both sides: one wound roll (1-100) per noble who was hit, then the damage rolls (5-10)
   of the siege engines that struck a structure;
5. when the phase ends the battle with a winner and the prisoners option is on: one d100 per
   surviving noble of the loser, in lineup order (taken on the chance or less).

The combat value of a man is the higher of his attack and effective missile rating plus his
defence; a side breaks when its total falls to its threshold:

>>> combat_value(80, 0, 80) + 2 * combat_value(5, 0, 20)
210
>>> break_threshold(210, 50)
105
>>> Olympia().troop_value("knight")
180
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from . import contract, read
from .carry_over import carry_over_help
from .contract import RuleSystem
from .core import Event, Field, State, Viewer, event, require
from .dice import DiceSource
from .errors import IllegalDeclaration, InvalidDeclaration, NotPermitted
from .physical import rolled_by

# --- the troop table ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kind:
    """One kind of fighter with its ratings from the troop table."""

    key: str
    one: str
    many: str
    attack: int
    defence: int
    missile: int = 0
    mounted: bool = False
    bow: bool = False
    siege: bool = False
    pirate: bool = False

    def called(self, n: int) -> str:
        """The kind's name for ``n`` of them: "paladin" for one, "paladins" for any other count."""
        return self.one if n == 1 else self.many


KINDS: tuple[Kind, ...] = (
    Kind("peasant", "peasant", "peasants", 1, 1),
    Kind("postulant", "postulant", "postulants", 1, 1),
    Kind("worker", "worker", "workers", 1, 1),
    Kind("sailor", "sailor", "sailors", 1, 1),
    Kind("skirmisher", "skirmisher", "skirmishers", 3, 3),
    Kind("soldier", "soldier", "soldiers", 5, 5),
    Kind("ninja", "ninja", "ninjas", 5, 5),
    Kind("pirate", "pirate", "pirates", 10, 10, pirate=True),
    Kind("pikeman", "pikeman", "pikemen", 5, 20),
    Kind("fanatic", "fanatic", "fanatics", 10, 5),
    Kind("light_foot", "light foot", "light foot", 30, 30),
    Kind("heavy_foot", "heavy foot", "heavy foot", 60, 60),
    Kind("angel", "angel", "angels", 25, 100),
    Kind("cavalier", "cavalier", "cavaliers", 75, 75, mounted=True),
    Kind("knight", "knight", "knights", 90, 90, mounted=True),
    Kind("paladin", "paladin", "paladins", 180, 180, mounted=True),
    Kind("light_crossbowman", "light crossbowman", "light crossbowmen", 1, 1, 15),
    Kind("heavy_crossbowman", "heavy crossbowman", "heavy crossbowmen", 1, 1, 75),
    Kind("archer", "archer", "archers", 1, 1, 35, bow=True),
    Kind("horse_archer", "horse archer", "horse archers", 1, 20, 40, bow=True),
    Kind("elite_archer", "elite archer", "elite archers", 1, 1, 45, bow=True),
    # Not in the printed table: the text only says what their hits do to a structure. Their
    # fighting ratings are this project's choice (see the help).
    Kind("catapult", "catapult", "catapults", 10, 10, siege=True),
    Kind("battering_ram", "battering ram", "battering rams", 10, 10, siege=True),
)
KIND: dict[str, Kind] = {k.key: k for k in KINDS}
MAX_TROOPS = 1_000_000


@dataclass(frozen=True)
class StructureKind:
    key: str
    label: str
    defence: int
    shelters: int
    ship: bool = False


STRUCTURES: dict[str, StructureKind] = {
    s.key: s
    for s in (
        StructureKind("castle", "castle", 40, 500),
        StructureKind("tower", "tower", 20, 100),
        StructureKind("galley", "galley", 10, 50, ship=True),
        StructureKind("roundship", "roundship", 0, 50, ship=True),
        StructureKind("building", "other building", 0, 50),
    )
}
STRUCTURE_CHOICES = (("none", "none"),) + tuple((s.key, s.label) for s in STRUCTURES.values())
STRUCTURE_DESTROYED_AT = 100

TERRAINS = (
    ("plain", "open ground"),
    ("city", "city"),
    ("forest", "forest"),
    ("mountain", "mountain"),
    ("swamp", "swamp"),
    ("sea", "at sea"),
)
#: terrain defence multipliers in quarters (city x1.25 = 5/4, ...), used only with the option on
TERRAIN_QUARTERS = {"plain": 4, "city": 5, "forest": 6, "mountain": 8, "swamp": 3, "sea": 4}
WEATHERS = (("clear", "clear"), ("wind", "wind (missiles halved)"), ("rain", "rain (bows grounded)"))

PHASES = ("special", "missile", "melee")
PHASE_WORDS = {
    "volley": "opening volley",
    "special": "special attacks",
    "missile": "missile attacks",
    "melee": "melee",
}
KEY_HIGH = 2**62 - 1  # range of the random keys that choose who strikes when attacks are capped
PAIR_RECORDS = 48  # more (attacker group, target) pairs than this in one strike: records per kind instead
SMALL_PAIR = 40  # a pair of (attacker group, target) with at most this many rolls shows every face
REPORT_KEEP = 12  # phase reports kept in the state (the events hold them all)
#: The most men one side may bring (checked by the lineup validator): one phase of two armies this
#: big, in any mix, takes about a tenth of a second of CPU and about 100 MB on the project's 2-core
#: VM (see tests/benchmarks/bench_olympia.py), so no single command can hold up the server.
MAX_MEN_PER_SIDE = 1_000_000
MAX_SPECIALS = 10  # special attacks in one battle (each at most 100,000 attacks)
#: The work one step may do, in "man-phases" (see ``phase_work``): the phases of a step go on while
#: their work stays within this. A step always resolves at least one phase, so one phase of two
#: maximal armies is one command. It counts men, not seconds: a replay stops where the game did.
STEP_WORK_BUDGET = 2 * MAX_MEN_PER_SIDE
PHASE_BASE_WORK = 10_000  # the fixed cost of a phase (its bookkeeping and its event), in men
GROUP_WORK = 50  # the cost of each group of attackers or targets (a noble, one kind of his men), in men
FACES_KEPT_PHASES = 6  # a "to the end" step shows the single faces of only its last phases

SPECIAL_LIBRARY: dict[str, dict[str, Any]] = {
    "dragon_fire": {"name": "Dragon fire", "attacks": 20, "rating": 150, "reach": "any", "rounds": 0},
    "fireball": {"name": "Fireball spell", "attacks": 10, "rating": 100, "reach": "any", "rounds": 1},
    "arrow_storm": {"name": "Storm of arrows", "attacks": 60, "rating": 30, "reach": "front", "rounds": 1},
    "giant": {"name": "Rampaging giant", "attacks": 5, "rating": 200, "reach": "front", "rounds": 0},
}


def combat_value(attack: float, missile: float, defence: float) -> float:
    """Combat value of one man: the better of attack and missile, plus defence."""
    return max(attack, missile) + defence


def break_threshold(start_total: float, break_point: int) -> int:
    """The total at or below which a side breaks: start total x break point / 100, rounded down."""
    return math.floor(start_total * break_point / 100)


def _plural(n: int, kind: Kind) -> str:
    return f"{n:,} {kind.called(n)}"


def _num(value2: int) -> int | float:
    """A value kept in halves, as a plain number."""
    return value2 // 2 if value2 % 2 == 0 else value2 / 2


# --- internal per-phase structures -------------------------------------------------------------------


@dataclass
class Slot:
    """A group of interchangeable target men of one side, as seen at the start of a phase."""

    what: str  # "men", "noble" or "structure"
    unit: str | None
    kind: str | None
    count: int
    row: int
    sheltered: bool = False
    exposed: bool = False  # a noble who may be picked by missile and melee attacks
    start: int = 0  # first index in the side's canonical numbering of target men


@dataclass
class Attackers:
    """Groups of attackers striking together (one side in one phase, or one special attack)."""

    labels: list[str]
    kinds: list[str | None]  # troop kind key, "noble" or None for a special attack
    units: list[str | None]
    a4: list[int]  # attack (or missile) rating x4
    counts: list[int]


class Olympia(RuleSystem):
    """The Olympia battle procedure for large armies.

    A noble with two knights against a noble with two pikemen, one melee phase with scripted dice:

    >>> from rules.dice import ScriptedDice
    >>> olympia, gm = Olympia(), Viewer.gm()
    >>> lineup = [{"name": "Osswid", "side": "A", "knight": 2}, {"name": "Brennan", "side": "B", "pikeman": 2}]
    >>> state, _ = olympia.setup(lineup, {}, ScriptedDice([]))
    >>> state, _ = olympia.apply(state, {"type": "begin"}, gm, ScriptedDice([]))
    >>> picks_a, rolls_a = [0, 1, 0], [4, 9, 13]   # Osswid hits a pikeman, one knight hits, one misses
    >>> picks_b, rolls_b = [1, 1, 0], [8, 1, 2]    # Brennan and a pikeman both hit knight 1: he dies once
    >>> dice = ScriptedDice(picks_a + rolls_a + picks_b + rolls_b)
    >>> state, events = olympia.apply(state, {"type": "step", "by": "phase"}, gm, dice)
    >>> state["combatants"]["c1"]["troops"], state["combatants"]["c2"]["troops"]
    ({'knight': 1}, {})
    >>> [t["total"] for t in events[0]["data"]["totals"].values()]
    [340, 160]
    """

    id: ClassVar[str] = "olympia"
    name: ClassVar[str] = "Olympia mass battles"
    summary: ClassVar[str] = (
        "Armies of nobles and their men in a front row and back rows, fought phase by phase "
        "(special, missile, melee) until a side falls to its break point."
    )
    max_combatants: ClassVar[int] = 64

    # --- forms ----------------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        fields = [
            Field("health", "Health", "int", 100, 1, 100, help="The noble's health; a wound this big or bigger kills him.", group="Noble"),
            Field("behind", "Behind", "int", 0, 0, 9, help="0 puts the noble and his men in the front row; 1-9 in a back row.", group="Noble"),
            Field("leader", "Leads the stack", "bool", False, help="The stack leader sets the side's break point and is the last noble to be targeted.", group="Noble"),
            Field("noble_attack", "Noble attack", "int", 80, 0, 1000, help="The noble's own attack rating.", group="Noble"),
            Field("noble_defence", "Noble defence", "int", 80, 0, 1000, help="The noble's own defence rating.", group="Noble"),
        ]
        for k in KINDS:
            rating = f"attack {k.attack}, defence {k.defence}" + (f", missile {k.missile}" if k.missile else "")
            if k.pirate:
                rating += " (30 and 30 aboard a ship)"
            elif k.mounted:
                rating += f" ({k.attack - 50} and {k.defence - 50} at sea or in a swamp)"
            elif k.key == "pikeman":
                rating += " (defence 40 against knights, cavaliers and paladins)"
            elif k.siege:
                rating += " (not in the printed table; 5-10 damage to a structure)"
            fields.append(Field(k.key, k.many.capitalize(), "int", 0, 0, MAX_TROOPS, help=rating, group="Troops"))
        return fields

    def option_fields(self) -> list[Field]:
        structure_help = "A structure the side fights from: an extra target slot that shelters its first men."
        return [
            Field("break_point_a", "Break point of side A", "int", 50, 0, 100, help="Side A breaks when its total falls to this percentage of its starting total.", group="Break points"),
            Field("break_point_b", "Break point of side B", "int", 50, 0, 100, help="Side B breaks when its total falls to this percentage of its starting total.", group="Break points"),
            Field("structure_a", "Structure of side A", "choice", "none", choices=STRUCTURE_CHOICES, help=structure_help, group="Structures"),
            Field("structure_a_damage", "Damage to side A's structure", "int", 0, 0, 99, group="Structures"),
            Field("structure_b", "Structure of side B", "choice", "none", choices=STRUCTURE_CHOICES, help=structure_help, group="Structures"),
            Field("structure_b_damage", "Damage to side B's structure", "int", 0, 0, 99, group="Structures"),
            Field("terrain", "Terrain", "choice", "plain", choices=TERRAINS, help="Mounted knights, cavaliers and paladins fight worse at sea and in a swamp.", group="Battlefield"),
            Field("defender", "Side attacked", "choice", "B", choices=(("A", "side A"), ("B", "side B")), help="The side that was attacked: it gets the terrain defence and the opening volley.", group="Battlefield"),
            Field("terrain_defence", "Terrain defence", "bool", False, help="Optional rule: the attacked side's defence is multiplied by the terrain (city 1.25, forest 1.5, mountain 2, swamp 0.75).", group="Optional rules"),
            Field("weather", "Weather", "choice", "clear", choices=WEATHERS, help="Optional rule: wind halves missile ratings, rain stops all bows.", group="Optional rules"),
            Field("opening_volley", "Opening volley", "bool", False, help="Optional rule: before the first round the attacked side's back-row missile troops fire once alone.", group="Optional rules"),
            Field("prisoners", "Prisoners", "bool", False, help="Optional rule: after a win each surviving noble of the loser may be taken prisoner (25-75%, by the numbers left on each side).", group="Optional rules"),
        ]

    def presets(self) -> list[dict[str, Any]]:
        return [
            {"name": "Noble with two pikemen", "pikeman": 2},
            {"name": "Noble with two knights", "knight": 2},
            {"name": "Lord of the keep", "leader": True, "soldier": 40, "pikeman": 20, "archer": 20},
            {"name": "Captain of archers", "behind": 2, "archer": 30, "light_crossbowman": 10},
            {"name": "Knight commander", "knight": 10, "cavalier": 10, "paladin": 2},
            {"name": "Pirate captain", "pirate": 30, "sailor": 20},
            {"name": "Siege master", "behind": 0, "catapult": 2, "battering_ram": 1, "heavy_foot": 10},
        ]

    def help(self) -> list[dict[str, str]]:
        return [
            {"title": "Armies and rows", "text": (
                "Every entry is a noble with his men. Behind 0 places him and all his men in the front "
                "row; 1 to 9 place them further back. Only the front row can be struck by missiles and "
                "in melee. When a front row is empty, the units nearest behind it move up. A noble "
                "fights with attack 80 and defence 80 unless the GM sets other values."
            )},
            {"title": "A round", "text": (
                "Special attacks first (dragons, battle spells: the GM adds them; some reach any man, "
                "even in the back rows, and they go in a random order), then missiles (back-row troops "
                "with a missile rating shoot at the enemy front row), then melee (front row against "
                "front row). Everything inside a phase happens at once: the fallen leave after it."
            )},
            {"title": "Hitting", "text": (
                "Each attacker picks one target at random among the enemy front-row men, plus the "
                "structure they fight from. He hits with chance attack / (attack + defence). A hit "
                "kills a fighter, wounds a noble for 1-100 (he leaves, and dies if the wound reaches "
                "his health) or damages a structure by 1 (5-10 from a catapult or battering ram). "
                "Two attackers may pick the same man; the second hit is wasted."
            )},
            {"title": "Special cases", "text": (
                "Pikemen count double defence against knights, cavaliers and paladins. Pirates fight "
                "at three times their ratings aboard a ship. Knights, cavaliers and paladins lose 50 "
                "attack and defence at sea or in a swamp. A noble can be targeted only when his own "
                "men are gone, and the leader of the stack only when nobody else is left in the front row."
            )},
            {"title": "Caps", "text": (
                "In one phase, melee attacks are limited to four per targetable enemy, and missile "
                "attacks to the number of the firing side's own front-row men the enemy could target "
                "now (a noble still covered by his men does not count). When more could strike, a "
                "random selection of them does."
            )},
            {"title": "Structures", "text": (
                "A castle (defence 40, shelters 500 men), tower (20, 100 men), galley (10, 50 men), "
                "roundship or other building (0, 50 men) adds its defence to the men it shelters, "
                "front row first. At 100 damage it is destroyed."
            )},
            {"title": "Breaking", "text": (
                "A man's value is the better of attack and missile, plus defence; a noble counts too. "
                "Each side's leader sets a break point from 0 to 100 (50 by default): when the side's "
                "total falls to that percentage of where it started, rounded down, it breaks. If both "
                "sides break in the same phase the battle is a tie. There is no limit on rounds."
            )},
            {"title": "Optional rules", "text": (
                "Terrain defence multiplies the attacked side's defence (city 1.25, forest 1.5, "
                "mountain 2, swamp 0.75). Wind halves missile ratings; rain grounds archers, horse "
                "archers and elite archers. The opening volley lets the attacked side's missile "
                "troops fire once before round one. Prisoners: when one side wins, each surviving noble of the "
                "loser, wounded or not, is captured on his own d100 roll; the chance is 25% times the "
                "winner's men and unwounded nobles divided by the loser's, kept between 25% and 75%."
            )},
            {"title": "This board's own choices", "text": (
                "Catapults and battering rams are not in the printed table: here they fight with "
                "attack 10 and defence 10, and their 5-10 damage applies to any structure. An attack "
                "on a structure is rolled against the structure's own defence (0 means a sure hit); "
                "terrain does not change it. Shelter goes to the front row first, each noble before "
                "his men. Structure defence is added after the pikemen's doubling and before the "
                "terrain multiplier. The melee cap counts targetable men and nobles, not the "
                "structure. Special attacks that reach any man may also strike the structure. Values "
                "used for the break point include the pirates', mounted troops' and weather changes "
                "but not shelter or terrain defence. If a whole round passes with nobody able to "
                "strike, the battle ends in a tie."
            )},
            {"title": "Limits of this board", "text": (
                f"One side may bring at most {MAX_MEN_PER_SIDE:,} men, and a battle may have at most "
                f"{MAX_SPECIALS} special attacks, so that no battle holds up the other tables. "
                "\"Next round\" and \"Fight to the end\" fight as many phases as one step may (a "
                "share counted in men, the same in every replay); when a long battle needs more, the "
                "board says so and the GM steps again. \"Next phase\" always fights one phase."
            )},
        ] + carry_over_help(self.id)

    def validate_draft(self, lineup: Any) -> list[dict[str, Any]]:
        """Any lineup, even one still being built: no side brings more than ``MAX_MEN_PER_SIDE`` men."""
        cleaned = super().validate_draft(lineup)
        men: dict[str, int] = {}
        for entry in cleaned:
            men[entry["side"]] = men.get(entry["side"], 0) + sum(entry[k.key] for k in KINDS)
        for side, n in sorted(men.items()):
            if n > MAX_MEN_PER_SIDE:
                raise InvalidDeclaration(
                    f"side {side} has {n:,} men; one side may bring at most {MAX_MEN_PER_SIDE:,} "
                    f"(a bigger battle would hold up the server): {n - MAX_MEN_PER_SIDE:,} too many"
                )
        return cleaned

    def validate_lineup(self, lineup: Any) -> list[dict[str, Any]]:
        """A lineup ready for battle: every side has a noble and at most one stack leader."""
        cleaned = super().validate_lineup(lineup)
        for side in self.sides:
            members = [e for e in cleaned if e["side"] == side]
            if not members:
                raise InvalidDeclaration(f"side {side} needs at least one noble")
            if sum(1 for e in members if e["leader"]) > 1:
                raise InvalidDeclaration(f"side {side} has more than one stack leader")
        return cleaned

    # --- ratings --------------------------------------------------------------------------------
    def troop_value(self, kind: str, options: Mapping[str, Any] | None = None, aboard: bool = False) -> int:
        """Combat value of one man of ``kind`` (the troop table with the battle's modifiers)."""
        return _value2(KIND[kind], options or {}, aboard) // 2

    # --- the game ---------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        opts = self.validate_options(options)
        combatants: dict[str, Any] = {}
        for order, entry in enumerate(entries):
            troops = {k.key: entry[k.key] for k in KINDS if entry[k.key] > 0}
            combatants[entry["id"]] = {
                "name": entry["name"],
                "side": entry["side"],
                "seat": entry["seat"],
                "controller": entry["controller"],
                "health": entry["health"],
                "behind": entry["behind"],
                "leader": False,
                "noble_attack": entry["noble_attack"],
                "noble_defence": entry["noble_defence"],
                "troops": troops,
                "start_troops": dict(troops),
                "state": "fighting",
                "wound": None,
                "order": order,
            }
        sides: dict[str, Any] = {}
        for side in self.sides:
            members = [e for e in entries if e["side"] == side]
            leaders = [e for e in members if e["leader"]]
            leader = (leaders or members)[0]["id"]
            combatants[leader]["leader"] = True
            key = side.lower()
            kind = opts[f"structure_{key}"]
            structure = None
            if kind != "none":
                structure = {"kind": kind, "damage": opts[f"structure_{key}_damage"], "destroyed": False}
            sides[side] = {
                "leader": leader,
                "break_point": opts[f"break_point_{key}"],
                "structure": structure,
                "start_total2": 0,
                "threshold2": 0,
                "broken": False,
            }
        state: State = {
            "system": self.id,
            "status": "setup",
            "options": opts,
            "combatants": combatants,
            "sides": sides,
            "specials": [],
            "special_serial": 0,
            "round": 0,
            "next_phase": "special",
            "report": [],
            "outcome": None,
        }
        names = " and ".join(f"{self._side_name(state, s)}" for s in self.sides)
        return state, [event("battle.prepared", f"The armies of {names} take the field. Arrange the rows, then begin.")]

    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        super().authorize(state, declaration, viewer)
        if viewer.role == "player" and declaration.get("type") == "set_break_point":
            cid = declaration.get("combatant")
            if not state["combatants"].get(cid, {}).get("leader"):
                raise NotPermitted("only the stack leader's player may set the break point")

    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = require(declaration, "type", str, "a type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if state.get("status") == "ended":
            raise IllegalDeclaration("the battle is over")
        new = copy.deepcopy(state)
        events = handler(new, declaration, viewer, dice)
        return new, events

    def is_checkpoint(self, state: State) -> bool:
        return state.get("status") != "active" or state.get("next_phase") == PHASES[0]

    # --- deployment declarations ------------------------------------------------------------------
    def _deployment_only(self, state: State, what: str) -> None:
        if state["status"] != "setup":
            raise IllegalDeclaration(f"{what} only before the battle begins")

    @contract.declaration("set_behind")
    def _set_behind(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        cid = read.combatant(d, "combatant", state)
        behind = Field("behind", "behind", "int", None, 0, 9).clean(read.whole(d, "behind"))
        self._deployment_only(state, "units move between rows")
        noble = state["combatants"][cid]
        noble["behind"] = behind
        return [event("unit.moved", f"{noble['name']} and his men move to the {_row_name(behind)}.", combatant=cid, behind=behind)]

    @contract.declaration("set_break_point")
    def _set_break_point(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        value = Field("break_point", "break point", "int", None, 0, 100).clean(
            read.whole(d, "break_point")
        )
        cid = d.get("combatant")
        if cid is not None:
            cid = read.combatant(d, "combatant", state)
            side = state["combatants"][cid]["side"]
            if not state["combatants"][cid]["leader"]:
                raise IllegalDeclaration("only the stack leader sets the break point")
        else:
            side = d.get("side")
            if not isinstance(side, str) or side not in state["sides"]:
                raise InvalidDeclaration("the declaration needs a side (A or B) or the leader as combatant")
        self._deployment_only(state, "the break point is set")
        state["sides"][side]["break_point"] = value
        return [event("break_point.set", f"{self._Side_name(state, side)} will break at {value}% of its strength.", side=side, break_point=value)]

    @contract.declaration("set_structure", by="gm")
    def _set_structure(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        side = d.get("side")
        if not isinstance(side, str) or side not in state["sides"]:
            raise InvalidDeclaration("the declaration needs a side (A or B)")
        kind = Field("structure", "structure", "choice", None, choices=STRUCTURE_CHOICES).clean(d.get("structure"))
        damage = Field("damage", "damage", "int", 0, 0, 99).clean(read.whole(d, "damage", default=0))
        self._deployment_only(state, "structures are placed")
        state["sides"][side]["structure"] = None if kind == "none" else {"kind": kind, "damage": damage, "destroyed": False}
        what = "no structure" if kind == "none" else f"a {STRUCTURES[kind].label} ({damage} damage)"
        return [event("structure.placed", f"{self._Side_name(state, side)} fights from {what}.", side=side, structure=kind, damage=damage)]

    @contract.declaration("add_special", by="gm")
    def _add_special(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        base: dict[str, Any] = {}
        preset = d.get("preset")
        if preset not in (None, ""):
            if not isinstance(preset, str) or preset not in SPECIAL_LIBRARY:
                raise InvalidDeclaration(f"unknown special attack {preset!r} (known: {', '.join(SPECIAL_LIBRARY)})")
            base = dict(SPECIAL_LIBRARY[preset])
        side = d.get("side")
        if not isinstance(side, str) or side not in state["sides"]:
            raise InvalidDeclaration("the special attack needs the side (A or B) it fights for")
        if len(state["specials"]) >= MAX_SPECIALS:
            raise IllegalDeclaration(f"at most {MAX_SPECIALS} special attacks in one battle: remove one first")
        values = {k: d.get(k, base.get(k)) for k in ("name", "attacks", "rating", "reach", "rounds")}
        for k in ("attacks", "rating", "rounds"):
            if values[k] is not None:
                values[k] = read.as_whole(values[k], k)
        name = Field("name", "special attack name", "text", None, 1, 40).clean(values["name"])
        attacks = Field("attacks", "attacks", "int", None, 1, 100_000).clean(values["attacks"])
        rating = Field("rating", "rating", "int", None, 1, 10_000).clean(values["rating"])
        reach = Field("reach", "reach", "choice", None, choices=(("any", "any"), ("front", "front"))).clean(values["reach"])
        rounds = Field("rounds", "rounds", "int", 0, 0, 1000).clean(values["rounds"])
        state["special_serial"] += 1
        sid = f"s{state['special_serial']}"
        state["specials"].append({
            "id": sid, "name": name, "side": side, "attacks": attacks, "rating": rating,
            "reach": reach, "rounds": rounds, "used": 0,
        })
        where = "any man" if reach == "any" else "the front row"
        often = "every round" if rounds == 0 else f"for {rounds} round{'s' if rounds != 1 else ''}"
        return [event("special.added", f"{name} joins {self._side_name(state, side)}: {attacks} attacks at {rating} against {where}, {often}.", special=sid)]

    @contract.declaration("remove_special", by="gm")
    def _remove_special(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        sid = require(d, "special", str, "the special attack's id")
        found = [s for s in state["specials"] if s["id"] == sid]
        if not found:
            raise InvalidDeclaration(f"no special attack {sid!r}")
        state["specials"].remove(found[0])
        return [event("special.removed", f"{found[0]['name']} leaves the battle.", special=sid)]

    @contract.declaration("begin", by="gm")
    def _begin(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        self._deployment_only(state, "the battle begins")
        state["status"] = "active"
        events = []
        for side in self.sides:
            events += self._advance_rows(state, side)
        for side, info in state["sides"].items():
            start2 = _total2(state, side)
            info["start_total2"] = start2
            info["threshold2"] = 2 * (start2 * info["break_point"] // 200)
        texts = [
            f"{self._side_name(state, s)} {_num(i['start_total2']):,} strong, breaks at {_num(i['threshold2']):,}"
            for s, i in state["sides"].items()
        ]
        opening = state["options"]["opening_volley"] and self._has_missile(state, state["options"]["defender"])
        state["next_phase"] = "volley" if opening else "special"
        if not opening:
            state["round"] = 1
        events.append(event("battle.started", "The battle begins: " + "; ".join(texts) + ".", totals=self._totals(state)))
        if not opening:
            events.append(event("round.started", "Round 1 begins.", round=1))
        return events

    # --- stepping ------------------------------------------------------------------------------------
    @contract.declaration("step", by="gm")
    def _step(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource) -> list[Event]:
        by = d.get("by")
        if not isinstance(by, str) or by not in ("phase", "round", "battle"):
            raise InvalidDeclaration("step needs by: phase, round or battle")
        if state["status"] != "active":
            raise IllegalDeclaration("the battle has not begun: the GM declares begin first")
        events: list[Event] = []
        if by == "phase":
            return self._next_phase(state, dice)
        # A round or the rest of the battle, within the step's work budget: the next phase is fought
        # only while the work so far plus its own stays within it (the first phase always is).
        start, done, phases = state["round"], 0, 0
        while state["status"] == "active":
            if by == "round" and state["round"] != start and state["next_phase"] == PHASES[0]:
                break
            work = phase_work(state)
            if phases and done + work > STEP_WORK_BUDGET:
                goal = "the round" if by == "round" else "the battle"
                events.append(event(
                    "battle.paused",
                    f"The battle goes on: this step fought {phases:,} phase{'s' if phases != 1 else ''} "
                    f"(as much as one step may), and {goal} is not over yet. Step again to fight on.",
                    round=state["round"], next_phase=self._upcoming_phase(state), phases=phases, work=done,
                ))
                break
            events += self._next_phase(state, dice)
            done += work
            phases += 1
        if by == "battle":
            # a long fight keeps every roll summary, but the single faces only of its last phases
            resolved = [e for e in events if e["type"] == "phase.resolved"]
            for e in resolved[:-FACES_KEPT_PHASES]:
                for roll in e["rolls"]:
                    roll["faces"] = []
        return events

    def _next_phase(self, state: State, dice: DiceSource) -> list[Event]:
        """Resolve the next phase in which anyone can strike (empty phases are passed over)."""
        events: list[Event] = []
        idle = 0
        while state["status"] == "active":
            phase = state["next_phase"]
            if self._phase_has_attackers(state, phase):
                events += self._resolve_phase(state, phase, dice)
                self._move_pointer(state, phase, events)
                return events
            self._move_pointer(state, phase, events)
            idle += 1
            if idle > len(PHASES):
                text = "The battle ends in a tie: neither side can harm the other."
                outcome = {"winner": None, "result": "tie", "broken": [], "reason": "neither side can harm the other", "text": text}
                state["status"] = "ended"
                state["outcome"] = outcome
                events.append(event("battle.ended", text, **{k: v for k, v in outcome.items() if k != "text"}))
        return events

    def _upcoming_phase(self, state: State) -> str | None:
        """The phase the next step will resolve (phases where nobody can strike are passed over)."""
        if state.get("status") != "active":
            return None
        phase = state["next_phase"]
        for _ in range(len(PHASES) + 1):
            if self._phase_has_attackers(state, phase):
                return phase
            phase = PHASES[0] if phase in ("volley", PHASES[-1]) else PHASES[PHASES.index(phase) + 1]
        return None

    def _move_pointer(self, state: State, phase: str, events: list[Event]) -> None:
        if state["status"] != "active":
            return
        if phase == "volley" or phase == PHASES[-1]:
            state["round"] += 1
            state["next_phase"] = PHASES[0]
            events.append(event("round.started", f"Round {state['round']} begins.", round=state["round"]))
        else:
            state["next_phase"] = PHASES[PHASES.index(phase) + 1]

    def _phase_has_attackers(self, state: State, phase: str) -> bool:
        if phase == "special":
            return bool(self._active_specials(state))
        if phase in ("missile", "volley"):
            sides = [state["options"]["defender"]] if phase == "volley" else list(self.sides)
            return any(self._has_missile(state, s) for s in sides)
        return any(sum(self._melee_attackers(state, s).counts) for s in self.sides)

    def _active_specials(self, state: State) -> list[dict[str, Any]]:
        return [s for s in state["specials"] if s["rounds"] == 0 or s["used"] < s["rounds"]]

    def _has_missile(self, state: State, side: str) -> bool:
        return sum(self._missile_attackers(state, side).counts) > 0

    # --- attackers and targets -------------------------------------------------------------------------
    def _units(self, state: State, side: str) -> list[tuple[str, dict[str, Any]]]:
        units = [(cid, c) for cid, c in state["combatants"].items() if c["side"] == side]
        units.sort(key=lambda item: (item[1]["behind"], item[1]["order"]))
        return units

    def _melee_attackers(self, state: State, side: str) -> Attackers:
        opts, aboard = state["options"], _aboard(state, side)
        att = Attackers([], [], [], [], [])
        for cid, c in self._units(state, side):
            if c["behind"] != 0:
                continue
            if c["state"] == "fighting" and c["noble_attack"] > 0:
                att.labels.append(c["name"])
                att.kinds.append("noble")
                att.units.append(cid)
                att.a4.append(4 * c["noble_attack"])
                att.counts.append(1)
            for key, n in c["troops"].items():
                attack = _attack(KIND[key], opts, aboard)
                if n > 0 and attack > 0:
                    att.labels.append(f"{_poss(c['name'])} {KIND[key].many}")
                    att.kinds.append(key)
                    att.units.append(cid)
                    att.a4.append(4 * attack)
                    att.counts.append(n)
        return att

    def _missile_attackers(self, state: State, side: str) -> Attackers:
        opts = state["options"]
        att = Attackers([], [], [], [], [])
        for cid, c in self._units(state, side):
            if c["behind"] == 0:
                continue
            for key, n in c["troops"].items():
                m4 = _missile4(KIND[key], opts)
                if n > 0 and m4 > 0:
                    att.labels.append(f"{_poss(c['name'])} {KIND[key].many}")
                    att.kinds.append(key)
                    att.units.append(cid)
                    att.a4.append(m4)
                    att.counts.append(n)
        return att

    def _slots(self, state: State, side: str) -> list[Slot]:
        """Every man, noble and structure of ``side`` that could be struck, in canonical order."""
        info = state["sides"][side]
        structure = info["structure"]
        shelter = 0
        if structure and not structure["destroyed"]:
            shelter = STRUCTURES[structure["kind"]].shelters
        units = self._units(state, side)
        front_persons = [
            cid for cid, c in units
            if c["behind"] == 0 and (c["state"] == "fighting" or sum(c["troops"].values()) > 0)
        ]
        slots: list[Slot] = []

        def add(slot: Slot) -> None:
            nonlocal shelter
            if slot.what == "men" and shelter > 0:
                inside = min(shelter, slot.count)
                shelter -= inside
                if inside < slot.count:
                    slots.append(Slot(slot.what, slot.unit, slot.kind, inside, slot.row, True))
                    slots.append(Slot(slot.what, slot.unit, slot.kind, slot.count - inside, slot.row, False))
                    return
                slot.sheltered = True
            elif slot.what == "noble" and shelter > 0:
                shelter -= 1
                slot.sheltered = True
            slots.append(slot)

        for cid, c in units:
            men = sum(c["troops"].values())
            if c["state"] == "fighting":
                exposed = c["behind"] == 0 and men == 0
                if exposed and c["leader"]:
                    others = [o for o in front_persons if o != cid]
                    exposed = not others
                add(Slot("noble", cid, "noble", 1, c["behind"], exposed=exposed))
            for key in KIND:
                n = c["troops"].get(key, 0)
                if n > 0:
                    add(Slot("men", cid, key, n, c["behind"]))
        if structure and not structure["destroyed"]:
            slots.append(Slot("structure", None, None, 1, 0))
        start = 0
        for slot in slots:
            slot.start = start
            start += slot.count
        return slots

    # --- resolving a phase ---------------------------------------------------------------------------------
    def _resolve_phase(self, state: State, phase: str, dice: DiceSource) -> list[Event]:
        opts = state["options"]
        sides = list(self.sides)
        slots = {s: self._slots(state, s) for s in sides}
        hits: dict[str, list[np.ndarray]] = {s: [] for s in sides}
        siege_hits: dict[str, int] = dict.fromkeys(sides, 0)
        plain_hits: dict[str, int] = dict.fromkeys(sides, 0)
        strikes: list[dict[str, Any]] = []
        rolls: list[dict[str, Any]] = []
        round_no = state["round"]
        title = f"Round {round_no}, {PHASE_WORDS[phase]}" if phase != "volley" else "Opening volley"

        def fire(side: str, att: Attackers, reach: str, cap: int | None, who: str) -> None:
            enemy = _other(side)
            if reach == "any":
                targets = list(range(len(slots[enemy])))
            else:
                targets = [
                    i for i, s in enumerate(slots[enemy])
                    if (s.what == "men" and s.row == 0) or (s.what == "noble" and s.exposed) or s.what == "structure"
                ]
            result = _fire(att, [slots[enemy][i] for i in targets], cap, state, side, dice, f"{title}: {who}")
            hits[enemy].append(result["hit_index"])
            siege_hits[enemy] += result["siege_structure_hits"]
            plain_hits[enemy] += result["plain_structure_hits"]
            result["who"] = who
            result["side"] = side
            strikes.append(result)
            rolls.extend(result["rolls"])

        if phase == "special":
            specials = self._active_specials(state)
            order = list(range(len(specials)))
            if len(specials) > 1:
                keys = np.asarray(dice.integers(0, KEY_HIGH, len(specials), f"{title}: order of the special attacks"), dtype=np.int64)
                order = [int(i) for i in np.argsort(keys, kind="stable")]
            for i in order:
                sp = specials[i]
                sp["used"] += 1
                att = Attackers([sp["name"]], [None], [None], [4 * sp["rating"]], [sp["attacks"]])
                fire(sp["side"], att, sp["reach"], None, sp["name"])
        elif phase in ("missile", "volley"):
            for side in [opts["defender"]] if phase == "volley" else sides:
                att = self._missile_attackers(state, side)
                if sum(att.counts):
                    # ruling Olympia-5: the firing side's own front-row men that could be targeted now
                    # (a noble still covered by his men does not count)
                    cap = _targetable(slots[side])
                    fire(side, att, "front", cap, f"the missile troops of {self._side_name(state, side)}")
        else:
            for side in sides:
                att = self._melee_attackers(state, side)
                if sum(att.counts):
                    defenders = _targetable(slots[_other(side)])
                    fire(side, att, "front", 4 * defenders, f"the front row of {self._side_name(state, side)}")

        # the fallen leave: every hit man dies once, each hit noble gets one wound, structures take damage
        losses: dict[str, dict[str, int]] = {s: {} for s in sides}
        events: list[Event] = []
        fallen_nobles: list[Event] = []
        for side in sides:
            side_slots = slots[side]
            per_slot: Any = []
            if side_slots:
                # every man hit at least once falls once: mark the hit men, count the marks per slot
                struck = np.zeros(side_slots[-1].start + side_slots[-1].count, dtype=bool)
                for index in hits[side]:
                    struck[index] = True
                starts = np.asarray([s.start for s in side_slots], dtype=np.int64)
                per_slot = np.add.reduceat(struck, starts, dtype=np.int64)
            for slot, dead in zip(side_slots, per_slot, strict=False):
                dead = int(dead)
                if dead == 0 or slot.what == "structure":
                    continue
                noble = state["combatants"][slot.unit]
                if slot.what == "men":
                    noble["troops"][slot.kind] -= dead
                    losses[side][slot.kind] = losses[side].get(slot.kind, 0) + dead
                else:
                    wound = rolled_by(dice, "gm").randint(1, 100, f"wound of {noble['name']}")
                    w = wound.total
                    noble["wound"] = w
                    dies = w >= noble["health"]
                    noble["health"] = max(0, noble["health"] - w)
                    noble["state"] = "dead" if dies else "wounded"
                    how = "is killed" if dies else "is wounded and leaves the battle"
                    fallen_nobles.append(event(
                        "noble.killed" if dies else "noble.wounded",
                        f"{noble['name']} takes a wound of {w} and {how}.",
                        rolls=[wound], combatant=slot.unit, wound=w,
                    ))
            for c in state["combatants"].values():
                if c["side"] == side:
                    c["troops"] = {k: n for k, n in c["troops"].items() if n > 0}
        structure_events: list[Event] = []
        for side in sides:
            structure = state["sides"][side]["structure"]
            n_siege, n_plain = siege_hits[side], plain_hits[side]
            if not structure or structure["destroyed"] or not (n_siege or n_plain):
                continue
            damage = n_plain
            rolled: list[dict[str, Any]] = []
            if n_siege:
                faces = np.asarray(dice.integers(5, 10, n_siege, f"siege damage to {self._side_name(state, side)}'s structure"), dtype=np.int64)
                damage += int(faces.sum())
                rolled.append(_summary("5-10" if n_siege == 1 else f"{n_siege}×5-10", "siege engine damage", faces))
            structure["damage"] += damage
            label = STRUCTURES[structure["kind"]].label
            if structure["damage"] >= STRUCTURE_DESTROYED_AT:
                structure["destroyed"] = True
                structure_events.append(event("structure.destroyed", f"The {label} of {self._side_name(state, side)} takes {damage} damage and is destroyed.", rolls=rolled, side=side, damage=structure["damage"]))
            else:
                structure_events.append(event("structure.damaged", f"The {label} of {self._side_name(state, side)} takes {damage} damage ({structure['damage']} in all).", rolls=rolled, side=side, damage=structure["damage"]))

        totals = self._totals(state)
        lines = []
        for r in strikes:
            lines.append(
                f"{r['who']} struck {r['attacks']:,} time{'s' if r['attacks'] != 1 else ''} and hit {r['hits']:,}"
                + (f" ({r['capped']:,} could have struck)" if r["capped"] else "")
            )
        for side in sides:
            lost = _losses_text(losses[side])
            fallen = [
                f"{state['combatants'][e['data']['combatant']]['name']} ({'killed' if e['type'] == 'noble.killed' else 'wounded'})"
                for e in fallen_nobles if state["combatants"][e["data"]["combatant"]]["side"] == side
            ]
            if lost or fallen:
                lines.append(f"{self._side_name(state, side)} lost " + ", ".join(p for p in [lost, *fallen] if p))
        for side in sides:
            t = totals[side]
            lines.append(f"{self._side_name(state, side)} stands at {t['total']:,} (breaks at {t['threshold']:,})")
        text = f"{title}: " + ("; ".join(lines) if lines else "nobody struck") + "."
        report = {
            "round": round_no,
            "phase": phase,
            "title": title,
            "text": text,
            "strikes": [{k: r[k] for k in ("who", "side", "attacks", "hits", "capped")} for r in strikes],
            "losses": losses,
            "nobles": [e["data"]["combatant"] for e in fallen_nobles],
            "totals": totals,
        }
        state["report"] = (state["report"] + [report])[-REPORT_KEEP:]
        events.append(event("phase.resolved", text, rolls=rolls, **{k: v for k, v in report.items() if k != "text"}))
        events += fallen_nobles + structure_events
        events += self._check_break(state, totals, title, dice)
        if state["status"] == "active":
            for side in sides:
                events += self._advance_rows(state, side)
        return events

    def _advance_rows(self, state: State, side: str) -> list[Event]:
        units = [(cid, c) for cid, c in self._units(state, side) if c["state"] == "fighting" or sum(c["troops"].values())]
        if not units or any(c["behind"] == 0 for _, c in units):
            return []
        row = min(c["behind"] for _, c in units)
        moving = [c for _, c in units if c["behind"] == row]
        for c in moving:
            c["behind"] = 0
        names = ", ".join(c["name"] for c in moving)
        return [event("row.advanced", f"The front row of {self._side_name(state, side)} is empty: {names} advance from the {_row_name(row)}.", side=side, behind=row)]

    def _check_break(self, state: State, totals: dict[str, Any], title: str, dice: DiceSource) -> list[Event]:
        broken = [s for s in self.sides if totals[s]["total2"] <= state["sides"][s]["threshold2"]]
        if not broken:
            return []
        events = []
        for s in broken:
            state["sides"][s]["broken"] = True
            events.append(event("side.broke", f"{self._Side_name(state, s)} falls to {totals[s]['total']:,}, at or below its break line of {totals[s]['threshold']:,}, and breaks.", side=s))
        if len(broken) == len(self.sides):
            outcome = {"winner": None, "result": "tie", "broken": broken, "reason": f"both sides broke in the same phase ({title})"}
            text = f"The battle ends in a tie: both sides broke in the same phase ({title})."
        else:
            winner = next(s for s in self.sides if s not in broken)
            outcome = {"winner": winner, "result": "win", "broken": broken, "reason": f"{self._side_name(state, broken[0])} broke ({title})"}
            text = f"{self._Side_name(state, winner)} wins: {self._side_name(state, broken[0])} broke in {title.lower()}."
        outcome["text"] = text
        state["status"] = "ended"
        state["outcome"] = outcome
        events.append(event("battle.ended", text, **{k: v for k, v in outcome.items() if k != "text"}))
        if state["options"]["prisoners"] and outcome["winner"]:
            events += self._take_prisoners(state, outcome["winner"], broken[0], dice)
        return events

    def _take_prisoners(self, state: State, winner: str, loser: str, dice: DiceSource) -> list[Event]:
        """Ruling Olympia-10: every surviving noble of the loser, wounded or not, is taken on his own d100."""
        chance = prisoner_chance(_head_count(state, winner), _head_count(state, loser))
        events: list[Event] = []
        by = self._side_name(state, winner)
        for cid, c in sorted(state["combatants"].items(), key=lambda item: item[1]["order"]):
            if c["side"] != loser or c["state"] == "dead":
                continue
            roll = rolled_by(dice, "gm").randint(1, 100, f"is {c['name']} taken prisoner ({chance}% or less)?")
            if roll.total <= chance:
                c["state"] = "prisoner"
                events.append(event("prisoner.taken", f"{c['name']} is taken prisoner by {by} (rolled {roll.total}, {chance}% chance).",
                                    rolls=[roll], combatant=cid, chance=chance))
            else:
                events.append(event("prisoner.escaped", f"{c['name']} escapes capture (rolled {roll.total}, {chance}% chance).",
                                    rolls=[roll], combatant=cid, chance=chance))
        return events

    # --- totals and names -------------------------------------------------------------------------------
    def _totals(self, state: State) -> dict[str, Any]:
        out = {}
        for side, info in state["sides"].items():
            t2 = _total2(state, side)
            out[side] = {
                "total": _num(t2),
                "total2": t2,
                "start": _num(info["start_total2"]),
                "threshold": _num(info["threshold2"]),
            }
        return out

    def _Side_name(self, state: State, side: str) -> str:  # noqa: N802 - the name at the start of a sentence
        name = self._side_name(state, side)
        return name[:1].upper() + name[1:]

    def _side_name(self, state: State, side: str) -> str:
        leader = state["combatants"].get(state["sides"][side]["leader"])
        return f"side {side} ({leader['name']})" if leader else f"side {side}"

    # --- views ---------------------------------------------------------------------------------------------
    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        totals = self._totals(state)
        sides = {}
        for side, info in state["sides"].items():
            rows: dict[int, list[dict[str, Any]]] = {}
            for cid, c in self._units(state, side):
                # (each label reads with its count: "1 paladin", "2 paladins")
                troops = [
                    {"kind": k.key, "label": k.called(n), "count": n, "start": c["start_troops"][k.key]}
                    for k in KINDS if c["start_troops"].get(k.key, 0) > 0
                    for n in [c["troops"].get(k.key, 0)]
                ]
                rows.setdefault(c["behind"], []).append({
                    "id": cid,
                    "name": c["name"],
                    "leader": c["leader"],
                    "behind": c["behind"],
                    "state": c["state"],
                    "health": c["health"],
                    "wound": c["wound"],
                    "controller": c["controller"],
                    "mine": viewer.controls(state, cid) and not viewer.is_gm,
                    "troops": troops,
                    "men": sum(c["troops"].values()),
                })
            structure = info["structure"]
            sides[side] = {
                "name": self._side_name(state, side),
                "leader": info["leader"],
                "break_point": info["break_point"],
                "broken": info["broken"],
                "total": totals[side]["total"] if state["status"] != "setup" else _num(_total2(state, side)),
                "start_total": totals[side]["start"] if state["status"] != "setup" else _num(_total2(state, side)),
                "threshold": totals[side]["threshold"] if state["status"] != "setup" else _num(2 * (_total2(state, side) * info["break_point"] // 200)),
                "structure": None if not structure else {
                    **structure,
                    "label": STRUCTURES[structure["kind"]].label,
                    "defence": STRUCTURES[structure["kind"]].defence,
                    "shelters": STRUCTURES[structure["kind"]].shelters,
                    "destroyed_at": STRUCTURE_DESTROYED_AT,
                },
                "rows": [
                    {"behind": b, "label": _row_name(b), "units": units} for b, units in sorted(rows.items())
                ],
            }
        return {
            "system": self.id,
            "status": state["status"],
            "round": state["round"],
            "next_phase": self._upcoming_phase(state),
            "options": {k: state["options"][k] for k in ("terrain", "defender", "terrain_defence", "weather", "opening_volley", "prisoners")},
            "sides": sides,
            "combatants": {
                cid: {"name": c["name"], "side": c["side"], "controller": c["controller"], "state": c["state"],
                      **({"seat": c["seat"]} if viewer.is_gm else {})}
                for cid, c in state["combatants"].items()
            },
            "specials": [dict(s) for s in state["specials"]],
            "special_library": [{"key": k, **v} for k, v in SPECIAL_LIBRARY.items()],
            "report": copy.deepcopy(state["report"]),
            "outcome": copy.deepcopy(state.get("outcome")),
            "kinds": [{"kind": k.key, "label": k.many, "attack": k.attack, "defence": k.defence, "missile": k.missile} for k in KINDS],
            "legal": self._legal(state, viewer),
        }

    def _legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        legal: list[dict[str, Any]] = []
        if viewer.role == "spectator" or state["status"] == "ended":
            return legal
        behind_field = Field("behind", "Row (0 = front)", "int", 0, 0, 9).to_dict()
        bp_field = Field("break_point", "Break point (%)", "int", 50, 0, 100).to_dict()
        if state["status"] == "setup":
            for cid, c in state["combatants"].items():
                if viewer.controls(state, cid):
                    legal.append({"type": "set_behind", "combatant": cid, "label": f"Move {_poss(c['name'])} unit", "behind": c["behind"], "fields": [behind_field]})
            for side, info in state["sides"].items():
                leader = info["leader"]
                if viewer.is_gm:
                    legal.append({"type": "set_break_point", "side": side, "label": f"Break point of {self._side_name(state, side)}", "break_point": info["break_point"], "fields": [bp_field]})
                elif viewer.controls(state, leader):
                    legal.append({"type": "set_break_point", "combatant": leader, "side": side, "label": f"Break point of {self._side_name(state, side)}", "break_point": info["break_point"], "fields": [bp_field]})
            if viewer.is_gm:
                for side in state["sides"]:
                    legal.append({"type": "set_structure", "side": side, "label": f"Structure of {self._side_name(state, side)}", "fields": [
                        Field("structure", "Structure", "choice", "none", choices=STRUCTURE_CHOICES).to_dict(),
                        Field("damage", "Damage", "int", 0, 0, 99).to_dict(),
                    ]})
                legal.append({"type": "begin", "label": "Begin the battle"})
        if viewer.is_gm:
            legal.append({"type": "add_special", "label": "Add a special attack", "fields": [
                Field("preset", "From the library", "choice", "", choices=(("", "(own)"),) + tuple((k, v["name"]) for k, v in SPECIAL_LIBRARY.items())).to_dict(),
                Field("side", "Fights for", "choice", "A", choices=(("A", "side A"), ("B", "side B"))).to_dict(),
                Field("name", "Name", "text", "", 0, 40).to_dict(),
                Field("attacks", "Attacks", "int", None, 1, 100_000).to_dict(),
                Field("rating", "Attack rating", "int", None, 1, 10_000).to_dict(),
                Field("reach", "Reach", "choice", None, choices=(("any", "any man"), ("front", "front row only"))).to_dict(),
                Field("rounds", "Rounds (0 = every round)", "int", None, 0, 1000).to_dict(),
            ]})
            for sp in state["specials"]:
                legal.append({"type": "remove_special", "special": sp["id"], "label": f"Remove {sp['name']}"})
            if state["status"] == "active":
                legal.append({"type": "step", "by": "phase", "label": "Next phase"})
                legal.append({"type": "step", "by": "round", "label": "Next round"})
                legal.append({"type": "step", "by": "battle", "label": "Fight to the end"})
        return legal


# --- helpers ------------------------------------------------------------------------------------------


def prisoner_chance(winners: int, losers: int) -> int:
    """The chance in percent that each surviving noble of the loser is taken (ruling Olympia-10):
    25 x the winner's head count / the loser's, rounded down, kept within 25-75.

    >>> prisoner_chance(100, 100), prisoner_chance(250, 100), prisoner_chance(10, 100), prisoner_chance(5, 0)
    (25, 62, 25, 75)
    """
    if losers <= 0:
        return 75
    return max(25, min(75, 25 * winners // losers))


def _head_count(state: Mapping[str, Any], side: str) -> int:
    """A side's surviving men (every row) plus its unwounded nobles."""
    return sum(
        sum(c["troops"].values()) + (1 if c["state"] == "fighting" else 0)
        for c in state["combatants"].values() if c["side"] == side
    )


def _poss(name: str) -> str:
    """The possessive of a name: "Osswid's", "Captain of archers'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def _other(side: str) -> str:
    return "B" if side == "A" else "A"


def _row_name(behind: int) -> str:
    return "front row" if behind == 0 else f"back row {behind}"


def _aboard(state: Mapping[str, Any], side: str) -> bool:
    structure = state["sides"][side]["structure"]
    return bool(structure and not structure["destroyed"] and STRUCTURES[structure["kind"]].ship)


def _attack(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    attack = kind.attack
    if kind.pirate and aboard:
        attack *= 3
    if kind.mounted and opts.get("terrain") in ("sea", "swamp"):
        attack -= 50
    return attack


def _defence(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    defence = kind.defence
    if kind.pirate and aboard:
        defence *= 3
    if kind.mounted and opts.get("terrain") in ("sea", "swamp"):
        defence -= 50
    return defence


def _missile4(kind: Kind, opts: Mapping[str, Any]) -> int:
    """The missile rating x4 after the weather (0 when the weather grounds it)."""
    weather = opts.get("weather", "clear")
    if kind.missile == 0 or (weather == "rain" and kind.bow):
        return 0
    return 2 * kind.missile if weather == "wind" else 4 * kind.missile


def _value2(kind: Kind, opts: Mapping[str, Any], aboard: bool) -> int:
    """Twice the combat value of one man (halves appear when the wind halves an odd missile rating)."""
    return max(2 * _attack(kind, opts, aboard), _missile4(kind, opts) // 2) + 2 * _defence(kind, opts, aboard)


def _total2(state: Mapping[str, Any], side: str) -> int:
    opts, aboard = state["options"], _aboard(state, side)
    total = 0
    for c in state["combatants"].values():
        if c["side"] != side:
            continue
        if c["state"] == "fighting":
            total += 2 * combat_value(c["noble_attack"], 0, c["noble_defence"])
        for key, n in c["troops"].items():
            total += n * _value2(KIND[key], opts, aboard)
    return total


def _defence4(slot: Slot, attacker_kind: str | None, state: Mapping[str, Any], side: str) -> int:
    """The target slot's defence x4 against one attacker kind."""
    opts = state["options"]
    structure = state["sides"][side]["structure"]
    if slot.what == "structure":
        return 4 * STRUCTURES[structure["kind"]].defence
    if slot.what == "noble":
        defence = state["combatants"][slot.unit]["noble_defence"]
    else:
        kind = KIND[slot.kind]
        defence = _defence(kind, opts, _aboard(state, side))
        if kind.key == "pikeman" and attacker_kind in KIND and KIND[attacker_kind].mounted:
            defence *= 2
    if slot.sheltered and structure:
        defence += STRUCTURES[structure["kind"]].defence
    quarters = 4
    if opts.get("terrain_defence") and opts.get("defender") == side:
        quarters = TERRAIN_QUARTERS[opts.get("terrain", "plain")]
    return max(0, defence) * quarters


def phase_work(state: Mapping[str, Any]) -> int:
    """The work of the next phase, in men: an upper bound on its attacks, target picks and rolls
    (every man on the field and every special attack), plus a cost per group and per phase.

    It depends only on the state, never on a clock, so a replay stops each step where the game did.
    """
    men = groups = 0
    for c in state["combatants"].values():
        groups += 1
        for n in c["troops"].values():
            men += n
            groups += 1
        if c["state"] == "fighting":
            men += 1
    specials = sum(s["attacks"] for s in state["specials"] if s["rounds"] == 0 or s["used"] < s["rounds"])
    return men + specials + GROUP_WORK * (groups + len(state["specials"])) + PHASE_BASE_WORK


def _targetable(slots: Sequence[Slot]) -> int:
    """The men of a side that missile and melee attacks could target now: its front-row men, and
    its nobles who are exposed (no structure: that is not a man)."""
    return sum(s.count for s in slots if (s.what == "men" and s.row == 0) or (s.what == "noble" and s.exposed))


def _summary(dice_text: str, purpose: str, faces: Any, total: int | None = None, **extra: Any) -> dict[str, Any]:
    """A roll record for many dice at once: every face when there are few; ``total`` says what they came to."""
    if total is None:
        total = int(np.asarray(faces, dtype=np.int64).sum()) if len(faces) else 0
    shown = [int(f) for f in faces] if len(faces) <= SMALL_PAIR else []
    return {"dice": dice_text, "purpose": purpose, "faces": shown, "modifier": 0, "total": total, **extra}


def _losses_text(losses: Mapping[str, int]) -> str:
    parts = [_plural(n, KIND[k]) for k, n in sorted(losses.items(), key=lambda kv: list(KIND).index(kv[0])) if n]
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _fire(
    att: Attackers,
    targets: Sequence[Slot],
    cap: int | None,
    state: Mapping[str, Any],
    side: str,
    dice: DiceSource,
    purpose: str,
) -> dict[str, Any]:
    """One side's (or one special attack's) strikes against the given target slots of the enemy."""
    enemy = _other(side)
    counts = np.asarray(att.counts, dtype=np.int64)
    eligible = int(counts.sum())
    result: dict[str, Any] = {
        "attacks": 0, "hits": 0, "capped": 0, "rolls": [],
        "hit_index": np.zeros(0, dtype=np.int64), "siege_structure_hits": 0, "plain_structure_hits": 0,
    }
    if cap is not None and eligible > cap:
        result["capped"] = eligible
        if cap <= 0:
            return result
        keys = np.asarray(dice.integers(0, KEY_HIGH, eligible, f"{purpose}: who strikes"), dtype=np.int64)
        result["rolls"].append(_summary(f"{eligible}×0-{KEY_HIGH}", f"who of {eligible:,} may strike ({cap:,} do)", keys, total=cap, count=eligible))
        chosen = np.argpartition(keys, cap - 1)[:cap] if cap < eligible else np.arange(eligible)
        strikes = np.zeros(eligible, dtype=bool)
        strikes[chosen] = True
        if counts.min() > 0:  # the strikers of each group: the marks in its stretch of the attackers
            counts = np.add.reduceat(strikes, np.cumsum(counts) - counts, dtype=np.int64)
        else:
            group_of = np.searchsorted(np.cumsum(counts), chosen, side="right")
            counts = np.bincount(group_of, minlength=len(counts)).astype(np.int64)
    n_attacks = int(counts.sum())
    slot_counts = np.asarray([t.count for t in targets], dtype=np.int64)
    n_slots = int(slot_counts.sum())
    if n_attacks == 0 or n_slots == 0:
        return result
    result["attacks"] = n_attacks
    picks = np.asarray(dice.integers(0, n_slots - 1, n_attacks, f"{purpose}: targets"), dtype=np.int64)
    result["rolls"].append(_summary(f"{n_attacks}×0-{n_slots - 1}", f"target picks among {n_slots:,}", picks, total=n_attacks, count=n_attacks))
    n_groups, n_targets = len(counts), len(targets)
    # the target slot of every pick: a lookup in the slot of every pickable man (faster than a search)
    slot_index = np.arange(n_targets, dtype=np.int16 if n_targets < 2**15 else np.int32)
    target_of = np.repeat(slot_index, slot_counts)[picks]
    attacker_of = np.repeat(np.arange(n_groups, dtype=np.int32 if n_groups < 2**31 else np.int64), counts)
    # The odds of every attack: attack x4 of its attacker against the defence x4 of its target slot
    # (a pikeman's defence doubles against a mounted attacker), in lowest terms a : d. Attack and
    # defence ratings take few distinct values: the odds are worked out once per (attack, defence)
    # cell and every attack only looks its cell up (no per-attack arithmetic, no sorting).
    mounted = np.asarray([k in KIND and KIND[k].mounted for k in att.kinds], dtype=bool)
    b4_plain = [_defence4(t, None, state, enemy) for t in targets]
    b4_mounted = [_defence4(t, "knight", state, enemy) for t in targets]
    a_values = sorted(set(att.a4))
    b_values = sorted(set(b4_plain) | set(b4_mounted))
    b_class_plain = np.asarray([b_values.index(v) for v in b4_plain], dtype=np.int64)
    b_class_mounted = np.asarray([b_values.index(v) for v in b4_mounted], dtype=np.int64)
    n_b = len(b_values)
    # per cell: its batch of equal odds (-1: a certain hit, defence 0, not rolled); batches numbered as met
    odds: dict[tuple[int, int], int] = {}
    cell_batch = np.empty(len(a_values) * n_b, dtype=np.int16 if len(a_values) * n_b < 2**15 else np.int64)
    for ia, a4v in enumerate(a_values):
        for ib, b4v in enumerate(b_values):
            if b4v == 0:
                cell_batch[ia * n_b + ib] = -1
                continue
            g = math.gcd(a4v, b4v)
            cell_batch[ia * n_b + ib] = odds.setdefault((a4v // g, (a4v + b4v) // g), len(odds))
    batch_odds = list(odds)
    # per (attack rating, mounted) class of attacker and per target slot: the batch; one lookup per attack
    classes: dict[tuple[int, bool], int] = {}
    class_of_group = np.asarray([classes.setdefault((a_values.index(v), bool(m)), len(classes)) for v, m in zip(att.a4, mounted, strict=True)], dtype=np.int32)
    batch_table = np.empty((len(classes), n_targets), dtype=cell_batch.dtype)
    for (ia, is_mounted), row in classes.items():
        batch_table[row] = cell_batch[ia * n_b + (b_class_mounted if is_mounted else b_class_plain)]
    batch_of = batch_table.ravel()[np.repeat(class_of_group * n_targets, counts) + target_of]
    # the (attacker group, target) pairs: their roll records show single faces when there are few
    wide_pairs = n_groups * n_targets >= 2**31
    pair = attacker_of.astype(np.int64 if wide_pairs else np.int32) * n_targets + target_of
    pair_sizes = np.bincount(pair, minlength=n_groups * n_targets)
    pairs = np.flatnonzero(pair_sizes)
    per_pair = len(pairs) <= PAIR_RECORDS
    keep_faces = per_pair and int(pair_sizes[pairs].min(initial=SMALL_PAIR + 1)) <= SMALL_PAIR
    hit = batch_of < 0  # no defence at all: a certain hit, not rolled
    rolled = ~hit
    faces_of = np.zeros(n_attacks if keep_faces else 0, dtype=np.int64)
    if rolled.any():
        # one batch of rolls per distinct odds, the batches in the order their first attack comes, each
        # batch in attack order (a stable sort keeps it; small integers sort by radix in one pass)
        order = np.argsort(batch_of, kind="stable")
        sizes = np.bincount(batch_of.astype(np.int64) + 1, minlength=len(odds) + 1)
        ends = np.cumsum(sizes)
        segments = [(int(order[ends[u] - sizes[u]]), u - 1, int(ends[u] - sizes[u]), int(ends[u])) for u in range(1, len(odds) + 1) if sizes[u]]
        for _, b, lo, hi in sorted(segments):
            members = order[lo:hi]
            a, d = batch_odds[b]
            faces = np.asarray(dice.integers(1, d, len(members), f"{purpose}: hits at {a} in {d}"), dtype=np.int64)
            if keep_faces:
                faces_of[members] = faces
            hit[members] = faces <= a
        del order
    # the roll records: per attacker group and target when there are few pairs, else per kind of attacker
    records: list[tuple[Any, int, int | None, int, int]] = []
    if per_pair:
        for p in pairs.tolist():
            mask = pair == p
            records.append((mask, p // n_targets, p % n_targets, int(pair_sizes[p]), int(hit[mask].sum())))
    else:
        hits_of = np.bincount(attacker_of[hit], minlength=n_groups)
        by_kind: dict[str, list[int]] = {}
        for g, k in enumerate(att.kinds):
            by_kind.setdefault(str(k), []).append(g)
        for gs in by_kind.values():
            records.append((None, gs[0], None, int(counts[gs].sum()), int(hits_of[gs].sum())))
    del pair
    for mask, g, j, n, h in records:
        if j is None:
            label = att.labels[g] if att.kinds[g] is None else ("nobles" if att.kinds[g] == "noble" else KIND[str(att.kinds[g])].many)
            result["rolls"].append(_summary(f"{n:,} rolls", f"{label}: {h:,} of {n:,} hit", [], total=h, count=n, hits=h))
            continue
        target = targets[j]
        what = "the structure" if target.what == "structure" else (
            state["combatants"][target.unit]["name"] if target.what == "noble" else KIND[str(target.kind)].many
        )
        first_attack = int(np.argmax(mask))
        if not rolled[first_attack]:
            result["rolls"].append(_summary(f"{n}×certain", f"{att.labels[g]} against {what}: {n} of {n} hit (certain)", [], total=n, count=n, hits=n, needed=0))
            continue
        a, d = batch_odds[int(batch_of[first_attack])]
        result["rolls"].append(_summary(
            f"{n}d{d}", f"{att.labels[g]} against {what} (hit on {a} or less): {h:,} of {n:,} hit",
            faces_of[mask] if n <= SMALL_PAIR else [], total=h, count=n, hits=h, needed=a,
        ))
    result["hits"] = int(hit.sum())
    # the hit men in the side's canonical numbering: a pick's place among the targets moved to its slot's start
    starts = np.asarray([t.start for t in targets], dtype=np.int64)
    shift = starts - (np.cumsum(slot_counts) - slot_counts)
    is_structure = np.asarray([t.what == "structure" for t in targets], dtype=bool)[target_of]
    men_hits = np.flatnonzero(hit & ~is_structure)
    result["hit_index"] = picks[men_hits] + shift[target_of[men_hits]]
    structure_hits = hit & is_structure
    if structure_hits.any():
        siege = np.asarray([k in KIND and KIND[k].siege for k in att.kinds], dtype=bool)[attacker_of]
        result["siege_structure_hits"] = int((structure_hits & siege).sum())
        result["plain_structure_hits"] = int((structure_hits & ~siege).sum())
    return result
