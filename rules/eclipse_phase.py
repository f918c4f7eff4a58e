"""Eclipse Phase 2e combat on a square grid: initiative order, opposed d100 tests, wounds.

Every attack is an opposed percentile test. The attacker declares the attack on its turn (target,
weapon, firing mode, situational modifiers, an optional pool point spent before the roll); the
server shows the target number; the defender (or the GM for it) chooses a defence; both d100 are
rolled; each side may then spend one pool point after the roll (flip the digits, raise a success by
one superior level, soften a critical failure) or accept; then damage, armour, wounds and the SOM
check follow. The binding rulings (RULINGS.md, Eclipse Phase section) are implemented exactly.

Dice order (for scripted dice and replays): at the start of each action turn one d6 per able
combatant in lineup order, then tie-break d6s (the first action turn's as the battle is set up,
unless a combatant rolls real dice: then the battle starts with initiative due and the GM's
``roll_initiative`` rolls it, asking each physical roller for their d6); for an attack the attacker's d100, then the
defender's d100 (none if it cannot defend); after both sides accept, the blind-attack d100 if that
option was taken, then the weapon's damage dice, the extra dice (charge, then burst, full automatic
or aggressive), the superior-success d6s, and last the SOM check's d100 if a wound was dealt. A disarming
called shot that comes off rolls no damage and nothing after it.

>>> judge(69, 70)["superior"], judge(0, -20)["critical"], judge(99, 150)["success"]
(2, True, False)
>>> contest(judge(69, 70), judge(7, 30))
'hit'
>>> contest(judge(7, 60), judge(0, 80))
'miss'
>>> halve(65), halve(11), range_band(10, 30)["modifier"], range_band(61, 30)["modifier"]
(33, 6, 0, -30)
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

from . import contract, read, terrain
from .carry_over import carried_fields, carry_over_help, parse_conditions
from .contract import RuleSystem
from .core import GM_ONLY, Event, Field, State, Viewer, combatant_visibility, event, told
from .dice import DiceSource
from .errors import IllegalDeclaration, InvalidDeclaration
from .physical import active as physical_active
from .physical import pending as physical_pending
from .physical import rolled_by, who_enters

# --- numbers of the rulings ----------------------------------------------------------------------

MODIFIER_CAP = 60
#: what every page says while the first action turn's initiative waits for real dice
INITIATIVE_DUE = "Roll initiative to begin"
POOL_BONUS = 20
FULL_DEFENCE_BONUS = 30
WOUND_PENALTY = 10
SKILLS = {"melee": "Melee", "guns": "Guns", "athletics": "Athletics"}
POOLS = ("flex", "vigor")
POOL_LABELS = {"flex": "Flex", "vigor": "Vigor"}
#: a defence in the words of those who do not see the defender's numbers
DEFENDS = {"melee": "blocks or parries", "fray": "dodges"}

SIZES = {
    "very_small": ("tiny (insect or mouse size)", -30),
    "small": ("small (about a child's size)", -10),
    "medium": ("human-sized", 0),
    "large": ("large (about a car's size)", 10),
    "very_large": ("huge (a wall-sized mark)", 30),
}
VISIBILITY = {
    "clear": ("clear", 0),
    "minor": ("poor sight: glare, thin smoke or low light", -10),
    "major": ("bad sight: thick smoke or darkness", -20),
    "blind": ("blind attack", -30),
    "blind_chance": ("blind attack, 50% miss chance instead", 0),
}
MODES = {"single": "single shot", "burst": "burst fire", "full_auto": "full automatic"}
#: (accuracy bonus, extra damage dice) for each firing mode / melee style, depending on the chosen bonus
MODE_BONUS = {"burst": (10, (1, 10)), "full_auto": (30, (2, 10)), "aggressive": (10, (1, 10))}
CHARGE_MODIFIER = -10
CHARGE_DICE = (1, 6)
FULL_MOVE_MODIFIER = -20
SUPERIOR_POSITION = 20
CALLED_SHOT = -10
#: what a called shot aims at (ruling 11), as the forms and the log name it
CALLED_AIMS = {"armour": "bypass armour", "disarm": "disarm", "spot": "a named spot"}
#: the longest name of a spot a called shot aims at
SPOT_LENGTH = 30
#: weapons that are part of the body: no disarming shot knocks them away
BODY_WEAPONS = ("unarmed", "claws")
ONE_HANDED = -20
AIM_QUICK = 10
AIM_COMPLEX = 30
AGGRESSIVE_DEFENCE_PENALTY = -10
#: the firing modes an aim helps (ruling 10): single shots, which stand for semi-automatic fire too
AIM_MODES = ("single",)

CONDITIONS = {
    "surprised": "surprised (cannot defend)",
    "prone": "knocked down",
    "unconscious": "unconscious",
}

# --- gear ------------------------------------------------------------------------------------------

WEAPONS: dict[str, dict[str, Any]] = {
    "unarmed": {"name": "Unarmed strike", "skill": "melee", "dv": "1d6", "armour": "kinetic", "ap": False,
                "range": 0, "modes": ["single"], "two_handed": False},
    "knife": {"name": "Combat knife", "skill": "melee", "dv": "1d10", "armour": "kinetic", "ap": False,
              "range": 0, "modes": ["single"], "two_handed": False},
    "vibroblade": {"name": "Buzzing vibroblade", "skill": "melee", "dv": "2d6+1", "armour": "kinetic",
                   "ap": True, "range": 0, "modes": ["single"], "two_handed": False},
    "claws": {"name": "Grafted claws", "skill": "melee", "dv": "1d10+2", "armour": "kinetic", "ap": True,
              "range": 0, "modes": ["single"], "two_handed": False},
    "war_club": {"name": "Heavy war club", "skill": "melee", "dv": "2d10", "armour": "kinetic", "ap": False,
                 "range": 0, "modes": ["single"], "two_handed": True},
    "medium_pistol": {"name": "Medium pistol", "skill": "guns", "dv": "2d10", "armour": "kinetic", "ap": False,
                      "range": 30, "modes": ["single", "burst"], "two_handed": False},
    "heavy_pistol": {"name": "Heavy pistol", "skill": "guns", "dv": "2d10+2", "armour": "kinetic", "ap": False,
                     "range": 35, "modes": ["single", "burst"], "two_handed": False},
    "smg": {"name": "Compact submachine gun", "skill": "guns", "dv": "2d10", "armour": "kinetic", "ap": False,
            "range": 40, "modes": ["single", "burst", "full_auto"], "two_handed": False},
    "assault_rifle": {"name": "Assault rifle", "skill": "guns", "dv": "2d10+3", "armour": "kinetic", "ap": False,
                      "range": 120, "modes": ["single", "burst", "full_auto"], "two_handed": True},
    "laser_pulser": {"name": "Laser pulser", "skill": "guns", "dv": "2d10", "armour": "energy", "ap": False,
                     "range": 100, "modes": ["single", "burst"], "two_handed": True},
    "rail_rifle": {"name": "Rail rifle", "skill": "guns", "dv": "2d10+4", "armour": "kinetic", "ap": True,
                   "range": 160, "modes": ["single", "burst"], "two_handed": True},
    "frag_grenade": {"name": "Thrown frag grenade", "skill": "athletics", "dv": "3d10", "armour": "kinetic",
                     "ap": False, "range": 12, "modes": ["single"], "two_handed": False},
}
ARMOUR: dict[str, tuple[str, int, int]] = {
    "none": ("no armour", 0, 0),
    "smart_clothes": ("armoured everyday clothes", 2, 3),
    "vest": ("protective vest", 5, 7),
    "body_armour": ("tactical body armour", 9, 11),
    "combat_shell": ("heavy combat shell", 13, 15),
}

DV_PATTERN = re.compile(r"^\s*(\d{1,2})\s*d\s*(\d{1,3})\s*(?:([+-])\s*(\d{1,3}))?\s*$", re.IGNORECASE)


def _called_aim_of(choices: Mapping[str, Any]) -> str | None:
    """The aim of an attack's called shot, or None (true, in a battle begun before there were aims: bypass armour)."""
    aim = choices.get("called_shot")
    return "armour" if aim is True else aim or None


def _called_words(choices: Mapping[str, Any]) -> str:
    """A called shot's aim in the log's words: "to disarm", "at “the eyes”"."""
    aim = _called_aim_of(choices)
    if aim == "spot":
        return f"at “{choices.get('called_spot', '')}”"
    return "to bypass the armour" if aim == "armour" else "to disarm"


def parse_dv(text: str) -> tuple[int, int, int]:
    """Read a damage value such as ``2d10+3`` into (count, sides, bonus).

    >>> parse_dv("2d10+3"), parse_dv("1d6")
    ((2, 10, 3), (1, 6, 0))
    """
    match = DV_PATTERN.match(text or "")
    if not match:
        raise InvalidDeclaration(f"damage value {text!r} must look like 2d10 or 2d10+3")
    count, sides = int(match[1]), int(match[2])
    bonus = int(match[4] or 0) * (-1 if match[3] == "-" else 1)
    if count < 1 or sides < 2:
        raise InvalidDeclaration(f"damage value {text!r} needs at least one die of two sides or more")
    return count, sides, bonus


# --- the pure rules of the tests -------------------------------------------------------------------


def halve(value: int) -> int:
    """Half a value, rounded to the nearest whole number with halves going up (ruling 4)."""
    return (value + 1) // 2


def round_half_up(value: float) -> int:
    """Nearest whole number, halves up (ruling 4)."""
    return math.floor(value + 0.5)


def wound_threshold(durability: int) -> int:
    """Durability ÷ 5, rounded to nearest, halves up."""
    return max(1, round_half_up(durability / 5))


def death_rating(durability: int, morph_type: str) -> int:
    """Durability × 1.5 for biological bodies (and pods), × 2 for synthetic ones."""
    return durability * 2 if morph_type == "synth" else round_half_up(durability * 1.5)


def is_double(roll: int) -> bool:
    return roll % 11 == 0


def judge(roll: int, target: int, superior_bonus: int = 0) -> dict[str, Any]:
    """The result of one d100 test (00–99) against a target number.

    00 always succeeds critically, 99 always fails critically, other doubles are criticals of the
    result they fall on; a success of 33+ is one superior success, 66+ two (ruling 1 and 2).
    """
    if roll == 0:
        success, critical = True, True
    elif roll == 99:
        success, critical = False, True
    else:
        success, critical = roll <= target, is_double(roll)
    superior = 0
    if success and not critical:
        superior = min(2, (2 if roll >= 66 else 1 if roll >= 33 else 0) + superior_bonus)
    superior_failures = superior_failure_degree(roll) if not success and not critical else 0
    if critical:
        label = "critical success" if success else "critical failure"
    elif success:
        label = ["success", "superior success", "two superior successes"][superior]
    else:
        label = "failure"
    return {"roll": roll, "target": target, "success": success, "critical": critical,
            "superior": superior, "superior_failures": superior_failures, "label": label}


def superior_failure_degree(roll: int) -> int:
    """How bad a plain failure is: the success bands mirrored from the top of the die.

    A success is superior from 33 up, twice from 66 up; a failure is superior at 66 or under, twice at 33 or
    under (the failure's distance from 99 reaching 33 or 66). Only the bare roll counts, as for successes.

    >>> [superior_failure_degree(r) for r in (98, 67, 66, 34, 33, 5)]
    [0, 0, 1, 1, 2, 2]
    """
    return 2 if roll <= 33 else 1 if roll <= 66 else 0


def _without_target(result: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A test's result as those who do not see the tester's numbers know it: the die and what it
    means, not the target number.

    >>> _without_target(judge(20, 70))["label"], "target" in _without_target(judge(20, 70))
    ('success', False)
    """
    return None if result is None else {k: v for k, v in result.items() if k != "target"}


def result_words(result: Mapping[str, Any]) -> str:
    """The result of a test in words, with the degree of a plain failure (for tests outside an attack).

    >>> result_words(judge(60, 40)), result_words(judge(20, 10)), result_words(judge(80, 40))
    ('superior failure', 'two superior failures', 'failure')
    """
    if not result["success"] and not result["critical"] and result.get("superior_failures"):
        return ["failure", "superior failure", "two superior failures"][result["superior_failures"]]
    return str(result["label"])


def contest(attack: Mapping[str, Any], defence: Mapping[str, Any] | None) -> str:
    """``'hit'`` or ``'miss'`` for an opposed combat test (ruling 3). ``defence`` is None without a defence."""
    if not attack["success"]:
        return "miss"
    if defence is None or not defence["success"]:
        return "hit"
    if attack["critical"] != defence["critical"]:
        return "hit" if attack["critical"] else "miss"
    return "hit" if attack["roll"] > defence["roll"] else "miss"


def cap(total: int) -> int:
    """All situational modifiers together stay within ±60 (ruling 5)."""
    return max(-MODIFIER_CAP, min(MODIFIER_CAP, total))


def target_number(skill: int, modifiers: list[dict[str, Any]], pool_bonus: int = 0) -> int:
    """Skill plus the capped sum of the situational modifiers, plus a pool's +20 outside the cap."""
    return skill + cap(sum(m["value"] for m in modifiers)) + pool_bonus


def range_band(metres: float, weapon_range: int) -> dict[str, Any]:
    """The range band and its modifier for a ranged attack (ruling 8).

    A target beyond the weapon's own range takes the beyond-range penalty even when it is within 10 m
    (or 2 m) of a short-ranged weapon: the close bands only apply inside the weapon's range.

    >>> [range_band(d, 30)["modifier"] for d in (1.4, 2, 2.5, 10, 10.5, 30, 31, 60, 61)]
    [10, 10, 0, 0, -10, -10, -20, -20, -30]
    >>> [range_band(d, 4)["modifier"] for d in (2, 4, 5, 8, 9)]
    [10, 0, -20, -20, -30]
    """
    if metres <= weapon_range + 1e-9 or metres <= 0:
        if metres <= 2:
            return {"band": "point blank", "modifier": 10}
        if metres <= 10:
            return {"band": "close", "modifier": 0}
        return {"band": "within range", "modifier": -10}
    multiple = math.ceil(metres / max(1, weapon_range) - 1e-9)
    return {"band": f"beyond range (×{multiple})", "modifier": -10 * multiple}


def wounds_from(damage: int, threshold: int) -> int:
    """Wounds from one hit: whole multiples of the Wound Threshold (ruling 6)."""
    return max(0, damage) // max(1, threshold)


def armour_after_piercing(armour: int, piercing: bool) -> int:
    return halve(armour) if piercing else armour


def flip(roll: int) -> int:
    """Swap the two digits of a d100 roll: 96 -> 69, 7 -> 70."""
    return (roll % 10) * 10 + roll // 10


# --- helpers on state --------------------------------------------------------------------------------


def _able(c: Mapping[str, Any]) -> bool:
    return c["state"] == "ok" and "unconscious" not in c["conditions"]


def _distance_squares(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    return math.hypot(a["x"] - b["x"], a["y"] - b["y"])


def _adjacent(a: Mapping[str, Any], b: Mapping[str, Any], state: Mapping[str, Any] | None = None) -> bool:
    """Touching squares (melee reach); with ``state``, not parted by blocked squares corner to corner."""
    if max(abs(a["x"] - b["x"]), abs(a["y"] - b["y"])) > 1:
        return False
    if state is None or not state.get("blocked"):
        return True
    opts = state["options"]
    return terrain.step_distance((a["x"], a["y"]), (b["x"], b["y"]), terrain.blocked_of(state),
                                 opts["width"], opts["height"]) == 1


def _metres(state: Mapping[str, Any], a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    return round(_distance_squares(a, b) * state["options"]["metres_per_square"], 2)


def _foes_first(state: Mapping[str, Any], c: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Everyone but ``c`` as a target: the other sides first, then ``c``'s allies, each the nearest first
    (a phone offered the ally at hand as its first target)."""
    others = [o for o in state["combatants"].values() if o["id"] != c["id"]]
    return sorted(others, key=lambda o: (o["side"] == c["side"], _distance_squares(c, o), o["id"]))


def _count(n: int, word: str) -> str:
    """``_count(2, "wound")`` -> ``'2 wounds'``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word.endswith("s") else f"{n} {word}s"


def _signed(value: int) -> str:
    return f"{value:+d}"


def _breakdown(skill_label: str, skill: int, mods: list[dict[str, Any]], pool: int) -> str:
    parts = [f"{skill_label} {skill}"] + [f"{m['label']} {_signed(m['value'])}" for m in mods]
    total = sum(m["value"] for m in mods)
    if cap(total) != total:
        parts.append(f"(modifiers capped at {_signed(cap(total))})")
    if pool:
        parts.append(f"pool +{pool}")
    return ", ".join(parts)


class EclipsePhase(RuleSystem):
    """Eclipse Phase 2e personal combat."""

    id = "eclipse-phase"
    name = "Eclipse Phase 2e"
    summary = "Initiative order, opposed d100 tests with superior and critical results, wounds, on a grid."
    max_combatants = 24

    # --- forms -----------------------------------------------------------------------------
    def combatant_fields(self) -> list[Field]:
        weapon_choices = (("none", "—"),) + tuple((k, w["name"]) for k, w in WEAPONS.items())
        return [
            Field("morph", "Morph", "text", "splicer", max=40, help="The body worn in this fight.", group="Morph"),
            Field("morph_type", "Body kind", "choice", "bio",
                  choices=(("bio", "biological"), ("pod", "pod"), ("synth", "synthetic")),
                  help="Synthetic bodies take twice their Durability before they are destroyed; others 1.5 times.",
                  group="Morph"),
            Field("durability", "Durability", "int", 35, 1, 300,
                  help="Damage it takes before it is incapacitated. Wound Threshold is a fifth of it.", group="Morph"),
            Field("size", "Size", "choice", "medium", choices=tuple((k, v[0]) for k, v in SIZES.items()),
                  help="Attackers get the size modifier against it.", group="Morph"),
            Field("base_move", "Base move (m)", "int", 4, 0, 200, help="Metres per turn without penalty.",
                  group="Morph"),
            Field("full_move", "Full move (m)", "int", 16, 0, 400,
                  help="Most metres per turn; going past the base move gives −20 to its attacks that turn.",
                  group="Morph"),
            Field("som", "SOM", "int", 20, 1, 60, help="Somatics; the SOM check is three times this.", group="Morph"),
            Field("initiative", "Initiative", "int", 8, 0, 40, help="Added to a d6 each action turn.",
                  group="Skills"),
            Field("fray", "Fray", "int", 40, 0, 99, help="Dodging; halved against ranged attacks.", group="Skills"),
            Field("melee", "Melee", "int", 30, 0, 99, group="Skills"),
            Field("guns", "Guns", "int", 30, 0, 99, group="Skills"),
            Field("athletics", "Athletics", "int", 30, 0, 99, help="Used for thrown weapons.", group="Skills"),
            Field("flex", "Flex", "int", 1, 0, 9, help="Pool points usable on any test.", group="Pools"),
            Field("vigor", "Vigor", "int", 2, 0, 9, help="Pool points usable on physical tests (all combat tests).",
                  group="Pools"),
            Field("traumas", "Traumas", "int", 0, 0, 9, help="Each gives −10 like a wound.", group="Pools"),
            Field("armour", "Armour worn", "choice", "none", choices=tuple((k, v[0]) for k, v in ARMOUR.items()),
                  group="Armour"),
            Field("energy_natural", "Extra energy armour", "int", 0, 0, 40, help="Built into the morph.",
                  group="Armour"),
            Field("kinetic_natural", "Extra kinetic armour", "int", 0, 0, 40, help="Built into the morph.",
                  group="Armour"),
            Field("weapon1", "Weapon 1", "choice", "medium_pistol", choices=weapon_choices, group="Weapons"),
            Field("weapon2", "Weapon 2", "choice", "knife", choices=weapon_choices, group="Weapons"),
            Field("weapon3", "Weapon 3", "choice", "none", choices=weapon_choices, group="Weapons"),
            Field("custom_weapon", "Custom weapon name", "text", "", max=40,
                  help="Leave empty for none.", group="Custom weapon"),
            Field("custom_skill", "Custom weapon skill", "choice", "guns",
                  choices=tuple(SKILLS.items()), group="Custom weapon"),
            Field("custom_dv", "Custom weapon damage", "text", "2d10", max=12, help="Like 2d10 or 1d10+2.",
                  group="Custom weapon"),
            Field("custom_armour", "Custom weapon armour type", "choice", "kinetic",
                  choices=(("kinetic", "kinetic"), ("energy", "energy")), group="Custom weapon"),
            Field("custom_ap", "Armour-piercing", "bool", False, group="Custom weapon"),
            Field("custom_range", "Custom weapon range (m)", "int", 30, 0, 2000, help="0 for melee.",
                  group="Custom weapon"),
            Field("custom_modes", "Custom weapon firing modes", "choice", "single",
                  choices=(("single", "single shot"), ("burst", "single or burst"),
                           ("full_auto", "single, burst or full automatic")), group="Custom weapon"),
            Field("custom_two_handed", "Two-handed", "bool", False, group="Custom weapon"),
            Field("x", "Column", "int", -1, -1, 99, help="Starting square; −1 places it automatically.",
                  group="Position"),
            Field("y", "Row", "int", -1, -1, 99, group="Position"),
        ] + carried_fields(self.id)

    def option_fields(self) -> list[Field]:
        return [
            Field("metres_per_square", "Metres per square", "int", 1, 1, 20, help="The grid's scale."),
            Field("width", "Grid width (squares)", "int", 24, 6, 60),
            Field("height", "Grid height (squares)", "int", 16, 6, 60),
            Field("reveal_health", "Show everyone's Durability numbers", "bool", False,
                  help="Off: only the GM and a combatant's own player see its numbers; others see a coarse bar."),
        ]

    def presets(self) -> list[dict[str, Any]]:
        base = {f.name: f.default for f in self.combatant_fields()}
        return [
            {**base, "name": "Jinx", "morph": "winged synth courier", "morph_type": "synth", "durability": 35,
             "base_move": 8, "full_move": 32, "som": 15, "initiative": 9, "fray": 60, "melee": 30, "guns": 70,
             "athletics": 40, "flex": 2, "vigor": 1, "armour": "smart_clothes", "weapon1": "medium_pistol",
             "weapon2": "knife", "weapon3": "none"},
            {**base, "name": "Exhuman stalker", "morph": "brutish modified biomorph", "durability": 40,
             "base_move": 4, "full_move": 20, "som": 25, "initiative": 8, "fray": 60, "melee": 80, "guns": 20,
             "athletics": 55, "flex": 0, "vigor": 2, "armour": "none", "kinetic_natural": 10, "energy_natural": 5,
             "weapon1": "claws", "weapon2": "none", "weapon3": "none"},
            {**base, "name": "Habitat guard", "morph": "splicer", "durability": 35, "som": 18, "initiative": 7,
             "fray": 40, "melee": 40, "guns": 50, "armour": "vest", "weapon1": "smg", "weapon2": "knife"},
            {**base, "name": "Security synth", "morph": "armoured security shell", "morph_type": "synth",
             "durability": 50, "base_move": 4, "full_move": 16, "som": 25, "initiative": 8, "fray": 35, "melee": 45,
             "guns": 60, "flex": 0, "vigor": 1, "armour": "none", "kinetic_natural": 12, "energy_natural": 12,
             "weapon1": "assault_rifle", "weapon2": "unarmed", "weapon3": "none"},
            {**base, "name": "Firewall sentinel", "morph": "fury combat biomorph", "durability": 50, "som": 25,
             "initiative": 10, "fray": 55, "melee": 60, "guns": 65, "athletics": 50, "flex": 1, "vigor": 3,
             "armour": "body_armour", "weapon1": "laser_pulser", "weapon2": "vibroblade",
             "weapon3": "frag_grenade"},
            {**base, "name": "Scrap drone", "morph": "small flying drone", "morph_type": "synth", "durability": 15,
             "size": "small", "base_move": 8, "full_move": 40, "som": 8, "initiative": 8, "fray": 40, "melee": 10,
             "guns": 40, "flex": 0, "vigor": 0, "kinetic_natural": 4, "energy_natural": 4,
             "weapon1": "medium_pistol", "weapon2": "none", "weapon3": "none"},
        ]

    def help(self) -> list[dict[str, str]]:
        return [
            {"title": "A turn", "text": (
                "Combatants act in initiative order: each action turn everyone adds a d6 to their Initiative "
                "(less 1 per wound); ties go to the higher Initiative, then to a roll-off. When anyone rolls real dice, the battle "
                "starts with initiative due: the GM presses Roll initiative and each real-dice roller types a d6. On its turn a "
                "combatant may move up to its base move freely, or up to its full move at −20 to its attacks, "
                "and take one complex action: an attack, full defence, or a careful aim. A quick aim (+10) can "
                "come before an attack in the same turn. Aiming helps single shots only: after aiming at a "
                "target, burst or full-automatic fire at that target is refused. Press End turn when done.")},
            {"title": "The grid", "text": (
                "Distances are straight lines between square centres, times the metres per square (1 by "
                "default). A move may end on any free square within what is left of the full move; the "
                "squares on the way do not matter. Melee needs the target in a neighbouring square, "
                "diagonals included. A knocked-down combatant stands up (free) before it can move. The GM "
                "may drag any token: on that combatant's own turn it counts as its movement, otherwise it is "
                "just placed.")},
            {"title": "Attacking", "text": (
                "Pick a target, a weapon and its firing mode, tick the situations that apply, and optionally "
                "spend a pool point for +20. The board shows the target number; the defender then picks a "
                "defence: Melee or Fray against a melee attack, half Fray (rounded, halves up) against a ranged "
                "or thrown one, +30 if it declared full defence. A surprised, unconscious or incapacitated "
                "defender cannot defend. The GM may always answer for a defender.")},
            {"title": "Reading the dice", "text": (
                "d100 reads 00 to 99; at or under the target succeeds. Doubles are criticals; 00 always "
                "succeeds critically and 99 always fails critically. A success of 33 or more is superior, 66 "
                "or more twice superior. If the attacker fails it misses; if only the defender fails it hits; "
                "a critical beats a plain success; otherwise the higher roll wins and a tie goes to the "
                "defender. Failures have degrees too, counted from the top of the die: a plain failure on 66 "
                "or under is a superior failure, on 33 or under two. They are recorded with every test and "
                "named in the text of tests outside an attack (the SOM check); in an attack they change "
                "nothing.")},
            {"title": "Called shots", "text": (
                "Among the attack builder's folded options, a called shot takes −10 and names what it is after: "
                "getting past the armour, knocking the weapon from the target's hand, or a spot you pick or "
                "type (an eye, a sensor, the gun hand). It only works on a hit that is also a superior success or a critical; "
                "a hit without one lands as a normal attack, and the exchange, the log and the TV say "
                "whether the shot came off. Past the armour: the hit's damage is not reduced by armour at all. "
                "Disarm: no damage, and the weapon the target last attacked with (or, before its first attack, "
                "the first it carries) falls at its feet; fists and grafted claws cannot be knocked away. It "
                "fights on with whatever else it carries, its fists at least, or spends its complex action to "
                "pick the weapon up again while standing on or next to the square where it fell. A named spot: "
                "the hit deals its damage as usual, and the log names the spot so the GM can decide any "
                "further effect. The attack builder shows the chance that the shot comes off.")},
            {"title": "Pools", "text": (
                "One pool point per test. Flex works on any test, Vigor on these physical ones. Before the "
                "roll a point gives +20 (outside the ±60 cap). After the roll it can swap the two digits, "
                "raise a success by one superior level, or make a critical failure a plain one.")},
            {"title": "Modifiers", "text": (
                "Range from the grid: 2 m or less +10, 10 m or less +0, within the weapon's range −10, and "
                "−10 more for each further multiple of it; past the weapon's own range the near bands do not "
                "apply, so a 4 m weapon at 5 m takes −20. Full move −20; a charge (a melee attack after a full "
                "move, more than the base move) takes −10 instead and adds +1d6 damage; aggressive melee +10 or "
                "+1d10 damage but −10 to your own Fray dodges (not Melee parries) until your next turn, "
                "burst +10 or +1d10 damage, full automatic +30 or +2d10 damage, superior "
                "position +20, called shot −10, two-handed weapon in one hand −20, target size, visibility (a blind "
                "attack takes −30, or instead a 50% chance to miss rolled after a hit), "
                "−10 per wound and trauma, quick aim +10, careful aim +30 on the next turn (single shots "
                "only). The GM may add a "
                "labelled modifier. All modifiers together are capped at ±60.")},
            {"title": "Damage and wounds", "text": (
                "A hit rolls the weapon's damage, +1d6 per superior success, or double damage on a critical. "
                "Energy or kinetic armour is subtracted (halved, rounded up, against armour-piercing). Each full "
                "multiple of the Wound Threshold is a wound (−10 to tests, −1 initiative). On a wound the "
                "target rolls a SOM check: three times SOM, −10 for every wound it now has (the new ones "
                "too) and every trauma. After one wound, failing knocks it down. Two or more wounds from one "
                "hit knock it down whatever the roll, and failing the check also knocks it out. Damage "
                "reaching Durability incapacitates; reaching the Death Rating kills.")},
            {"title": "GM tools", "text": (
                "The GM can drag any token, act and defend for anyone, add a labelled modifier to a "
                "combatant's next attack or defence (or a lasting one), mark a combatant surprised, knocked "
                "down or unconscious, correct damage and wounds, let computer-played combatants act, and "
                "reveal everyone's Durability numbers. Options: metres per square, grid size, Durability "
                "numbers shown to all (off by default).")},
        ] + carry_over_help(self.id)

    def validate_combatant(self, data: Any, index: int = 0) -> dict[str, Any]:
        cleaned = super().validate_combatant(data, index)
        if cleaned["custom_weapon"]:
            parse_dv(cleaned["custom_dv"])
        if cleaned["full_move"] < cleaned["base_move"]:
            raise InvalidDeclaration(f"{cleaned['name']}: full move must be at least the base move")
        if cleaned.get("conditions"):  # carried from an earlier fight
            try:
                cleaned["conditions"] = ", ".join(parse_conditions(cleaned["conditions"]))
            except InvalidDeclaration as exc:
                raise InvalidDeclaration(f"{cleaned['name']}: {exc}") from None
        return cleaned

    # --- setup -------------------------------------------------------------------------------
    def setup(
        self, lineup: list[dict[str, Any]], options: dict[str, Any], dice: DiceSource
    ) -> tuple[State, list[Event]]:
        entries = self.validate_lineup(lineup)
        if len(entries) < self.min_combatants:
            raise InvalidDeclaration(f"a battle needs at least {self.min_combatants} combatants")
        if len({e["side"] for e in entries}) < 2:
            raise InvalidDeclaration("a fight needs combatants on both sides")
        opts = self.validate_options(options)
        # blocked squares come from the table's board (not an option of the form)
        blocked = terrain.clean_blocked(options.get("blocked") if isinstance(options, Mapping) else None,
                                        opts["width"], opts["height"])
        combatants: dict[str, Any] = {}
        taken: set[tuple[int, int]] = set()
        for entry in entries:
            if entry["x"] >= 0 and entry["y"] >= 0:
                if entry["x"] >= opts["width"] or entry["y"] >= opts["height"]:
                    raise InvalidDeclaration(f"{entry['name']}: starting square is off the grid")
                if (entry["x"], entry["y"]) in taken:
                    raise InvalidDeclaration(f"{entry['name']}: starting square is already taken")
                if [entry["x"], entry["y"]] in blocked:
                    raise InvalidDeclaration(f"{entry['name']}: starting square ({entry['x']}, {entry['y']}) is blocked")
                taken.add((entry["x"], entry["y"]))
        taken.update((x, y) for x, y in blocked)
        for entry in entries:
            c = self._build_combatant(entry)
            if entry["x"] < 0 or entry["y"] < 0:
                c["x"], c["y"] = self._free_square(opts, taken, entry["side"])
            taken.add((c["x"], c["y"]))
            combatants[c["id"]] = c
        state: State = {
            "system": self.id,
            "status": "active",
            "options": opts,
            "blocked": blocked,
            "round": 0,
            "order": [],
            "initiative": {},
            "turn_index": 0,
            "active": None,
            "turn": self._fresh_turn(),
            "pending": None,
            "last_exchange": None,
            "reveal_health": opts["reveal_health"],
            "combatants": combatants,
            "outcome": None,
        }
        names = ", ".join(c["name"] for c in combatants.values())
        events = [event("battle.started", f"The fight begins: {names}.")]
        typists = [combatants[cid]["name"] for cid in self._initiative_typists(state)]
        if typists:
            # the battle cannot wait for typed faces while it is set up: the first command rolls
            state["initiative_due"] = True
            events.append(event("initiative.due", f"{INITIATIVE_DUE}: the GM starts the action turn, then "
                                f"{', '.join(typists)} roll{'s' if len(typists) == 1 else ''} a d6 with real dice.",
                                round=1))
            return state, events
        self._start_round(state, dice, events)
        self._run_computers(state, dice, events)
        return state, events

    @staticmethod
    def _initiative_typists(state: State) -> list[str]:
        """The able combatants whose initiative d6 is rolled with real dice (rules/physical.py)."""
        if not physical_active(state):
            return []
        return [cid for cid, c in state["combatants"].items() if _able(c) and who_enters(state, cid)[0]]

    def _build_combatant(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        weapons = []
        for slot in ("weapon1", "weapon2", "weapon3"):
            if entry[slot] != "none":
                weapons.append({"id": entry[slot], **copy.deepcopy(WEAPONS[entry[slot]])})
        if entry["custom_weapon"]:
            modes = {"single": ["single"], "burst": ["single", "burst"],
                     "full_auto": ["single", "burst", "full_auto"]}[entry["custom_modes"]]
            skill = entry["custom_skill"]
            weapons.append({
                "id": "custom", "name": entry["custom_weapon"], "skill": skill, "dv": entry["custom_dv"].replace(" ", ""),
                "armour": entry["custom_armour"], "ap": entry["custom_ap"],
                "range": 0 if skill == "melee" else max(1, entry["custom_range"]),
                "modes": ["single"] if skill == "melee" else modes, "two_handed": entry["custom_two_handed"],
            })
        if not any(w["skill"] == "melee" for w in weapons):
            weapons.append({"id": "unarmed", **copy.deepcopy(WEAPONS["unarmed"])})
        gear = ARMOUR[entry["armour"]]
        c = {k: entry[k] for k in ("id", "name", "side", "controller", "seat", "morph", "morph_type", "durability",
                                   "size", "base_move", "full_move", "som", "initiative", "fray", "melee", "guns",
                                   "athletics", "traumas", "x", "y")}
        c.update({
            "wound_threshold": wound_threshold(entry["durability"]),
            "death_rating": death_rating(entry["durability"], entry["morph_type"]),
            "som_check": entry["som"] * 3,
            "armour_name": gear[0],
            "energy_armour": gear[1] + entry["energy_natural"],
            "kinetic_armour": gear[2] + entry["kinetic_natural"],
            "weapons": weapons,
            "pools": {"flex": entry["flex"], "vigor": entry["vigor"]},
            "pools_max": {"flex": entry["flex"], "vigor": entry["vigor"]},
            # damage, wounds and lasting conditions carried from an earlier fight (rules/carry_over.py)
            "damage": entry.get("damage", 0),
            "wounds": entry.get("wounds", 0),
            "state": ("dead" if entry.get("damage", 0) >= death_rating(entry["durability"], entry["morph_type"])
                      else "incapacitated" if entry.get("damage", 0) >= entry["durability"] else "ok"),
            "conditions": parse_conditions(entry.get("conditions", "")),
            "full_defence": False,
            "aggressive": False,
            "aim": None,
            "modifiers": [],
        })
        return c

    @staticmethod
    def _free_square(opts: Mapping[str, Any], taken: set[tuple[int, int]], side: str) -> tuple[int, int]:
        columns = range(opts["width"]) if side == "A" else range(opts["width"] - 1, -1, -1)
        for x in list(columns)[1:] + [list(columns)[0]]:
            for y in range(1, opts["height"], 2):
                if (x, y) not in taken:
                    return x, y
        for x in range(opts["width"]):
            for y in range(opts["height"]):
                if (x, y) not in taken:
                    return x, y
        raise InvalidDeclaration("the grid is too small for all combatants")

    @staticmethod
    def _fresh_turn() -> dict[str, Any]:
        return {"moved": 0.0, "complex_used": False, "quick_aimed": False, "acted": False}

    # --- flow ---------------------------------------------------------------------------------
    def _start_round(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        state["round"] += 1
        able = [cid for cid, c in state["combatants"].items() if _able(c)]
        scores: dict[str, dict[str, Any]] = {}
        rolls = []
        for cid in able:
            c = state["combatants"][cid]
            roll = rolled_by(dice, cid).roll(1, 6, f"{c['name']} initiative")
            rolls.append(roll)
            score = c["initiative"] - c["wounds"]
            scores[cid] = {"score": score, "roll": roll.total, "total": score + roll.total, "tiebreak": []}
        # ties: higher score first, then roll-offs among those still level
        groups: dict[tuple[int, int], list[str]] = {}
        for cid in able:
            groups.setdefault((scores[cid]["total"], scores[cid]["score"]), []).append(cid)
        for group in groups.values():
            pending = [group]
            while pending:
                tied = pending.pop()
                if len(tied) < 2:
                    continue
                level: dict[int, list[str]] = {}
                for cid in tied:
                    roll = rolled_by(dice, cid).roll(1, 6, f"{state['combatants'][cid]['name']} initiative tie-break")
                    rolls.append(roll)
                    scores[cid]["tiebreak"].append(roll.total)
                    level.setdefault(roll.total, []).append(cid)
                pending.extend(level.values())
        order = sorted(able, key=lambda cid: (-scores[cid]["total"], -scores[cid]["score"],
                                              [-t for t in scores[cid]["tiebreak"]]))
        state["order"] = order
        state["initiative"] = scores
        state["turn_index"] = 0
        text = ", ".join(f"{state['combatants'][cid]['name']} {scores[cid]['total']}" for cid in order)
        names = ", ".join(state["combatants"][cid]["name"] for cid in order)
        # the totals come from each combatant's Initiative: the others hear the order and see the dice
        events.append(event("round.started", f"Action turn {state['round']}. Initiative: {text}.", rolls=rolls,
                            visibility=GM_ONLY, others=told(f"Action turn {state['round']}. The order: {names}.", rolls=rolls,
                                                            round=state["round"], order=order),
                            round=state["round"], order=order))
        self._begin_turn(state, events)

    def _begin_turn(self, state: State, events: list[Event]) -> None:
        """Make the next able combatant in the order active (starting a new round is left to the caller)."""
        while state["turn_index"] < len(state["order"]):
            cid = state["order"][state["turn_index"]]
            c = state["combatants"][cid]
            if _able(c):
                state["active"] = cid
                state["turn"] = self._fresh_turn()
                c["full_defence"] = False
                c["aggressive"] = False
                events.append(event("turn.started", f"{c['name']}'s turn.", combatant=cid))
                return
            state["turn_index"] += 1
        state["active"] = None

    def _end_turn(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        cid = state["active"]
        if cid is not None:
            c = state["combatants"][cid]
            if c["aim"] is not None:
                c["aim"]["turns"] -= 1
                c["aim"]["ready"] = True
                if c["aim"]["turns"] <= 0:
                    c["aim"] = None
            if "surprised" in c["conditions"]:
                c["conditions"].remove("surprised")
            events.append(event("turn.ended", f"{c['name']} ends its turn.", combatant=cid))
        state["turn_index"] += 1
        self._begin_turn(state, events)
        if state["active"] is None and state["status"] == "active":
            self._start_round(state, dice, events)

    def _check_end(self, state: State, events: list[Event]) -> None:
        sides = sorted({c["side"] for c in state["combatants"].values() if _able(c)})
        if len(sides) > 1:
            return
        state["status"] = "ended"
        state["pending"] = None
        state["active"] = None
        if sides:
            winners = [c["name"] for c in state["combatants"].values() if c["side"] == sides[0] and _able(c)]
            state["outcome"] = {"winner": sides[0], "text": f"Side {sides[0]} wins ({', '.join(winners)} standing)."}
        else:
            state["outcome"] = {"winner": None, "text": "Nobody is left standing."}
        events.append(event("battle.ended", state["outcome"]["text"], outcome=state["outcome"]))

    # --- modifiers -----------------------------------------------------------------------------
    def _condition_mods(self, c: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
        mods = []
        hurt = c["wounds"] + c["traumas"]
        if hurt:
            label = ", ".join(_count(n, w) for n, w in ((c["wounds"], "wound"), (c["traumas"], "trauma")) if n)
            mods.append({"label": label, "value": -WOUND_PENALTY * hurt})
        for m in c["modifiers"]:
            if m["applies"] in (kind, "all"):
                mods.append({"label": m["label"], "value": m["value"], "gm": True})
        return mods

    def attack_modifiers(
        self, state: State, attacker_id: str, target_id: str, weapon: Mapping[str, Any], choices: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The attacker's modifiers and extra damage dice for one attack (without the pool bonus)."""
        a, t = state["combatants"][attacker_id], state["combatants"][target_id]
        mods: list[dict[str, Any]] = []
        extra: list[dict[str, Any]] = []
        melee = weapon["skill"] == "melee"
        if not melee:
            band = range_band(_metres(state, a, t), weapon["range"])
            mods.append({"label": f"range: {band['band']}", "value": band["modifier"]})
        full_move = self._full_move_made(state, a)
        if melee and choices.get("charge"):
            mods.append({"label": "charging", "value": CHARGE_MODIFIER})
            extra.append({"label": "charge", "dice": list(CHARGE_DICE)})
        elif full_move:
            mods.append({"label": "full move", "value": FULL_MOVE_MODIFIER})
        style = "aggressive" if melee and choices.get("aggressive") else choices.get("mode", "single")
        if style in MODE_BONUS:
            accuracy, dice = MODE_BONUS[style]
            name = "aggressive melee" if style == "aggressive" else MODES[style]
            if choices.get("bonus") == "accuracy":
                mods.append({"label": name, "value": accuracy})
            else:
                extra.append({"label": name, "dice": list(dice)})
        if choices.get("superior_position"):
            mods.append({"label": "superior position", "value": SUPERIOR_POSITION})
        if choices.get("called_shot"):
            mods.append({"label": "called shot", "value": CALLED_SHOT})
        if choices.get("one_handed") and weapon.get("two_handed"):
            mods.append({"label": "two-handed weapon in one hand", "value": ONE_HANDED})
        label, size_mod = SIZES[t["size"]]
        if size_mod:
            mods.append({"label": f"target {label}", "value": size_mod})
        vis = choices.get("visibility", "clear")
        if VISIBILITY[vis][1]:
            mods.append({"label": VISIBILITY[vis][0], "value": VISIBILITY[vis][1]})
        if self._aim_counts(a, target_id, weapon, choices.get("mode", "single")):
            mods.append({"label": "aimed", "value": a["aim"]["bonus"]})
        mods.extend(self._condition_mods(a, "attack"))
        return mods, extra

    @staticmethod
    def _aim_ready(c: Mapping[str, Any], target_id: str) -> bool:
        """Whether the combatant holds an aim at this target that its next ranged attack on it would use."""
        aim = c.get("aim")
        return bool(aim and aim["target"] == target_id and aim.get("ready", True))

    def _aim_counts(self, c: Mapping[str, Any], target_id: str, weapon: Mapping[str, Any], mode: str) -> bool:
        """An aim helps a ranged attack on its target fired as single shots only (ruling 10)."""
        return weapon["skill"] != "melee" and mode in AIM_MODES and self._aim_ready(c, target_id)

    def defence_options(self, state: State, pending: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The defences the defender may choose, each with its target number."""
        d = state["combatants"][pending["defender"]]
        mods = self._condition_mods(d, "defence")
        if d["full_defence"]:
            mods.insert(0, {"label": "full defence", "value": FULL_DEFENCE_BONUS})
        # an aggressive attack of its own lowers only its Fray tests until its next action (ruling 10)
        fray_mods = ([{"label": "own aggressive attack", "value": AGGRESSIVE_DEFENCE_PENALTY}] + mods
                     if d["aggressive"] else mods)
        if pending["skill"] == "melee":
            options = [("melee", f"Block or parry with Melee {d['melee']}", d["melee"], "Melee", mods),
                       ("fray", f"Dodge with Fray {d['fray']}", d["fray"], "Fray", fray_mods)]
        else:
            options = [("fray", f"Dodge with half Fray ({d['fray']} ÷ 2 = {halve(d['fray'])})", halve(d["fray"]),
                        "half Fray", fray_mods)]
        return [{"method": m, "label": label, "skill": skill, "skill_label": sl, "mods": list(ms),
                 "target": target_number(skill, ms)} for m, label, skill, sl, ms in options]

    # --- apply ------------------------------------------------------------------------------------
    def authorize(self, state: State, declaration: Mapping[str, Any], viewer: Viewer) -> None:
        """The generic checks, after making sure a named combatant is at least an id (not a list or object)."""
        if isinstance(declaration, Mapping) and "combatant" in declaration:
            cid = declaration["combatant"]
            if cid is not None and not isinstance(cid, str):
                raise InvalidDeclaration("combatant must be a combatant id")
        super().authorize(state, declaration, viewer)

    def apply(
        self, state: State, declaration: Mapping[str, Any], viewer: Viewer, dice: DiceSource
    ) -> tuple[State, list[Event]]:
        if not isinstance(declaration, Mapping):
            raise InvalidDeclaration("a declaration must be an object")
        kind = declaration.get("type")
        handler = self.handler(kind)
        if handler is None:
            raise InvalidDeclaration(f"unknown declaration type {kind!r}")
        if state.get("status") != "active":
            raise IllegalDeclaration("the battle is not running")
        if kind in self.gm_declarations and not viewer.is_gm:
            raise IllegalDeclaration(f"only the GM may send {kind}")
        new = copy.deepcopy(state)
        events: list[Event] = []
        handler(new, declaration, viewer, dice, events)
        if new["status"] == "active":
            self._run_computers(new, dice, events)
        return new, events

    # field helpers
    def _combatant(self, state: State, declaration: Mapping[str, Any], key: str = "combatant") -> dict[str, Any]:
        return state["combatants"][read.combatant(declaration, key, state)]

    @staticmethod
    def _flag(declaration: Mapping[str, Any], key: str) -> bool:
        value = declaration.get(key, False)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise InvalidDeclaration(f"{key} must be true or false")
        return value

    @staticmethod
    def _choice(declaration: Mapping[str, Any], key: str, allowed: Mapping[str, Any] | tuple[str, ...],
                default: str) -> str:
        value = declaration.get(key, default)
        if value is None:
            value = default
        if not isinstance(value, str) or value not in allowed:
            raise InvalidDeclaration(f"{key} must be one of {', '.join(allowed)} (got {value!r})")
        return value

    def _require_active(self, state: State, c: Mapping[str, Any]) -> None:
        if state["pending"] is not None:
            raise IllegalDeclaration("an attack is being resolved; wait until it is over")
        if state["active"] != c["id"]:
            raise IllegalDeclaration(f"it is not {c['name']}'s turn")

    # move
    @contract.declaration("move")
    def _do_move(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                 events: list[Event]) -> None:
        c = self._combatant(state, d)
        x, y = read.whole(d, "x"), read.whole(d, "y")
        opts = state["options"]
        if not (0 <= x < opts["width"] and 0 <= y < opts["height"]):  # a legal question here (tested so)
            raise IllegalDeclaration(f"square ({x}, {y}) is off the grid")
        if (x, y) == (c["x"], c["y"]):
            raise IllegalDeclaration(f"{c['name']} is already there")
        for other in state["combatants"].values():
            if other["id"] != c["id"] and (other["x"], other["y"]) == (x, y) and other["state"] != "dead":
                raise IllegalDeclaration(f"{other['name']} stands on that square")
        blocked = terrain.blocked_of(state)
        if (x, y) in blocked:
            raise IllegalDeclaration(f"square ({x}, {y}) is blocked")
        squares = terrain.path_length((c["x"], c["y"]), (x, y), blocked, opts["width"], opts["height"])
        if squares is None and not viewer.is_gm:
            raise IllegalDeclaration(f"blocked squares leave {c['name']} no way to ({x}, {y})")
        if squares is None:  # the GM may set a token down anywhere free, even where no way leads
            squares = math.hypot(x - c["x"], y - c["y"])
        metres = round(squares * opts["metres_per_square"], 2)
        own_turn = state["active"] == c["id"] and state["pending"] is None
        if not viewer.is_gm:
            self._require_active(state, c)
            if "prone" in c["conditions"]:
                raise IllegalDeclaration(f"{c['name']} is knocked down; stand up first")
            left = c["full_move"] - state["turn"]["moved"]
            if metres > left + 1e-9:
                raise IllegalDeclaration(f"{c['name']} can move only {left:g} m more this turn (that is {metres:g} m)")
        if own_turn:
            state["turn"]["moved"] = round(state["turn"]["moved"] + metres, 2)
        c["x"], c["y"] = x, y
        text = f"{c['name']} moves {metres:g} m."
        if own_turn and state["turn"]["moved"] > c["base_move"] + 1e-9:
            text += " That is a full move (−20 to its attacks this turn, or −10 for a charge)."
        events.append(event("combatant.moved", text, combatant=c["id"], x=x, y=y, metres=metres))

    # stand up, full defence, aim, end turn
    @contract.declaration("stand")
    def _do_stand(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        if "prone" not in c["conditions"]:
            raise IllegalDeclaration(f"{c['name']} is not knocked down")
        c["conditions"].remove("prone")
        events.append(event("combatant.stood", f"{c['name']} gets back up.", combatant=c["id"]))

    @contract.declaration("full_defence")
    def _do_full_defence(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                         events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
        state["turn"]["complex_used"] = True
        c["full_defence"] = True
        events.append(event("defence.declared", f"{c['name']} goes on full defence (+30 to defend until its next "
                            "turn).", combatant=c["id"]))

    @contract.declaration("aim")
    def _do_aim(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        target = self._combatant(state, d, "target")
        if target["id"] == c["id"]:
            raise IllegalDeclaration("a combatant cannot aim at itself")
        careful = self._flag(d, "complex")
        if not self._can_aim(c):
            raise IllegalDeclaration(f"{c['name']} has no ranged weapon that fires single shots, so it cannot aim "
                                     "(an aim helps single shots only)")
        if careful:
            if state["turn"]["complex_used"]:
                raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
            state["turn"]["complex_used"] = True
            c["aim"] = {"target": target["id"], "bonus": AIM_COMPLEX, "turns": 2, "ready": False}
            text = f"{c['name']} takes careful aim at {target['name']} (+30 to single shots on its next turn)."
        else:
            if state["turn"]["quick_aimed"]:
                raise IllegalDeclaration(f"{c['name']} has already aimed this turn")
            if state["turn"]["complex_used"]:
                raise IllegalDeclaration("a quick aim helps only an attack still to come this turn")
            state["turn"]["quick_aimed"] = True
            c["aim"] = {"target": target["id"], "bonus": AIM_QUICK, "turns": 1, "ready": True}
            text = f"{c['name']} aims at {target['name']} (+10 to a single-shot attack on it this turn)."
        events.append(event("aim.taken", text, combatant=c["id"], target=target["id"]))

    @contract.declaration("roll_initiative", by="gm")
    def _do_roll_initiative(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        """The GM starts the first action turn of a battle whose initiative is rolled with real dice."""
        if not state.get("initiative_due"):
            raise IllegalDeclaration("initiative is rolled already: the action turn is under way")
        del state["initiative_due"]
        self._start_round(state, dice, events)

    @contract.declaration("end_turn")
    def _do_end_turn(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                     events: list[Event]) -> None:
        c = self._combatant(state, d)
        self._require_active(state, c)
        self._end_turn(state, dice, events)

    # attack
    def _weapon(self, c: Mapping[str, Any], d: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        index = read.whole(d, "weapon")
        if not 0 <= index < len(c["weapons"]):
            raise InvalidDeclaration(f"weapon must be 0 to {len(c['weapons']) - 1} for {c['name']}")
        if c["weapons"][index].get("dropped_at"):
            raise IllegalDeclaration(f"{c['name']}'s {c['weapons'][index]['name']} lies on the ground: pick it up "
                                     "first, or fight with something else")
        return index, c["weapons"][index]

    @staticmethod
    def _called_aim(d: Mapping[str, Any]) -> str | None:
        """A called shot's aim (ruling 11), or None; true stands for bypassing armour, the one aim there once was."""
        value = d.get("called_shot")
        if value is None or value is False or value == "none":
            return None
        if value is True:
            return "armour"
        if not isinstance(value, str) or value not in CALLED_AIMS:
            raise InvalidDeclaration(f"called_shot must be one of none, {', '.join(CALLED_AIMS)} (got {value!r})")
        return value

    @staticmethod
    def _called_spot(d: Mapping[str, Any]) -> str:
        spot = d.get("called_spot")
        words = " ".join(spot.split()) if isinstance(spot, str) else ""
        if not words or len(words) > SPOT_LENGTH or not words.isprintable():
            raise InvalidDeclaration(f"called_spot must name the spot in 1 to {SPOT_LENGTH} characters "
                                     "(the head, the gun hand, a sensor)")
        return words

    @staticmethod
    def held_weapon(c: Mapping[str, Any]) -> int | None:
        """The weapon in the combatant's hand, which a disarming called shot knocks away: the one it last attacked
        with, else the first it carries; never a part of its body (fists, grafted claws), never one on the ground."""
        loose = [i for i, w in enumerate(c["weapons"]) if w["id"] not in BODY_WEAPONS and not w.get("dropped_at")]
        return c.get("held") if c.get("held") in loose else (loose[0] if loose else None)

    def _pool_choice(self, c: Mapping[str, Any], d: Mapping[str, Any]) -> str | None:
        pool = self._choice(d, "pool", ("none",) + POOLS, "none")
        if pool == "none":
            return None
        if c["pools"][pool] < 1:
            raise IllegalDeclaration(f"{c['name']} has no {POOL_LABELS[pool]} left")
        return pool

    @contract.declaration("attack")
    def _do_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        a = self._combatant(state, d)
        self._require_active(state, a)
        if not _able(a):
            raise IllegalDeclaration(f"{a['name']} cannot act")
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{a['name']} has already used its complex action this turn")
        t = self._combatant(state, d, "target")
        if t["id"] == a["id"]:
            raise IllegalDeclaration("a combatant cannot attack itself")
        if t["state"] == "dead":
            raise IllegalDeclaration(f"{t['name']} is already dead")
        index, weapon = self._weapon(a, d)
        melee = weapon["skill"] == "melee"
        mode = self._choice(d, "mode", MODES, "single")
        if mode not in weapon["modes"]:
            raise IllegalDeclaration(f"the {weapon['name']} cannot fire {MODES[mode]}")
        choices = {
            "mode": mode,
            "bonus": self._choice(d, "bonus", ("damage", "accuracy"), "damage"),
            "charge": self._flag(d, "charge"),
            "aggressive": self._flag(d, "aggressive"),
            "superior_position": self._flag(d, "superior_position"),
            "called_shot": self._called_aim(d),
            "one_handed": self._flag(d, "one_handed"),
            "visibility": self._choice(d, "visibility", VISIBILITY, "clear"),
        }
        if melee and not _adjacent(a, t, state):
            raise IllegalDeclaration(f"{t['name']} is out of reach of a melee attack (move next to it first)")
        if (choices["charge"] or choices["aggressive"]) and not melee:
            raise IllegalDeclaration("charging and aggressive attacks are melee attacks")
        if choices["charge"] and not self._full_move_made(state, a):
            raise IllegalDeclaration(
                f"{a['name']} cannot charge: a charge needs a full move first, more than its base move of "
                f"{a['base_move']:g} m (it has moved {state['turn']['moved']:g} m this turn)")
        if mode not in AIM_MODES and not melee and self._aim_ready(a, t["id"]):
            raise IllegalDeclaration(
                f"{a['name']} has aimed at {t['name']}, and an aim works only with single shots: fire single "
                f"shots at {t['name']}, or fire {MODES[mode]} at someone else")
        if choices["one_handed"] and not weapon["two_handed"]:
            raise IllegalDeclaration(f"the {weapon['name']} is already a one-handed weapon")
        if choices["called_shot"] == "spot":
            choices["called_spot"] = self._called_spot(d)
        if choices["called_shot"] == "disarm" and self.held_weapon(t) is None:
            raise IllegalDeclaration(f"{t['name']} holds no weapon that a called shot could knock away")
        pool = self._pool_choice(a, d)
        mods, extra = self.attack_modifiers(state, a["id"], t["id"], weapon, choices)
        skill = a[weapon["skill"]]
        pool_bonus = POOL_BONUS if pool else 0
        target = target_number(skill, mods, pool_bonus)
        state["turn"]["complex_used"] = True
        state["turn"]["acted"] = True
        if weapon["id"] not in BODY_WEAPONS:
            a["held"] = index
        pending = {
            "attacker": a["id"], "defender": t["id"], "weapon_index": index, "weapon": copy.deepcopy(weapon),
            "skill": weapon["skill"], "skill_value": skill, "choices": choices, "mods": mods, "extra": extra,
            "pool": pool, "target": target, "metres": _metres(state, a, t),
            "phase": "defence", "defence": None, "rolls": None, "post": {},
        }
        state["pending"] = pending
        if choices["aggressive"]:
            a["aggressive"] = True
        attack = (f"{a['name']} attacks {t['name']} with the {weapon['name']}{'' if mode == 'single' else ' (' + MODES[mode] + ')'}"
                  f"{', a called shot ' + _called_words(choices) if choices['called_shot'] else ''}")
        text = f"{attack}: target number {target} ({_breakdown(SKILLS[weapon['skill']], skill, mods, pool_bonus)})."
        events.append(event("attack.declared", text, visibility=combatant_visibility(a["id"]),
                            others=told(f"{attack}.", attacker=a["id"], defender=t["id"]),
                            attacker=a["id"], defender=t["id"], target=target))
        if not self._can_defend(t):
            why = t["state"] if t["state"] != "ok" else next(
                c for c in ("unconscious", "surprised") if c in t["conditions"])
            events.append(event("defence.skipped", f"{t['name']} cannot defend ({why}).", combatant=t["id"]))
            self._roll_exchange(state, dice, events)

    @staticmethod
    def _can_aim(c: Mapping[str, Any]) -> bool:
        """Aiming needs a ranged weapon able to fire single shots (ruling 10)."""
        return any(w["skill"] != "melee" and any(m in AIM_MODES for m in w["modes"]) and not w.get("dropped_at")
                   for w in c["weapons"])

    @staticmethod
    def _full_move_made(state: State, c: Mapping[str, Any]) -> bool:
        """Whether the combatant has moved more than its base move this turn, as a charge needs (ruling 10)."""
        return state["active"] == c["id"] and state["turn"]["moved"] > c["base_move"] + 1e-9

    @staticmethod
    def _can_defend(c: Mapping[str, Any]) -> bool:
        return _able(c) and "surprised" not in c["conditions"]

    @contract.declaration("cancel_attack")
    def _do_cancel_attack(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                          events: list[Event]) -> None:
        a = self._combatant(state, d)
        p = state["pending"]
        if p is None or p["attacker"] != a["id"] or p["phase"] != "defence":
            raise IllegalDeclaration("there is no attack of this combatant waiting for a defence")
        state["pending"] = None
        state["turn"]["complex_used"] = False
        a["aggressive"] = False
        events.append(event("attack.withdrawn", f"{a['name']} thinks better of the attack.", combatant=a["id"]))

    @contract.declaration("defend")
    def _do_defend(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        c = self._combatant(state, d)
        p = state["pending"]
        if p is None or p["phase"] != "defence" or p["defender"] != c["id"]:
            raise IllegalDeclaration(f"{c['name']} has no attack to defend against now")
        options = {o["method"]: o for o in self.defence_options(state, p)}
        method = self._choice(d, "method", tuple(options), next(iter(options)))
        chosen = options[method]
        mods = list(chosen["mods"])
        if self._flag(d, "superior_position"):
            mods.append({"label": "superior position", "value": SUPERIOR_POSITION})
        pool = self._pool_choice(c, d)
        pool_bonus = POOL_BONUS if pool else 0
        target = target_number(chosen["skill"], mods, pool_bonus)
        p["defence"] = {"method": method, "skill_label": chosen["skill_label"], "skill_value": chosen["skill"],
                        "mods": mods, "pool": pool, "target": target}
        events.append(event("defence.declared", f"{c['name']} defends: target number {target} "
                            f"({_breakdown(chosen['skill_label'], chosen['skill'], mods, pool_bonus)}).",
                            visibility=combatant_visibility(c["id"]),
                            others=told(f"{c['name']} {DEFENDS[method]}.", combatant=c["id"], method=method),
                            combatant=c["id"], target=target))
        self._roll_exchange(state, dice, events)

    def _consume_modifiers(self, c: dict[str, Any], kind: str) -> None:
        c["modifiers"] = [m for m in c["modifiers"] if m["lasting"] or m["applies"] not in (kind, "all")]

    def _roll_exchange(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        p = state["pending"]
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        if p["pool"]:
            a["pools"][p["pool"]] -= 1
        self._consume_modifiers(a, "attack")
        aim = a.get("aim")
        if p["skill"] != "melee" and aim and aim["target"] == t["id"] and aim.get("ready", True):
            a["aim"] = None
        rolls = [rolled_by(dice, a["id"]).randint(0, 99, f"{a['name']} attack ({SKILLS[p['skill']]})")]
        p["rolls"] = {"attacker": judge(rolls[0].total, p["target"]), "defender": None}
        p["post"] = {"attacker": {"used": bool(p["pool"]), "accepted": False}}
        if p["defence"] is not None:
            dfn = p["defence"]
            if dfn["pool"]:
                t["pools"][dfn["pool"]] -= 1
            self._consume_modifiers(t, "defence")
            rolls.append(rolled_by(dice, t["id"]).randint(0, 99, f"{t['name']} defence ({dfn['skill_label']})"))
            p["rolls"]["defender"] = judge(rolls[1].total, dfn["target"])
            p["post"]["defender"] = {"used": bool(dfn["pool"]), "accepted": False}
        p["phase"] = "reaction"
        ar, dr = p["rolls"]["attacker"], p["rolls"]["defender"]
        text = f"{a['name']} rolls {ar['roll']:02d} against {ar['target']}: {ar['label']}."
        words = f"{a['name']} rolls {ar['roll']:02d}: {ar['label']}."
        if dr is not None:
            text += f" {t['name']} rolls {dr['roll']:02d} against {dr['target']}: {dr['label']}."
            words += f" {t['name']} rolls {dr['roll']:02d}: {dr['label']}."
        result = contest(ar, dr)
        standing = f" As it stands: {'a hit' if result == 'hit' else 'a miss'}."
        # both sides' target numbers: the whole line for the GM, the dice and what they mean for everyone
        events.append(event("attack.rolled", text + standing, rolls=rolls, visibility=GM_ONLY,
                            others=told(words + standing, rolls=rolls, attacker=a["id"], defender=t["id"],
                                        attack=_without_target(ar), defence=_without_target(dr), standing=result),
                            attacker=a["id"], defender=t["id"], attack=ar, defence=dr, standing=result))
        self._settle_reactions(state, dice, events)

    # post-roll pool use
    def reaction_choices(self, state: State, side: str) -> list[dict[str, Any]]:
        """What one side of the pending exchange may still spend after the roll."""
        p = state["pending"]
        if p is None or p["phase"] != "reaction" or side not in p["post"]:
            return []
        post = p["post"][side]
        if post["used"] or post["accepted"]:
            return []
        c = state["combatants"][p["attacker" if side == "attacker" else "defender"]]
        result = p["rolls"][side]
        choices = []
        for pool in POOLS:
            if c["pools"][pool] < 1:
                continue
            label = POOL_LABELS[pool]
            if not is_double(result["roll"]):
                flipped = judge(flip(result["roll"]), result["target"])
                choices.append({"pool": pool, "use": "flip", "label": f"{label}: swap the digits "
                                f"{result['roll']:02d} → {flipped['roll']:02d} ({flipped['label']})"})
            if side == "attacker" and result["success"] and not result["critical"] and result["superior"] < 2:
                choices.append({"pool": pool, "use": "upgrade",
                                "label": f"{label}: one more superior success (+1d6 damage on a hit)"})
            if result["critical"] and not result["success"]:
                choices.append({"pool": pool, "use": "soften",
                                "label": f"{label}: make the critical failure a plain failure"})
        return choices

    @contract.declaration("spend")
    def _do_spend(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                  events: list[Event]) -> None:
        c = self._combatant(state, d)
        side = self._reaction_side(state, c)
        pool = self._choice(d, "pool", POOLS, "flex")
        use = self._choice(d, "use", ("flip", "upgrade", "soften"), "flip")
        allowed = {(o["pool"], o["use"]) for o in self.reaction_choices(state, side)}
        if (pool, use) not in allowed:
            raise IllegalDeclaration(f"{c['name']} cannot spend {POOL_LABELS[pool]} to {use} now")
        p = state["pending"]
        before = p["rolls"][side]
        if use == "flip":
            after = judge(flip(before["roll"]), before["target"])
            text = f"to swap {before['roll']:02d} into {after['roll']:02d}: "
        elif use == "upgrade":
            after = judge(before["roll"], before["target"], 1)
            text = "for one more superior success: "
        else:
            after = dict(before, critical=False, label="failure")
            text = "to soften the critical failure: "
        after["pool_use"] = use
        p["rolls"][side] = after
        c["pools"][pool] -= 1
        p["post"][side]["used"] = True
        p["post"][side]["accepted"] = True
        other = "defender" if side == "attacker" else "attacker"
        if other in p["post"]:
            p["post"][other]["accepted"] = False
        result = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        text += f"{after['label']}. As it stands: {'a hit' if result == 'hit' else 'a miss'}."
        # which pool, and so how many points are left in it, is the combatant's own number
        events.append(event("pool.spent", f"{c['name']} spends {POOL_LABELS[pool]} {text}", visibility=combatant_visibility(c["id"]),
                            others=told(f"{c['name']} spends a pool point {text}", combatant=c["id"], use=use,
                                        result=_without_target(after), standing=result),
                            combatant=c["id"], pool=pool, use=use, result=after, standing=result))
        self._settle_reactions(state, dice, events)

    def _reaction_side(self, state: State, c: Mapping[str, Any]) -> str:
        p = state["pending"]
        if p is None or p["phase"] != "reaction":
            raise IllegalDeclaration("there are no rolled dice waiting for a pool spend")
        if c["id"] == p["attacker"]:
            return "attacker"
        if c["id"] == p["defender"] and "defender" in p["post"]:
            return "defender"
        raise IllegalDeclaration(f"{c['name']} has no roll in this exchange")

    @contract.declaration("accept")
    def _do_accept(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        c = self._combatant(state, d)
        side = self._reaction_side(state, c)
        post = state["pending"]["post"][side]
        if post["accepted"]:
            raise IllegalDeclaration(f"{c['name']} has already accepted the roll")
        post["accepted"] = True
        events.append(event("roll.accepted", f"{c['name']} accepts the dice.", combatant=c["id"]))
        self._settle_reactions(state, dice, events)

    def _settle_reactions(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        p = state["pending"]
        for side, post in p["post"].items():
            if not post["accepted"] and not self.reaction_choices(state, side):
                post["accepted"] = True
        if all(post["accepted"] for post in p["post"].values()):
            self._resolve(state, dice, events)

    # damage
    def _resolve(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        p = state["pending"]
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        ar, dr = p["rolls"]["attacker"], p["rolls"]["defender"]
        result = contest(ar, dr)
        exchange: dict[str, Any] = {
            "attacker": a["id"], "defender": t["id"], "weapon": p["weapon"]["name"], "attack": ar, "defence": dr,
            "result": result, "round": state["round"],
        }
        state["pending"] = None
        state["last_exchange"] = exchange
        aim = _called_aim_of(p["choices"])
        if aim:
            exchange["called_shot"] = {"aim": aim, "label": _called_words(p["choices"]), "came_off": False,
                                       "spot": p["choices"].get("called_spot")}
        if result == "miss":
            why = "the attack fails" if not ar["success"] else f"{t['name']} defends successfully"
            self._called_missed(exchange, a)
            events.append(event("attack.missed", f"{a['name']} misses {t['name']}: {why}."
                                f"{' ' + exchange['called_shot']['text'] if aim else ''}",
                                attacker=a["id"], defender=t["id"], **self._called_data(exchange)))
            return
        if p["choices"]["visibility"] == "blind_chance":
            chance = rolled_by(dice, a["id"]).randint(0, 99, f"{a['name']} blind attack (miss on 00-49)")
            exchange["blind_roll"] = chance.total
            if chance.total < 50:
                exchange["result"] = "miss"
                self._called_missed(exchange, a)
                events.append(event("attack.missed", f"{a['name']} strikes blindly and misses {t['name']} "
                                    f"(rolled {chance.total:02d}, needed 50 or more)."
                                    f"{' ' + exchange['called_shot']['text'] if aim else ''}", rolls=[chance],
                                    attacker=a["id"], defender=t["id"], **self._called_data(exchange)))
                return
            events.append(event("chance.passed", f"The blind attack finds its mark (rolled {chance.total:02d}).",
                                rolls=[chance], attacker=a["id"]))
        crit = ar["critical"]
        what = "critical hit" if crit else ("hit" if not ar["superior"] else
                                            f"hit with {_count(ar['superior'], 'superior success')}")
        events.append(event("attack.hit", f"{a['name']} scores a {what} on {t['name']}.",
                            attacker=a["id"], defender=t["id"], critical=crit, superior=ar["superior"]))
        came_off = bool(aim) and (crit or ar["superior"] >= 1)
        if aim:
            self._called_hit(exchange, a, t, came_off, events)
        if came_off and aim == "disarm":  # the weapon falls instead of the target taking damage
            self._check_end(state, events)
            return
        count, sides, bonus = parse_dv(p["weapon"]["dv"])
        own = rolled_by(dice, a["id"])
        rolls = [own.roll(count, sides, f"{p['weapon']['name']} damage", bonus)]
        for extra in p["extra"]:
            rolls.append(own.roll(extra["dice"][0], extra["dice"][1], f"{extra['label']} damage"))
        if ar["superior"] and not crit:
            rolls.append(own.roll(ar["superior"], 6, "superior successes"))
        rolled = sum(r.total for r in rolls)
        total = max(0, rolled * 2 if crit else rolled)
        kind = p["weapon"]["armour"]
        armour_full = t["energy_armour"] if kind == "energy" else t["kinetic_armour"]
        armour = armour_after_piercing(armour_full, p["weapon"]["ap"])
        bypass = came_off and aim == "armour"
        if bypass:
            armour = 0
        through = max(0, total - armour)
        wounds = wounds_from(through, t["wound_threshold"])
        t["damage"] += through
        t["wounds"] += wounds
        parts = [f"{rolled}" + (f", doubled to {total}" if crit else "")]
        if bypass:
            parts.append("the called shot slips past the armour")
        else:
            parts.append(f"{kind} armour {armour}" + (f" (halved from {armour_full})" if p["weapon"]["ap"] else ""))
        text = f"Damage to {t['name']}: {'; '.join(parts)}; {through} gets through"
        text += f", {_count(wounds, 'wound')}." if wounds else "."
        exchange.update({"damage_rolled": rolled, "damage": total, "armour": armour, "through": through,
                         "wounds": wounds})
        # the armour is the target's number, and so is what gets through (its damage) unless the GM
        # shows everyone's Durability numbers; the dice and the wounds are for all to see
        shown = {"through": through} if state["reveal_health"] else {}
        words = f"Damage to {t['name']}: {parts[0]}" + (f"; {through} gets through" if shown else "")
        words += f", {_count(wounds, 'wound')}." if wounds else "."
        events.append(event("damage.dealt", text, rolls=rolls, visibility=combatant_visibility(t["id"]),
                            others=told(words, rolls=rolls, combatant=t["id"], rolled=rolled, total=total, wounds=wounds,
                                        critical=crit, **shown),
                            combatant=t["id"], rolled=rolled, total=total, armour=armour, through=through, wounds=wounds,
                            critical=crit))
        if t["damage"] >= t["death_rating"] and t["state"] != "dead":
            t["state"] = "dead"
            events.append(event("combatant.killed", f"{t['name']} is killed.", combatant=t["id"]))
        elif t["damage"] >= t["durability"] and t["state"] == "ok":
            t["state"] = "incapacitated"
            events.append(event("combatant.incapacitated", f"{t['name']} is incapacitated.", combatant=t["id"]))
        elif wounds and _able(t):
            self._wound_check(t, wounds, dice, events, exchange)
        self._check_end(state, events)

    # called shots (ruling 11): the words name the aim and whether it came off, never a hidden number
    @staticmethod
    def _called_data(exchange: Mapping[str, Any]) -> dict[str, Any]:
        return {"called_shot": copy.deepcopy(exchange["called_shot"])} if "called_shot" in exchange else {}

    @staticmethod
    def _called_missed(exchange: dict[str, Any], a: Mapping[str, Any]) -> None:
        if "called_shot" in exchange:
            exchange["called_shot"]["text"] = f"{a['name']}'s called shot {exchange['called_shot']['label']} " \
                                              "does not come off."

    def _called_hit(self, exchange: dict[str, Any], a: Mapping[str, Any], t: dict[str, Any], came_off: bool,
                    events: list[Event]) -> None:
        called = exchange["called_shot"]
        called["came_off"] = came_off
        head = f"{a['name']}'s called shot {called['label']}"
        if not came_off:
            called["text"] = f"{head} does not come off: without a superior success it is an ordinary hit."
        elif called["aim"] == "armour":
            called["text"] = f"{head} comes off: the hit slips past {t['name']}'s armour."
        elif called["aim"] == "spot":
            called["text"] = (f"{head} comes off: the hit lands on {t['name']} right there, and the GM rules "
                              "what that does.")
        else:
            index = self.held_weapon(t)
            weapon = t["weapons"][index]
            weapon["dropped_at"] = [t["x"], t["y"]]
            if t.get("held") == index:
                t["held"] = None
            if not any(w["skill"] == "melee" and not w.get("dropped_at") for w in t["weapons"]):
                t["weapons"].append({"id": "unarmed", **copy.deepcopy(WEAPONS["unarmed"])})
            called["weapon"] = weapon["name"]
            called["text"] = (f"{head} comes off: {t['name']} drops the {weapon['name']}, and the hit deals no "
                              "damage.")
        events.append(event("called_shot.came_off" if came_off else "called_shot.failed", called["text"],
                            attacker=a["id"], defender=t["id"], **self._called_data(exchange)))

    @contract.declaration("pick_up")
    def _do_pick_up(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        """A combatant takes back a weapon a called shot knocked from its hand: its complex action for the turn."""
        c = self._combatant(state, d)
        self._require_active(state, c)
        index = read.whole(d, "weapon")
        if not 0 <= index < len(c["weapons"]) or not c["weapons"][index].get("dropped_at"):
            raise IllegalDeclaration(f"{c['name']} has no such weapon on the ground")
        weapon = c["weapons"][index]
        if state["turn"]["complex_used"]:
            raise IllegalDeclaration(f"{c['name']} has already used its complex action this turn")
        if not self._within_reach(c, weapon["dropped_at"]):
            raise IllegalDeclaration(f"the {weapon['name']} lies out of {c['name']}'s reach: move next to it first")
        del weapon["dropped_at"]
        c["held"] = index
        state["turn"]["complex_used"] = True
        state["turn"]["acted"] = True
        events.append(event("weapon.picked_up", f"{c['name']} picks up the {weapon['name']}.", combatant=c["id"],
                            weapon=index))

    @staticmethod
    def _within_reach(c: Mapping[str, Any], square: list[int]) -> bool:
        return max(abs(c["x"] - square[0]), abs(c["y"] - square[1])) <= 1

    def _wound_check(self, t: dict[str, Any], wounds: int, dice: DiceSource, events: list[Event],
                     exchange: dict[str, Any]) -> None:
        """The SOM check a hit's wounds call for (rulings 6 and 9).

        The check counts every wound the target now has, the new ones included, and its traumas. One wound:
        failing knocks the target down. Two or more at once knock it down whatever the roll; the check then
        decides only whether it is also knocked out.
        """
        several = wounds >= 2
        check_target = t["som_check"] - WOUND_PENALTY * (t["wounds"] + t["traumas"])
        roll = rolled_by(dice, t["id"]).randint(0, 99, f"{t['name']} SOM check")
        res = judge(roll.total, check_target)
        exchange["som_check"] = res
        knocked_down = several or not res["success"]
        knocked_out = several and not res["success"]
        if knocked_down and "prone" not in t["conditions"]:
            t["conditions"].append("prone")
        if knocked_out and "unconscious" not in t["conditions"]:
            t["conditions"].append("unconscious")
        if knocked_out:
            outcome = "knocked out"
        elif several:
            outcome = f"knocked down by {_count(wounds, 'wound')} at once, but stays conscious"
        else:
            outcome = "knocked down" if knocked_down else "stays on its feet"
        exchange.update({"knocked_down": knocked_down, "knocked_out": knocked_out,
                         "som_text": f"{result_words(res)}, {outcome}"})
        hurt = ", ".join(_count(n, w) for n, w in ((t["wounds"], "wound"), (t["traumas"], "trauma")) if n)
        text = (f"{t['name']} rolls {res['roll']:02d} against SOM check {check_target} "
                f"({t['som_check']} {_signed(-WOUND_PENALTY * (t['wounds'] + t['traumas']))} for {hurt}): "
                f"{result_words(res)}, {outcome}.")
        events.append(event("check.passed" if res["success"] else "check.failed", text, rolls=[roll],
                            visibility=combatant_visibility(t["id"]),
                            others=told(f"{t['name']} rolls {res['roll']:02d} on its SOM check: {result_words(res)}, {outcome}.",
                                        rolls=[roll], combatant=t["id"], check=_without_target(res), knocked_down=knocked_down,
                                        knocked_out=knocked_out),
                            combatant=t["id"], check=res, knocked_down=knocked_down, knocked_out=knocked_out))

    # GM tools
    @contract.declaration("modifier", by="gm")
    def _do_modifier(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                     events: list[Event]) -> None:
        c = self._combatant(state, d)
        label = d.get("label")
        if not isinstance(label, str) or not label.strip() or len(label.strip()) > 40:
            raise InvalidDeclaration("label must be a short text (1 to 40 characters)")
        value = read.whole(d, "value")
        if not -60 <= value <= 60 or value == 0:
            raise InvalidDeclaration("value must be between −60 and +60 and not zero")
        applies = self._choice(d, "applies", ("attack", "defence", "all"), "all")
        lasting = self._flag(d, "lasting")
        mod = {"label": label.strip(), "value": value, "applies": applies, "lasting": lasting}
        p = state["pending"]
        if p is not None and p["phase"] == "defence" and not lasting and (
                c["id"] == p["attacker"] and applies in ("attack", "all")):
            p["mods"].append({"label": mod["label"], "value": value, "gm": True})
            p["target"] = target_number(p["skill_value"], p["mods"], POOL_BONUS if p["pool"] else 0)
            text = f"GM: {mod['label']} {_signed(value)} to {c['name']}'s attack; target number now {p['target']}."
        else:
            c["modifiers"].append(mod)
            scope = "lasting" if lasting else "next"
            text = f"GM: {mod['label']} {_signed(value)} to {c['name']}'s {scope} {applies if applies != 'all' else 'test'}s"
            text = text if lasting else text[:-1]
            text += "."
        # a combatant's modifiers are its own numbers: its player and the GM hear of them
        events.append(event("modifier.added", text, visibility=combatant_visibility(c["id"]), combatant=c["id"], modifier=mod))

    @contract.declaration("clear_modifiers", by="gm")
    def _do_clear_modifiers(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                            events: list[Event]) -> None:
        c = self._combatant(state, d)
        c["modifiers"] = []
        events.append(event("modifier.cleared", f"GM clears {c['name']}'s extra modifiers.", visibility=combatant_visibility(c["id"]),
                            combatant=c["id"]))

    @contract.declaration("condition", by="gm")
    def _do_condition(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                      events: list[Event]) -> None:
        c = self._combatant(state, d)
        cond = self._choice(d, "condition", CONDITIONS, "surprised")
        on = self._flag(d, "on")
        if on and cond not in c["conditions"]:
            c["conditions"].append(cond)
        elif not on and cond in c["conditions"]:
            c["conditions"].remove(cond)
        else:
            raise IllegalDeclaration(f"{c['name']} is {'already' if on else 'not'} {CONDITIONS[cond]}")
        events.append(event("condition.changed", f"{c['name']} is {'now' if on else 'no longer'} {CONDITIONS[cond]}.",
                            combatant=c["id"], condition=cond, on=on))
        if cond == "unconscious":
            if on and state["active"] == c["id"] and state["pending"] is None:
                self._end_turn(state, dice, events)
            self._check_end(state, events)

    @contract.declaration("adjust", by="gm")
    def _do_adjust(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        """GM correction: set a combatant's damage and wounds (healing, a mistake, an effect off the board)."""
        c = self._combatant(state, d)
        if state["pending"] is not None:
            raise IllegalDeclaration("finish the attack in progress first")
        damage, wounds = read.whole(d, "damage"), read.whole(d, "wounds")
        if not (0 <= damage <= 999 and 0 <= wounds <= 99):
            raise InvalidDeclaration("damage must be 0 to 999 and wounds 0 to 99")
        c["damage"], c["wounds"] = damage, wounds
        before = c["state"]
        c["state"] = "dead" if damage >= c["death_rating"] else "incapacitated" if damage >= c["durability"] else "ok"
        change = f" ({c['state'] if c['state'] != 'ok' else 'back in the fight'})" if c["state"] != before else ""
        # the damage total is hidden from other seats and spectators unless the GM reveals numbers
        text = f"GM sets {c['name']} to {damage} damage and {_count(wounds, 'wound')}{change}."
        words = told(text, combatant=c["id"], damage=damage, wounds=wounds) if state["reveal_health"] else told(
            f"GM corrects {c['name']}'s injuries: {_count(wounds, 'wound')}{change}.", combatant=c["id"], wounds=wounds)
        events.append(event("combatant.adjusted", text, visibility=combatant_visibility(c["id"]), others=words,
                            combatant=c["id"], damage=damage, wounds=wounds))
        if state["active"] == c["id"] and not _able(c):
            self._end_turn(state, dice, events)
        self._check_end(state, events)

    @contract.declaration("set_blocked", by="gm")
    def _do_set_blocked(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                        events: list[Event]) -> None:
        """The GM marks the blocked squares (the whole list): no token enters or crosses them."""
        opts = state["options"]
        blocked = terrain.clean_blocked(d.get("blocked"), opts["width"], opts["height"])
        for c in state["combatants"].values():
            if c["state"] != "dead" and [c["x"], c["y"]] in blocked:
                raise IllegalDeclaration(f"{c['name']} stands on ({c['x']}, {c['y']}): move it before blocking that square")
        state["blocked"] = blocked
        events.append(event("board.blocked", f"The GM marks {len(blocked)} blocked square{'s' if len(blocked) != 1 else ''}.",
                            blocked=blocked))

    @contract.declaration("reveal", by="gm")
    def _do_reveal(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                   events: list[Event]) -> None:
        on = self._flag(d, "on")
        state["reveal_health"] = on
        events.append(event("health.revealed" if on else "health.hidden",
                            "GM shows everyone's Durability numbers." if on else "GM hides the Durability numbers.",
                            on=on))

    @contract.declaration("advance", by="gm")
    def _do_advance(self, state: State, d: Mapping[str, Any], viewer: Viewer, dice: DiceSource,
                    events: list[Event]) -> None:
        """Nothing by itself: apply() then lets computer-played combatants act (e.g. after an assignment)."""
        if not self._computer_waiting(state):
            raise IllegalDeclaration("no computer-played combatant is waiting to act")

    def _computer_waiting(self, state: State) -> bool:
        p = state["pending"]
        comps = state["combatants"]
        if p is None:
            return state["active"] is not None and comps[state["active"]]["controller"] == "computer"
        if p["phase"] == "defence":
            return comps[p["defender"]]["controller"] == "computer"
        return any(not post["accepted"] and comps[p["attacker" if side == "attacker" else "defender"]]["controller"]
                   == "computer" for side, post in p["post"].items())

    # --- the computer's choices -------------------------------------------------------------------------
    def _run_computers(self, state: State, dice: DiceSource, events: list[Event]) -> None:
        for _ in range(500):
            if state["status"] != "active":
                return
            p = state["pending"]
            comps = state["combatants"]
            if p is not None:
                if p["phase"] == "defence":
                    if comps[p["defender"]]["controller"] != "computer":
                        return
                    options = self.defence_options(state, p)
                    best = max(options, key=lambda o: o["target"])
                    self._do_defend(state, {"combatant": p["defender"], "method": best["method"]}, Viewer.gm(),
                                    dice, events)
                    continue
                moved = False
                for side, post in p["post"].items():
                    cid = p["attacker" if side == "attacker" else "defender"]
                    if post["accepted"] or comps[cid]["controller"] != "computer":
                        continue
                    spend = self._computer_spend(state, side)
                    if spend:
                        self._do_spend(state, {"combatant": cid, **spend}, Viewer.gm(), dice, events)
                    else:
                        self._do_accept(state, {"combatant": cid}, Viewer.gm(), dice, events)
                    moved = True
                    break
                if not moved:
                    return
                continue
            cid = state["active"]
            if cid is None or comps[cid]["controller"] != "computer":
                return
            self._computer_turn(state, cid, dice, events)

    def _computer_spend(self, state: State, side: str) -> dict[str, str] | None:
        p = state["pending"]
        standing = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        for choice in self.reaction_choices(state, side):
            if choice["use"] != "flip":
                continue
            trial = dict(p["rolls"])
            trial[side] = judge(flip(p["rolls"][side]["roll"]), p["rolls"][side]["target"])
            after = contest(trial["attacker"], trial["defender"])
            if after != standing and (after == "hit") == (side == "attacker"):
                return {"pool": choice["pool"], "use": "flip"}
        return None

    def _computer_turn(self, state: State, cid: str, dice: DiceSource, events: list[Event]) -> None:
        c = state["combatants"][cid]
        gm = Viewer.gm()
        if state["turn"]["complex_used"]:
            self._end_turn(state, dice, events)
            return
        if "prone" in c["conditions"]:
            self._do_stand(state, {"combatant": cid}, gm, dice, events)
        enemies = [o for o in state["combatants"].values() if o["side"] != c["side"] and _able(o)]
        if not enemies:
            self._end_turn(state, dice, events)
            return
        enemy = min(enemies, key=lambda o: (_distance_squares(c, o), o["id"]))
        for i, w in enumerate(c["weapons"]):  # a weapon knocked from its hand and still in reach: take it back
            if w.get("dropped_at") and self._within_reach(c, w["dropped_at"]):
                self._do_pick_up(state, {"combatant": cid, "weapon": i}, gm, dice, events)
                self._end_turn(state, dice, events)
                return
        carried = [(i, w) for i, w in enumerate(c["weapons"]) if not w.get("dropped_at")]
        ranged = [(i, w) for i, w in carried if w["skill"] != "melee"]
        melee = [(i, w) for i, w in carried if w["skill"] == "melee"]
        if ranged:
            index, _weapon = max(ranged, key=lambda iw: c[iw[1]["skill"]])
            self._do_attack(state, {"combatant": cid, "target": enemy["id"], "weapon": index}, gm, dice, events)
            return
        if not _adjacent(c, enemy, state) and not state["turn"]["moved"]:
            square = self._approach_square(state, c, enemy)
            if square is not None:
                self._do_move(state, {"combatant": cid, "x": square[0], "y": square[1]}, gm, dice, events)
        if _adjacent(c, enemy, state) and melee:
            index, _weapon = max(melee, key=lambda iw: parse_dv(iw[1]["dv"])[0] * parse_dv(iw[1]["dv"])[1])
            self._do_attack(state, {"combatant": cid, "target": enemy["id"], "weapon": index,
                                    "charge": self._full_move_made(state, c)}, gm, dice, events)
            return
        self._end_turn(state, dice, events)

    def _approach_square(self, state: State, c: Mapping[str, Any], enemy: Mapping[str, Any]) -> tuple[int, int] | None:
        reach = self.reachable(state, c)
        if not reach:
            return None
        return min(reach, key=lambda sq: (max(abs(sq[0] - enemy["x"]), abs(sq[1] - enemy["y"])) > 1,
                                          math.hypot(sq[0] - enemy["x"], sq[1] - enemy["y"]),
                                          math.hypot(sq[0] - c["x"], sq[1] - c["y"]), sq))

    # --- views ---------------------------------------------------------------------------------------------
    def reachable(self, state: State, c: Mapping[str, Any]) -> list[tuple[int, int]]:
        """Free squares the combatant can still reach this turn."""
        opts = state["options"]
        left = c["full_move"] - state["turn"]["moved"] if state["active"] == c["id"] else 0
        reach = left / opts["metres_per_square"]
        occupied = {(o["x"], o["y"]) for o in state["combatants"].values() if o["state"] != "dead"}
        # the shortest way around blocked squares (with none, the straight distance)
        lengths = terrain.path_lengths((c["x"], c["y"]), terrain.blocked_of(state), opts["width"], opts["height"],
                                       reach)
        return sorted(sq for sq, d in lengths.items() if sq not in occupied and d <= reach + 1e-9)

    def _sees_numbers(self, state: State, viewer: Viewer, cid: str) -> bool:
        return viewer.is_gm or viewer.controls(state, cid)

    @staticmethod
    def _coarse(c: Mapping[str, Any]) -> dict[str, Any]:
        if c["state"] == "dead":
            return {"level": 0.0, "label": "dead"}
        if c["state"] == "incapacitated":
            return {"level": 0.0, "label": "incapacitated"}
        share = c["damage"] / c["durability"]
        for limit, level, label in ((0, 1.0, "unhurt"), (0.25, 0.8, "lightly hurt"), (0.5, 0.6, "hurt"),
                                    (0.75, 0.4, "badly hurt")):
            if share <= limit:
                return {"level": level, "label": label}
        return {"level": 0.15, "label": "near collapse"}

    def _project_combatant(self, state: State, c: Mapping[str, Any], viewer: Viewer) -> dict[str, Any]:
        public = {k: copy.deepcopy(c[k]) for k in ("id", "name", "side", "controller", "seat", "morph", "size",
                                                      "x", "y", "wounds", "conditions", "state", "full_defence")}
        public["weapons"] = [w["name"] for w in c["weapons"]]
        public["health"] = self._coarse(c)
        public["mine"] = viewer.controls(state, c["id"]) and not viewer.is_gm
        # the total comes from the Initiative stat: the combatant's own number
        public["initiative_total"] = (state["initiative"].get(c["id"], {}).get("total")
                                      if self._sees_numbers(state, viewer, c["id"]) else None)
        public["markers"] = ([_count(c["wounds"], "wound")] if c["wounds"] else []) + [
            CONDITIONS[k] for k in c["conditions"]] + (["full defence"] if c["full_defence"] else []) + [
            f"{w['name']} dropped" for w in c["weapons"] if w.get("dropped_at")]
        if self._sees_numbers(state, viewer, c["id"]) or state["reveal_health"]:
            public.update({k: c[k] for k in ("damage", "durability", "wound_threshold", "death_rating")})
        if self._sees_numbers(state, viewer, c["id"]):
            public.update({k: copy.deepcopy(c[k]) for k in (
                "morph_type", "base_move", "full_move", "som", "som_check", "initiative", "fray", "melee", "guns",
                "athletics", "traumas", "energy_armour", "kinetic_armour", "armour_name", "pools", "pools_max",
                "aim", "modifiers")})
            public["weapon_stats"] = copy.deepcopy(c["weapons"])
        return public

    def _project_pending(self, state: State, viewer: Viewer) -> dict[str, Any] | None:
        """The exchange in progress: a side's target number, skill, modifiers, pool and weapon numbers
        only for those who see that side's numbers (its player and the GM); the dice for everyone."""
        p = state["pending"]
        if p is None:
            return None
        a, t = state["combatants"][p["attacker"]], state["combatants"][p["defender"]]
        waiting = []
        if p["phase"] == "defence":
            waiting.append({"combatant": t["id"], "what": "defence",
                            "text": f"Waiting for {t['name']} to choose a defence."})
        else:
            for side, post in p["post"].items():
                cid = p["attacker" if side == "attacker" else "defender"]
                if not post["accepted"]:
                    waiting.append({"combatant": cid, "what": "reaction",
                                    "text": f"Waiting for {state['combatants'][cid]['name']} to accept or spend."})
        view = {k: copy.deepcopy(p[k]) for k in ("attacker", "defender", "weapon", "skill", "skill_value", "choices",
                                                  "mods", "extra", "pool", "target", "metres", "phase", "defence",
                                                  "rolls")}
        view["attacker_name"], view["defender_name"] = a["name"], t["name"]
        if _called_aim_of(p["choices"]):
            view["called_label"] = _called_words(p["choices"])
        view["skill_label"] = SKILLS[p["skill"]]
        view["breakdown"] = _breakdown(SKILLS[p["skill"]], p["skill_value"], p["mods"], POOL_BONUS if p["pool"] else 0)
        if p["rolls"]:
            view["standing"] = contest(p["rolls"]["attacker"], p["rolls"]["defender"])
        view["waiting"] = waiting
        if not self._sees_numbers(state, viewer, a["id"]):
            view.update(skill_value=None, mods=[], pool=None, target=None, breakdown=None,
                        weapon={k: p["weapon"][k] for k in ("name", "skill")})
            if view["rolls"]:
                view["rolls"]["attacker"] = _without_target(view["rolls"]["attacker"])
        if not self._sees_numbers(state, viewer, t["id"]):
            if view["defence"]:
                view["defence"] = {k: view["defence"][k] for k in ("method", "skill_label")}
            if view["rolls"]:
                view["rolls"]["defender"] = _without_target(view["rolls"]["defender"])
        return view

    def _project_exchange(self, state: State, viewer: Viewer) -> dict[str, Any] | None:
        """The last attack: its target numbers, the armour and what got through (the defender's
        damage, unless the GM shows everyone's Durability numbers) only for those who see them."""
        x = copy.deepcopy(state["last_exchange"])
        if x is None:
            return None
        if not self._sees_numbers(state, viewer, x["attacker"]):
            x["attack"] = _without_target(x["attack"])
        if not self._sees_numbers(state, viewer, x["defender"]):
            x["defence"] = _without_target(x.get("defence"))
            x["armour"] = None
            if "som_check" in x:
                x["som_check"] = _without_target(x["som_check"])
            if "through" in x and not state["reveal_health"]:
                x["through"] = None
        return x

    def _distances(self, state: State, origin: str | None) -> dict[str, Any] | None:
        if origin is None:
            return None
        a = state["combatants"][origin]
        rows = {}
        for o in state["combatants"].values():
            if o["id"] == origin:
                continue
            metres = _metres(state, a, o)
            bands = {str(i): range_band(metres, w["range"]) for i, w in enumerate(a["weapons"])
                     if w["skill"] != "melee"}
            rows[o["id"]] = {"name": o["name"], "metres": metres, "squares": round(_distance_squares(a, o), 2),
                             "adjacent": _adjacent(a, o, state), "band": range_band(metres, 10**6)["band"]
                             if metres <= 10 else "beyond close", "weapons": bands}
        return {"from": origin, "to": rows}

    def view_for(self, state: State, viewer: Viewer) -> dict[str, Any]:
        combatants = [self._project_combatant(state, c, viewer) for c in state["combatants"].values()]
        # a combatant's place and die for everyone; its score and total (its Initiative) for those who see its numbers
        sighted = {cid for cid in state["order"] if self._sees_numbers(state, viewer, cid)}
        order = [{"id": cid, "name": state["combatants"][cid]["name"],
                  "total": state["initiative"][cid]["total"] if cid in sighted else None,
                  "roll": state["initiative"][cid]["roll"], "score": state["initiative"][cid]["score"] if cid in sighted else None,
                  "active": cid == state["active"], "done": i < state["turn_index"],
                  "able": _able(state["combatants"][cid])}
                 for i, cid in enumerate(state["order"])]
        active = state["active"]
        view = {
            "system": self.id,
            "status": state["status"],
            "round": state["round"],
            "options": {k: state["options"][k] for k in ("metres_per_square", "width", "height")},
            "reveal_health": state["reveal_health"],
            "blocked": copy.deepcopy(state.get("blocked", [])),
            "order": order,
            "active": active,
            "turn": copy.deepcopy(state["turn"]) if active else None,
            "combatants": combatants,
            "pending": self._project_pending(state, viewer),
            "last_exchange": self._project_exchange(state, viewer),
            "distances": self._distances(state, active),
            "outcome": copy.deepcopy(state.get("outcome")),
            "you": {"role": viewer.role, "combatants": viewer.own_combatants(state)},
        }
        if active:
            view["active_name"] = state["combatants"][active]["name"]
        if state.get("initiative_due") and state["status"] == "active":
            typists = self._initiative_typists(state)
            view["initiative_due"] = {"text": INITIATIVE_DUE, "combatants": typists,
                                      "rollers": [state["combatants"][cid]["name"] for cid in typists]}
        view["legal"] = self.legal(state, viewer)
        return view

    # --- legal declarations -----------------------------------------------------------------------------
    def legal(self, state: State, viewer: Viewer) -> list[dict[str, Any]]:
        if state["status"] != "active" or viewer.role == "spectator":
            return []
        out: list[dict[str, Any]] = []
        acts_for = [cid for cid in state["combatants"] if viewer.controls(state, cid)]
        p = state["pending"]
        if p is not None:
            if p["phase"] == "defence":
                if p["defender"] in acts_for:
                    out.append(self._defend_template(state, p))
                if p["attacker"] in acts_for:
                    out.append({"type": "cancel_attack", "combatant": p["attacker"], "label": "Withdraw the attack"})
            else:
                for side in p["post"]:
                    cid = p["attacker" if side == "attacker" else "defender"]
                    if cid not in acts_for or p["post"][side]["accepted"]:
                        continue
                    choices = self.reaction_choices(state, side)
                    name = state["combatants"][cid]["name"]
                    if choices:
                        out.append({"type": "spend", "combatant": cid, "label": f"Spend a pool point ({name})",
                                    "choices": choices})
                    out.append({"type": "accept", "combatant": cid, "label": f"Accept the dice ({name})"})
        active = state["active"]
        if p is None and active in acts_for:
            out.extend(self._turn_templates(state, active))
        if viewer.is_gm:
            if state.get("initiative_due"):
                out.append({"type": "roll_initiative", "label": "Roll initiative"})
            out.extend(self._gm_templates(state))
        return out

    def _turn_templates(self, state: State, cid: str) -> list[dict[str, Any]]:
        c = state["combatants"][cid]
        turn = state["turn"]
        name = c["name"]
        out: list[dict[str, Any]] = []
        if "prone" in c["conditions"]:
            out.append({"type": "stand", "combatant": cid, "label": f"Stand up ({name})"})
        else:
            left = round(c["full_move"] - turn["moved"], 2)
            reach = self.reachable(state, c) if left > 0 else []
            if reach:
                out.append({"type": "move", "combatant": cid, "label": f"Move {name}",
                            "max_metres": left, "base_left": round(max(0.0, c["base_move"] - turn["moved"]), 2),
                            "reachable": [list(sq) for sq in reach]})
        if not turn["complex_used"]:
            for i, w in enumerate(c["weapons"]):
                if w.get("dropped_at") and self._within_reach(c, w["dropped_at"]):
                    out.append({"type": "pick_up", "combatant": cid, "weapon": i,
                                "label": f"Pick up the {w['name']} (uses the action)"})
            attack = self._attack_template(state, c)
            if any(w["preview"] for w in attack["weapons"]):
                out.append(attack)
            out.append({"type": "full_defence", "combatant": cid, "label": "Full defence (+30 until your next turn)"})
            others = [{"id": o["id"], "name": o["name"], "ally": o["side"] == c["side"]}
                      for o in _foes_first(state, c) if o["state"] != "dead"]
            if self._can_aim(c) and others:
                out.append({"type": "aim", "combatant": cid, "label": "Aim", "targets": others,
                            "complex_choices": ([[False, "Quick aim: +10 to single shots this turn"]]
                                                if not turn["quick_aimed"] else [])
                            + [[True, "Careful aim: +30 to single shots next turn (uses the action)"]]})
        out.append({"type": "end_turn", "combatant": cid, "label": f"End {name}'s turn"})
        return out

    def _attack_template(self, state: State, c: Mapping[str, Any]) -> dict[str, Any]:
        targets = []
        for o in _foes_first(state, c):
            if o["state"] == "dead":
                continue
            metres = _metres(state, c, o)
            held = self.held_weapon(o)
            targets.append({"id": o["id"], "name": o["name"], "side": o["side"], "metres": metres,
                            "adjacent": _adjacent(c, o, state), "can_defend": self._can_defend(o),
                            "holds": o["weapons"][held]["name"] if held is not None else None,
                            "ally": o["side"] == c["side"]})
        weapons = []
        for i, w in enumerate(c["weapons"]):
            previews = {}
            for t in targets:
                if (w["skill"] == "melee" and not t["adjacent"]) or w.get("dropped_at"):
                    continue
                mods, extra = self.attack_modifiers(state, c["id"], t["id"], w, {})
                previews[t["id"]] = {"target": target_number(c[w["skill"]], mods), "mods": mods,
                                     "band": range_band(t["metres"], w["range"])["band"] if w["skill"] != "melee"
                                     else "melee reach"}
            weapons.append({"index": i, "name": w["name"], "skill": w["skill"], "skill_label": SKILLS[w["skill"]],
                            "skill_value": c[w["skill"]], "dv": w["dv"], "armour": w["armour"], "ap": w["ap"],
                            "range": w["range"], "modes": [[m, MODES[m]] for m in w["modes"]],
                            "two_handed": w["two_handed"], "preview": previews,
                            "dropped": bool(w.get("dropped_at"))})
        options = [
            {"name": "superior_position", "label": "Superior position (+20)", "kind": "bool"},
            {"name": "called_shot", "label": "Called shot (−10; needs a superior success or a critical)",
             "kind": "choice", "choices": [["none", "none"]] + [[k, v] for k, v in CALLED_AIMS.items()],
             "spot_length": SPOT_LENGTH},
            {"name": "one_handed", "label": "Two-handed weapon in one hand (−20)", "kind": "bool",
             "only": "two_handed"},
            {"name": "visibility", "label": "Visibility", "kind": "choice",
             "choices": [[k, f"{v[0]} ({_signed(v[1])})" if v[1] else v[0]] for k, v in VISIBILITY.items()]},
            {"name": "bonus", "label": "Burst, full automatic or aggressive bonus", "kind": "choice",
             "choices": [["damage", "extra damage dice"], ["accuracy", "to hit instead"]]},
            {"name": "aggressive", "label": "Aggressive melee (+10 or +1d10 damage; −10 to your Fray dodges "
             "until your next turn)", "kind": "bool", "only": "melee"},
        ]
        if self._full_move_made(state, c):
            options.append({"name": "charge", "label": "Charge after the full move (−10 instead of −20, +1d6 damage)",
                            "kind": "bool", "only": "melee"})
        pools = [[p, f"{POOL_LABELS[p]} ({c['pools'][p]} left): +20"] for p in POOLS if c["pools"][p] > 0]
        aim = c.get("aim")
        aimed = None
        if aim and self._aim_ready(c, aim["target"]):
            aim_name = state["combatants"][aim["target"]]["name"]
            aimed = {"target": aim["target"], "bonus": aim["bonus"], "modes": list(AIM_MODES),
                     "text": f"Aimed at {aim_name} (+{aim['bonus']}): only single shots at {aim_name}."}
        return {"type": "attack", "combatant": c["id"], "label": f"Attack ({c['name']})", "targets": targets,
                "weapons": weapons, "options": options, "pools": [["none", "no pool"]] + pools,
                "full_move": self._full_move_made(state, c), "aim": aimed}

    def _defend_template(self, state: State, p: Mapping[str, Any]) -> dict[str, Any]:
        c = state["combatants"][p["defender"]]
        pools = [[k, f"{POOL_LABELS[k]} ({c['pools'][k]} left): +20"] for k in POOLS if c["pools"][k] > 0]
        return {"type": "defend", "combatant": c["id"], "label": f"Defend ({c['name']})",
                "methods": self.defence_options(state, p),
                "options": [{"name": "superior_position", "label": "Superior position (+20)", "kind": "bool"}],
                "pools": [["none", "no pool"]] + pools, "attack_target": p["target"]}

    def _gm_templates(self, state: State) -> list[dict[str, Any]]:
        ids = [[cid, c["name"]] for cid, c in state["combatants"].items()]
        return [
            {"type": "move", "combatant": None, "label": "Place a token anywhere", "anywhere": True,
             "combatants": ids},
            {"type": "modifier", "label": "Add a labelled modifier", "combatants": ids,
             "applies": [["all", "attack and defence"], ["attack", "attack"], ["defence", "defence"]],
             "min": -60, "max": 60},
            {"type": "clear_modifiers", "label": "Clear a combatant's extra modifiers", "combatants": ids},
            {"type": "adjust", "label": "Set damage and wounds", "combatants": ids,
             "current": {cid: [c["damage"], c["wounds"]] for cid, c in state["combatants"].items()}},
            {"type": "condition", "label": "Set or clear a condition", "combatants": ids,
             "conditions": [[k, v] for k, v in CONDITIONS.items()]},
            {"type": "reveal", "label": "Hide Durability numbers" if state["reveal_health"]
             else "Show everyone's Durability numbers", "on": not state["reveal_health"]},
        ] + ([{"type": "advance", "label": "Let the computer act"}] if self._computer_waiting(state) else [])

    # --- undo points ----------------------------------------------------------------------------------
    def is_checkpoint(self, state: State) -> bool:
        if state.get("status") != "active":
            return True
        if physical_pending(state) is not None:  # half-typed dice are no place for undo to land
            return False
        turn = state.get("turn") or {}
        return state.get("pending") is None and not turn.get("moved") and not turn.get("complex_used") \
            and not turn.get("quick_aimed")

