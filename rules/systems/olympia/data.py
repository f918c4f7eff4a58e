"""Olympia as data: the troop table, the structures, terrains and weathers, the special attacks,
the limits of one battle, the forms, the presets and the help.

Nothing here resolves anything: a phase is in phase.py, what an army can do in army.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rules.core import Field

#: the system's id, and the two sides of every battle
SYSTEM_ID = "olympia"
SIDES: tuple[str, ...] = ("A", "B")

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


# --- the forms ---------------------------------------------------------------------------------


def _combatant_fields() -> list[Field]:
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


#: the stat form (the system adds the carried-over fields: rules/carry_over.py)
FIELDS: list[Field] = _combatant_fields()
#: the battle's own options
structure_help = "A structure the side fights from: an extra target slot that shelters its first men."
OPTION_FIELDS: list[Field] = [
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


#: ready-made nobles
PRESETS: list[dict[str, Any]] = [
    {"name": "Noble with two pikemen", "pikeman": 2},
    {"name": "Noble with two knights", "knight": 2},
    {"name": "Lord of the keep", "leader": True, "soldier": 40, "pikeman": 20, "archer": 20},
    {"name": "Captain of archers", "behind": 2, "archer": 30, "light_crossbowman": 10},
    {"name": "Knight commander", "knight": 10, "cavalier": 10, "paladin": 2},
    {"name": "Pirate captain", "pirate": 30, "sailor": 20},
    {"name": "Siege master", "behind": 0, "catapult": 2, "battering_ram": 1, "heavy_foot": 10},
]


#: the help, in the project's own words (the system adds the carrying over's)
HELP: list[dict[str, str]] = [
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
]
