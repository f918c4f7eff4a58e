"""Eclipse Phase's tables as data: the numbers of the rulings, the gear, the forms, the presets and the help.

Nothing here decides anything: the rules that read these tables are in rulings.py (the tests and their
numbers), combat.py and called_shots.py (the attack), turns.py (the action turn).
"""

from __future__ import annotations

from typing import Any

from ...core import Field

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


# --- the forms ---------------------------------------------------------------------------------------


def combatant_fields() -> list[Field]:
    """One combatant's stat block (the system adds the fields carried over from an earlier fight)."""
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
    ]


def option_fields() -> list[Field]:
    """The battle's options."""
    return [
        Field("metres_per_square", "Metres per square", "int", 1, 1, 20, help="The grid's scale."),
        Field("width", "Grid width (squares)", "int", 24, 6, 60),
        Field("height", "Grid height (squares)", "int", 16, 6, 60),
        Field("reveal_health", "Show everyone's Durability numbers", "bool", False,
              help="Off: only the GM and a combatant's own player see its numbers; others see a coarse bar."),
    ]


#: the ready-made combatants, as changes to the stat block's defaults
PRESETS: list[dict[str, Any]] = [
    {"name": "Jinx", "morph": "winged synth courier", "morph_type": "synth", "durability": 35,
     "base_move": 8, "full_move": 32, "som": 15, "initiative": 9, "fray": 60, "melee": 30, "guns": 70,
     "athletics": 40, "flex": 2, "vigor": 1, "armour": "smart_clothes", "weapon1": "medium_pistol",
     "weapon2": "knife", "weapon3": "none"},
    {"name": "Exhuman stalker", "morph": "brutish modified biomorph", "durability": 40,
     "base_move": 4, "full_move": 20, "som": 25, "initiative": 8, "fray": 60, "melee": 80, "guns": 20,
     "athletics": 55, "flex": 0, "vigor": 2, "armour": "none", "kinetic_natural": 10, "energy_natural": 5,
     "weapon1": "claws", "weapon2": "none", "weapon3": "none"},
    {"name": "Habitat guard", "morph": "splicer", "durability": 35, "som": 18, "initiative": 7,
     "fray": 40, "melee": 40, "guns": 50, "armour": "vest", "weapon1": "smg", "weapon2": "knife"},
    {"name": "Security synth", "morph": "armoured security shell", "morph_type": "synth",
     "durability": 50, "base_move": 4, "full_move": 16, "som": 25, "initiative": 8, "fray": 35, "melee": 45,
     "guns": 60, "flex": 0, "vigor": 1, "armour": "none", "kinetic_natural": 12, "energy_natural": 12,
     "weapon1": "assault_rifle", "weapon2": "unarmed", "weapon3": "none"},
    {"name": "Firewall sentinel", "morph": "fury combat biomorph", "durability": 50, "som": 25,
     "initiative": 10, "fray": 55, "melee": 60, "guns": 65, "athletics": 50, "flex": 1, "vigor": 3,
     "armour": "body_armour", "weapon1": "laser_pulser", "weapon2": "vibroblade",
     "weapon3": "frag_grenade"},
    {"name": "Scrap drone", "morph": "small flying drone", "morph_type": "synth", "durability": 15,
     "size": "small", "base_move": 8, "full_move": 40, "som": 8, "initiative": 8, "fray": 40, "melee": 10,
     "guns": 40, "flex": 0, "vigor": 0, "kinetic_natural": 4, "energy_natural": 4,
     "weapon1": "medium_pistol", "weapon2": "none", "weapon3": "none"},
]

#: the help sections, in the project's own words (the system adds the carry-over's)
HELP: list[dict[str, str]] = [
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
]
