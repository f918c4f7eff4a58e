"""Phantom's Bane as data: the four options, the temperaments, the stat form, the presets and the help.

Nothing here resolves anything: the rules are in turn.py, the computer player in computer.py.
"""

from __future__ import annotations

from typing import Any

from rules.core import Field

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
VISIBLE_KEYS: tuple[str, ...] = (
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

#: the stat form (the system adds the carried-over fields: rules/carry_over.py)
FIELDS: list[Field] = [
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
]

#: the battle's own options
OPTION_FIELDS: list[Field] = [
    Field(
        "escape_impossible",
        "Running away cannot succeed",
        "bool",
        False,
        help="Hidden from the players: every attempt to run away fails (cornered, surrounded, "
        "cliff behind). The GM can switch it during the fight.",
    )
]

#: ready-made combatants: the rule text's own
PRESETS: list[dict[str, Any]] = [
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

#: the help, in the project's own words (the system adds the carrying over's)
HELP: list[dict[str, str]] = [
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
]
