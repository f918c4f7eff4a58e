"""Battles&Balances as data: the character sheet and the options, the derived numbers, the presets and
the help text, the named difficulties of a check.

>>> derived(PRINCE)
{'health': 16, 'damage_modifier': 4, 'ap_max': 16, 'attack_cost': 5}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rules.core import Field

ATTRIBUTES = ("muscle", "stamina", "agility", "speed", "focus")
LUCK_CHOICES = (("normal", "Normal"), ("blessed", "Blessed"), ("cursed", "Cursed"))

#: the named difficulty thresholds of a static check, lowest first
THRESHOLDS: tuple[tuple[str, int], ...] = (
    ("trivial", 10),
    ("easy", 20),
    ("routine", 30),
    ("challenging", 40),
    ("difficult", 50),
    ("unlikely", 60),
    ("impossible", 70),
)
THRESHOLD_VALUES = dict(THRESHOLDS)


#: how many future turns the timeline shows
TIMELINE_LENGTH = 12


def combatant_fields() -> list[Field]:
    attr_help = {
        "muscle": "Dice for strength; also sets the damage modifier.",
        "stamina": "Dice for endurance; health is Stamina times size (at least 1: Health 0 is defeated).",
        "agility": "Dice rolled to hit in melee.",
        "speed": "Dice rolled to defend; action points are Speed times size.",
        "focus": "Dice rolled to hit with missiles.",
    }
    fields = [
        Field("size", "Size die", "int", 8, 2, 100, help="Sides of the die this character rolls (d4 tiny, d8 human, d12 huge).", group="Body"),
    ]
    fields += [
        Field(a, a.capitalize(), "int", 3, 0, 30, help=attr_help[a], group="Body") for a in ATTRIBUTES
    ]
    fields += [
        Field("player_character", "Player character", "bool", False, help="Player characters receive blessings when hurt (if blessings are on).", group="Body"),
        Field("weapon", "Weapon", "text", "", 0, 40, help="Name of the melee weapon; empty means unarmed.", group="Weapon"),
        Field("weapon_attack", "Weapon attack", "int", 0, 0, 50, help="Added to the Agility roll.", group="Weapon"),
        Field("weapon_die", "Weapon damage die", "int", 0, 0, 100, help="Sides of the damage die (6 for 1-6); 0 for none.", group="Weapon"),
        Field("weapon_weight", "Weapon weight", "int", 0, 0, 50, help="Action points it takes to draw the weapon.", group="Weapon"),
        Field("weapon_reach", "Melee reach", "int", 1, 1, 10, help="Squares the weapon reaches (1 = adjacent).", group="Weapon"),
        Field("weapon_drawn", "Weapon in hand", "bool", True, help="Off means it must be drawn first.", group="Weapon"),
        Field("weapon_kind", "Weapon damage kinds", "text", "", 0, 60, help="Comma-separated, e.g. silver, blade (for weaknesses).", group="Weapon"),
        Field("weapon_effect", "Weapon effect", "text", "", 0, 30, help="A lasting effect its hits cause, e.g. poison.", group="Weapon"),
        Field("weapon_luck", "Weapon blessing", "choice", "normal", choices=LUCK_CHOICES, help="A blessed or cursed weapon makes every attack roll so.", group="Weapon"),
        Field("launcher", "Missile weapon", "text", "", 0, 40, help="Bow, sling, blaster...; empty means none.", group="Missile"),
        Field("launcher_attack", "Missile attack", "int", 0, 0, 50, help="Added to the Focus roll.", group="Missile"),
        Field("ammo_die", "Ammunition damage die", "int", 6, 0, 100, help="Sides of the ammunition's damage die.", group="Missile"),
        Field("ammo", "Ammunition", "int", 0, 0, 999, help="Shots left.", group="Missile"),
        Field("missile_range", "Missile range", "int", 8, 1, 100, help="Squares the missile weapon reaches.", group="Missile"),
        Field("ammo_kind", "Ammunition damage kinds", "text", "", 0, 60, group="Missile"),
        Field("ammo_effect", "Ammunition effect", "text", "", 0, 30, group="Missile"),
        Field("shield", "Shield", "text", "", 0, 40, group="Shield"),
        Field("shield_defence", "Shield defence", "int", 0, 0, 50, help="Added to the Speed roll.", group="Shield"),
        Field("shield_luck", "Shield blessing", "choice", "normal", choices=LUCK_CHOICES, help="A blessed or cursed shield makes every defence roll so.", group="Shield"),
        Field("armour", "Armour", "text", "", 0, 40, group="Armour"),
        Field("armour_protection", "Armour protection", "int", 0, 0, 100, help="Taken off any damage that reaches it.", group="Armour"),
        Field("armour_weight", "Armour weight", "int", 0, 0, 100, help="With armour wear on, the armour fails when its wear reaches this.", group="Armour"),
        Field("armour_wear", "Armour wear", "int", 0, 0, 100, group="Armour"),
        Field("weak_to", "Weak to", "text", "", 0, 60, help="Damage kinds that double the damage die.", group="Traits"),
        Field("resists", "Resists", "text", "", 0, 60, help="Damage kinds that halve the damage die.", group="Traits"),
        Field("effect_chance", "Effect chance", "choice", "always", choices=(("always", "Every hit"), ("coin", "Coin flip")), help="How often its weapon or ammunition effect takes hold.", group="Traits"),
        Field("curses_on_hit", "Curses on hit", "bool", False, help="Its hits curse the target instead of blessing (undead and such).", group="Traits"),
        Field("health_override", "Health (0 = Stamina x size)", "int", 0, 0, 9999, group="Overrides"),
        Field("damage_modifier_override", "Damage modifier (empty = derived)", "text", "", 0, 6, group="Overrides"),
        Field("ap_override", "Action points (0 = Speed x size)", "int", 0, 0, 9999, group="Overrides"),
        Field("attack_cost_override", "Attack cost (0 = size - 3)", "int", 0, 0, 999, group="Overrides"),
        Field("x", "Column (-1 = automatic)", "int", -1, -1, 99, group="Position"),
        Field("y", "Row (-1 = automatic)", "int", -1, -1, 99, group="Position"),
        Field("notes", "GM notes", "text", "", 0, 200, help="Seen only by the GM.", group="GM"),
    ]
    return fields


def option_fields() -> list[Field]:
    return [
        Field("agility_duel", "Agility-only duel", "bool", False, help="Melee without Speed or shields: both roll Agility and the higher deals damage to the other.", group="Optional rules"),
        Field("maximum_damage", "Maximum damage", "bool", False, help="Damage dice are not rolled: every hit does the die's highest face.", group="Optional rules"),
        Field("weaknesses", "Weaknesses and resistances", "bool", False, help="A weakness doubles the damage die, a resistance halves it.", group="Optional rules"),
        Field("halved_die", "Halved die", "choice", "small", choices=(("small", "Roll the smaller die (d3 for d6)"), ("halve", "Roll the full die, halve rounding up")), group="Optional rules"),
        Field("persistent_effects", "Persistent effects", "bool", False, help="Poison, fire and such: each new dose adds a growing amount of extra damage until cured.", group="Optional rules"),
        Field("armour_wear", "Armour wear", "bool", False, help="Armour wears by half of what it absorbs and fails when its wear reaches its weight.", group="Optional rules"),
        Field("blessings", "Blessings and curses", "bool", False, help="Blessed rolls take the better of two, cursed the worse; player characters are blessed when hurt.", group="Optional rules"),
        Field("blessing_threshold", "Blessed when hurt by", "choice", "half_size", choices=(("any", "Any damage"), ("half_size", "More than half their size")), group="Optional rules"),
        Field("contest_mode", "Contests", "choice", "summed", choices=(("summed", "Three rolls summed"), ("best_of_three", "Best two of three")), group="Contests"),
        Field("move_cost", "AP per square moved", "int", 1, 0, 50, help="The GM's cost of a step; leaving an opponent's reach adds that opponent's size.", group="Time"),
        Field("grid_width", "Grid columns", "int", 12, 4, 40, group="Grid"),
        Field("grid_height", "Grid rows", "int", 8, 4, 40, group="Grid"),
    ]


def derived(c: Mapping[str, Any]) -> dict[str, int]:
    """Health, damage modifier, action points and attack cost, honouring the GM's overrides."""
    size = c["size"]
    health = c.get("health_override") or c["stamina"] * size
    dm_text = str(c.get("damage_modifier_override") or "").strip()
    damage_modifier = int(dm_text) if dm_text else int((c["muscle"] - 3) * size / 2)
    ap_max = c.get("ap_override") or c["speed"] * size
    attack_cost = c.get("attack_cost_override") or max(1, size - 3)
    return {"health": health, "damage_modifier": damage_modifier, "ap_max": ap_max, "attack_cost": attack_cost}


# --------------------------------------------------------------------------------------------
# Presets: the characters of the text plus a few ready-made foes

# --------------------------------------------------------------------------------------------

PRINCE: dict[str, Any] = {
    "name": "Prince Vasyl of Ostgrund", "size": 8, "muscle": 4, "stamina": 2, "agility": 4, "speed": 2, "focus": 3,
    "player_character": True, "weapon": "Hardlight sword", "weapon_attack": 5, "weapon_die": 6, "weapon_weight": 3,
    "weapon_kind": "blade", "shield": "Hardlight kite", "shield_defence": 5, "armour": "Liquid metal",
    "armour_protection": 5, "armour_weight": 10,
}
SHOCK_TROOPER: dict[str, Any] = {
    "name": "Shock Trooper", "size": 12, "muscle": 5, "stamina": 4, "agility": 2, "speed": 2, "focus": 2,
    "notes": "Power armour counts as a bigger body (d12); disarmed at the start.",
}
PRESETS: list[dict[str, Any]] = [
    PRINCE,
    SHOCK_TROOPER,
    {"name": "Baerg the Fighter", "size": 8, "muscle": 5, "stamina": 4, "agility": 3, "speed": 3, "focus": 2,
     "player_character": True, "weapon": "Axe", "weapon_attack": 3, "weapon_die": 8, "weapon_weight": 4,
     "armour": "Mail", "armour_protection": 4, "armour_weight": 8},
    {"name": "Huge Orc", "size": 10, "muscle": 4, "stamina": 3, "agility": 2, "speed": 2, "focus": 2,
     "weapon": "Club", "weapon_attack": 2, "weapon_die": 6, "weapon_weight": 3},
    {"name": "Jinx the Thief", "size": 6, "muscle": 2, "stamina": 3, "agility": 4, "speed": 4, "focus": 3,
     "player_character": True, "weapon": "Dagger", "weapon_attack": 2, "weapon_die": 4, "weapon_weight": 1,
     "launcher": "Sling", "launcher_attack": 1, "ammo_die": 4, "ammo": 10, "missile_range": 6},
    {"name": "Goblin Archer", "size": 6, "muscle": 2, "stamina": 2, "agility": 3, "speed": 3, "focus": 3,
     "weapon": "Knife", "weapon_attack": 1, "weapon_die": 4, "weapon_weight": 1,
     "launcher": "Short bow", "launcher_attack": 2, "ammo_die": 6, "ammo": 12, "missile_range": 8},
    {"name": "Skeleton", "size": 8, "muscle": 3, "stamina": 2, "agility": 3, "speed": 2, "focus": 1,
     "weapon": "Rusty blade", "weapon_attack": 2, "weapon_die": 6, "weapon_weight": 3, "weak_to": "silver",
     "curses_on_hit": True},
    {"name": "Rock Elemental", "size": 12, "muscle": 5, "stamina": 5, "agility": 2, "speed": 1, "focus": 1,
     "resists": "blade", "armour": "Stone skin", "armour_protection": 6, "armour_weight": 30},
    {"name": "Venom Spider", "size": 6, "muscle": 2, "stamina": 2, "agility": 4, "speed": 4, "focus": 1,
     "weapon": "Fangs", "weapon_attack": 1, "weapon_die": 4, "weapon_weight": 0, "weapon_effect": "poison",
     "effect_chance": "coin"},
]


HELP: list[dict[str, str]] = [
    {"title": "Dice pools", "text": "Each attribute (Muscle, Stamina, Agility, Speed, Focus) is a count of dice of the "
     "character's size die. A human (d8) with Agility 4 rolls 4d8 and adds them up."},
    {"title": "Melee", "text": "The attacker rolls Agility plus the weapon's attack score; the defender rolls Speed plus "
     "the shield's defence. The smaller of the two adds half the difference in size. The attacker hits only with the "
     "higher total: a tie misses. The target must be within the weapon's reach."},
    {"title": "Damage", "text": "A hit deals the weapon's damage die plus the damage modifier plus the margin of the hit. "
     "Armour takes off its protection, but only when the damage is at least as large as the protection. What is left "
     "becomes wounds; wounds equal to health put the character out of play. Unarmed or disarmed attackers roll no "
     "damage die."},
    {"title": "Missiles", "text": "A shot rolls Focus plus the missile weapon's attack score, uses the ammunition's damage "
     "die and no damage modifier, spends one round of ammunition and needs the target inside missile range."},
    {"title": "Derived numbers", "text": "Health is Stamina times size; Health 0 would mean defeated from the start, "
     "so Stamina must be at least 1. Damage modifier is (Muscle minus 3) times size, "
     "halved. Action points are Speed times size. The GM can override each one on the character sheet."},
    {"title": "Action points", "text": "Characters take turns in lineup order. An attack costs size minus 3 AP, drawing a "
     "weapon costs its weight, a move costs the GM's price per square plus the size of every opponent whose reach you "
     "leave. With at least 1 AP you may act even if it takes you below zero: the debt comes out of your next refresh. "
     "With 0 or less your turn is spent recovering your full allowance; a debt deeper than one allowance takes several "
     "such turns while the others go on. There are no shared rounds: everyone refreshes "
     "at their own moment. The timeline shows the turns to come, guessing an attack for each."},
    {"title": "Ranges", "text": "Distances count squares, diagonals as one. Melee reach is the weapon's reach (1 = the "
     "eight squares around). Missile range is the missile weapon's range. Anything farther is out of range."},
    {"title": "Option: agility-only duel", "text": "Speed and shields are ignored in melee: both sides roll Agility "
     "(plus weapon attack and size bonus) and whoever rolls higher deals damage to the other by the normal rules. Against "
     "a shot the target rolls plain Agility. Speed still sets the action points."},
    {"title": "Option: maximum damage", "text": "Damage dice are not rolled; each hit uses the die's highest face."},
    {"title": "Option: weaknesses and resistances", "text": "When a weapon's damage kind is in the target's weaknesses "
     "its die is doubled (d6 becomes d12); when it is in the resistances the die is halved (d6 becomes d3), either by "
     "rolling the smaller die or by rolling the full die and halving it, rounding up. Both at once cancel out."},
    {"title": "Option: persistent effects", "text": "A weapon or ammunition with an effect (poison, fire...) marks it on "
     "the target with every hit (or on a coin flip). The first mark adds 1 damage, the second 2, and so on, after armour. "
     "A cure (GM tool) clears the count."},
    {"title": "Option: armour wear", "text": "Each time armour takes off damage it wears by half the amount it absorbed "
     "(rounded down). When its wear reaches its weight the armour stops protecting. Use even protection scores."},
    {"title": "Option: blessings and curses", "text": "A blessed roll is rolled twice and the better total kept; a cursed "
     "roll keeps the worse. A pending blessing or curse is used up by the character's next attack or defence roll. "
     "Player characters gain a blessing when they take damage (any, or more than half their size, as chosen). Attackers "
     "marked as cursing give a curse instead. Blessed or cursed weapons and shields bless or curse every attack or "
     "defence roll. A blessing and a curse on the same roll cancel. Armour is never affected. The GM can bless or curse "
     "anyone (spells, a priest) and use luck on checks and contests."},
    {"title": "Contests and checks", "text": "A check rolls the pool three times and sums the rolls against a target: "
     "10 trivial, 20 easy, 30 routine, 40 challenging, 50 difficult, 60 unlikely, 70 impossible; reaching it succeeds. "
     "A contest rolls three times for each side and compares the sums (option: best two of three, a tie in one roll "
     "counting for nobody). The GM can run both at any time, with or without a battle, choose blessed or cursed rolls "
     "or use a character's pending blessing or curse, and give a check a price in wounds when it fails, so that it "
     "cannot simply be tried again and again."},
    {"title": "Healing", "text": "The GM removes wounds for food, rest, a healer or any other reason, cures lasting "
     "effects and repairs armour. A character healed below its health returns to play."},
]

